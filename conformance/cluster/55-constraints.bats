#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Constraints across the devices of a request: matchAttribute (fully
# qualified name) makes all allocated devices share the attribute's value.
# bats file_tags=constraints

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# requires: none
# bats test_tags=generic
@test "constraints: matchAttribute gives two devices with the same attribute value" {
    local ns=$TEST_NAMESPACE attr=$CONFORMANCE_SELECTOR_ATTRIBUTE slices
    slices=$(driver_slices)
    local agree
    agree=$(count_agreeing_groups "$attr" <<<"$slices")
    ((agree > 0)) || skip "no node has two devices with the same $attr"

    create_from claim-match-attribute CLAIM=matched COUNT=2 ATTRIBUTE="$(qualified_name "$attr")"
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=matched
    wait_pod_ready "$ns" pod-a

    assert_claim_device_count "$ns" matched 2
    local pool device values=''
    while IFS=$'\t' read -r pool device; do
        values+=$(slice_device "$pool" "$device" <<<"$slices" | device_attribute "$attr")$'\n'
    done < <(claim_devices "$ns" matched)
    assert_lines "distinct $attr values among the allocated devices" 1 "$(sort -u <<<"$values")"
}

# requires: none
# bats test_tags=generic
@test "constraints: matchAttribute on an attribute unique per device stays pending" {
    local ns=$TEST_NAMESPACE attr=$CONFORMANCE_UNIQUE_ATTRIBUTE
    local unique
    unique=$(driver_slices | attribute_unique "$attr")
    [[ $unique == true ]] ||
        skip "attribute $attr is not present and unique on every device (CONFORMANCE_UNIQUE_ATTRIBUTE)"

    create_from claim-match-attribute CLAIM=impossible COUNT=2 ATTRIBUTE="$(qualified_name "$attr")"
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=impossible
    assert_pod_stays_pending "$ns" pod-a
    claim_is_unallocated "$ns" impossible
}
