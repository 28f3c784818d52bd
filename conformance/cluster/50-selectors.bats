#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# CEL selectors in a claim narrow the class: on an attribute, on a capacity
# with a quantity comparison, and a selector nothing matches keeps the pod
# pending.  The attribute and capacity come from the driver's own devices
# (CONFORMANCE_SELECTOR_ATTRIBUTE / CONFORMANCE_SELECTOR_CAPACITY).
# bats file_tags=selectors

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# A device of the test node to take values from: sets DEVICE (its JSON).
pick_sample_device() {
    use_test_node
    DEVICE=$(driver_slices | slice_device "$TEST_NODE_POOL" "$(head -n 1 <<<"$TEST_NODE_DEVICES")")
}

# requires: none
# bats test_tags=generic
@test "selectors: a CEL selector on an attribute picks a device with that value" {
    local ns=$TEST_NAMESPACE attr=$CONFORMANCE_SELECTOR_ATTRIBUTE type value got pool device rest
    pick_sample_device
    type=$(device_attribute_type "$attr" <<<"$DEVICE") ||
        skip "the driver's devices have no attribute $attr (CONFORMANCE_SELECTOR_ATTRIBUTE)"
    value=$(device_attribute "$attr" <<<"$DEVICE")
    create_from claim-selector CLAIM=by-attribute CEL="$(cel_attribute_equals "$attr" "$type" "$value")"
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=by-attribute
    wait_pod_ready "$ns" pod-a

    assert_claim_device_count "$ns" by-attribute 1
    IFS=$'\t' read -r pool device rest < <(claim_results "$ns" by-attribute)
    got=$(driver_slices | slice_device "$pool" "$device" | device_attribute "$attr")
    assert_same "$attr of the allocated device $pool/$device" "$value" "$got"
}

# requires: none
# bats test_tags=generic
@test "selectors: a quantity comparison on a capacity picks a device with enough of it" {
    local ns=$TEST_NAMESPACE cap=$CONFORMANCE_SELECTOR_CAPACITY quantity got pool device rest cel
    pick_sample_device
    quantity=$(device_capacity "$cap" <<<"$DEVICE") ||
        skip "the driver's devices have no capacity $cap (CONFORMANCE_SELECTOR_CAPACITY)"
    cel="$(cel_guarded capacity "$cap").compareTo(quantity(\"$quantity\")) >= 0"
    create_from claim-selector CLAIM=by-capacity CEL="$cel"
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=by-capacity
    wait_pod_ready "$ns" pod-a

    assert_claim_device_count "$ns" by-capacity 1
    IFS=$'\t' read -r pool device rest < <(claim_results "$ns" by-capacity)
    got=$(driver_slices | slice_device "$pool" "$device" | device_capacity "$cap")
    [[ $(quantity_cmp "$got" "$quantity") -ge 0 ]] ||
        fail "the allocated device $pool/$device has $cap $got, less than the $quantity the selector asked for"
}

# requires: none
# bats test_tags=generic
@test "selectors: a selector no device matches stays pending with a scheduling event" {
    local ns=$TEST_NAMESPACE attr=$CONFORMANCE_SELECTOR_ATTRIBUTE
    create_from claim-selector CLAIM=no-match \
        CEL="$(cel_attribute_equals "$attr" string "conformance-no-such-value")"
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=no-match

    assert_pod_stays_pending "$ns" pod-a
    claim_is_unallocated "$ns" no-match
}
