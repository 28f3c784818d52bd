#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Extended resources backed by DRA (KEP-5004): a pod asks for the device
# class's extendedResourceName in resources.limits, as with a device plugin;
# the scheduler makes a claim for it from the class, and the driver prepares
# that claim like any other.  The name comes from the class
# (CONFORMANCE_DEVICE_CLASS's spec.extendedResourceName) or from
# CONFORMANCE_EXTENDED_RESOURCE_NAME.
# bats file_tags=extended-resources

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# Sets EXTENDED_RESOURCE, or skips: the gate must be on and the class must
# carry the name.
require_extended_resource() {
    require_gate DRAExtendedResource
    EXTENDED_RESOURCE=$(class_extended_resource_name "$CONFORMANCE_DEVICE_CLASS") || fail "cannot read DeviceClass $CONFORMANCE_DEVICE_CLASS"
    [[ -n $EXTENDED_RESOURCE ]] ||
        skip "DeviceClass $CONFORMANCE_DEVICE_CLASS has no spec.extendedResourceName (set one, or CONFORMANCE_EXTENDED_RESOURCE_NAME)"
}

# assert_extended_claim NS POD COUNT: the pod's claim was made by the
# scheduler for its extended resources and holds COUNT distinct devices of the
# driver on the pod's node; prints the claim name.
assert_extended_claim() {
    local claim json node
    claim=$(pod_extended_claim "$1" "$2") || return 1
    json=$(claim_json "$1" "$claim") || return 1
    jq -e '.metadata.annotations["resource.kubernetes.io/extended-resource-claim"] == "true"' <<<"$json" >/dev/null ||
        fail "claim $1/$claim lacks the annotation resource.kubernetes.io/extended-resource-claim=true" || return 1
    assert_claim_device_count "$1" "$claim" "$3" >&2 || return 1
    node=$(pod_node "$1" "$2") || return 1
    assert_devices_on_node "$node" "$(claim_devices "$1" "$claim")" >&2 || return 1
    printf '%s\n' "$claim"
}

# run_extended_pod COUNT [PARAM=VALUE...]: pod-a (with the further template
# parameters) asks for COUNT of the extended resource and runs; its claim
# holds COUNT devices, which its container sees.
run_extended_pod() {
    local ns=$TEST_NAMESPACE claim
    create_from pod-extended-resource POD=pod-a RESOURCE="$EXTENDED_RESOURCE" COUNT="$1" "${@:2}"
    wait_pod_ready "$ns" pod-a
    claim=$(assert_extended_claim "$ns" pod-a "$1") || return 1
    if is_fake_driver; then
        assert_container_sees_claim "$ns" pod-a ctr "$claim"
    fi
}

# requires: gate=DRAExtendedResource
# bats test_tags=generic
@test "extended resources: a pod asking for one gets one device, which the container sees" {
    require_extended_resource
    run_extended_pod 1
}

# requires: gate=DRAExtendedResource
# bats test_tags=generic
@test "extended resources: a pod asking for two gets two distinct devices" {
    require_extended_resource
    use_test_node
    (($(wc -l <<<"$TEST_NODE_DEVICES") >= 2)) || skip "node $TEST_NODE has fewer than 2 devices"
    run_extended_pod 2 AFFINITY="$(pin_to "$TEST_NODE")"
}

# requires: gate=DRAExtendedResource
# bats test_tags=generic
@test "extended resources: two containers of one pod each asking for one get one device each" {
    require_extended_resource
    local ns=$TEST_NAMESPACE claim ctr req seen expected pool device rest
    use_test_node
    (($(wc -l <<<"$TEST_NODE_DEVICES") >= 2)) || skip "node $TEST_NODE has fewer than 2 devices"
    create_from pod-extended-resource-two-containers POD=pod-a RESOURCE="$EXTENDED_RESOURCE" AFFINITY="$(pin_to "$TEST_NODE")"
    wait_pod_ready "$ns" pod-a
    claim=$(assert_extended_claim "$ns" pod-a 2)
    local requests=''
    for ctr in ctr-a ctr-b; do
        req=$(pod_extended_request "$ns" pod-a "$ctr") || fail "no request mapping for container $ctr"
        requests+=$req$'\n'
        # The request of each container holds exactly one device.
        assert_lines "devices of request $req (container $ctr)" 1 \
            "$(claim_results "$ns" "$claim" | awk -F'\t' -v r="$req" '$3 == r')"
        if is_fake_driver; then
            seen=$(container_gpu_uuids "$ns" pod-a "$ctr")
            IFS=$'\t' read -r pool device rest < <(claim_results "$ns" "$claim" | awk -F'\t' -v r="$req" '$3 == r')
            expected=$(device_uuid "$pool" "$device")
            assert_same "GPUs container $ctr sees" "$expected" "$seen"
        fi
    done
    assert_lines "distinct requests of the two containers" 2 "$(sort -u <<<"${requests%$'\n'}")"
}

# requires: gate=DRAExtendedResource
# bats test_tags=generic
@test "extended resources: asking for more than the node has stays pending with an event" {
    require_extended_resource
    local ns=$TEST_NAMESPACE n
    use_test_node
    n=$(wc -l <<<"$TEST_NODE_DEVICES")
    create_from pod-extended-resource POD=pod-a RESOURCE="$EXTENDED_RESOURCE" COUNT=$((n + 1)) AFFINITY="$(pin_to "$TEST_NODE")"
    # The scheduler says either that the claim cannot be allocated or, from
    # the resources fit check, "Insufficient <name>".
    CONFORMANCE_UNSCHEDULABLE_REGEX="$CONFORMANCE_UNSCHEDULABLE_REGEX|Insufficient ${EXTENDED_RESOURCE//./\\.}" \
        assert_pod_stays_pending "$ns" pod-a
}

# requires: gate=DRAExtendedResource, fake-driver, driver=gpu.nvidia.com
# bats test_tags=fake-only, nvidia-compat
@test "extended resources: the seed's nvidia.com/gpu pod runs unchanged on the nvidia-compat overlay" {
    [[ $CONFORMANCE_DRIVER == gpu.nvidia.com ]] ||
        skip "needs the nvidia-compat overlay (driver gpu.nvidia.com); the driver under test is $CONFORMANCE_DRIVER"
    require_extended_resource
    [[ $EXTENDED_RESOURCE == nvidia.com/gpu ]] ||
        skip "DeviceClass $CONFORMANCE_DEVICE_CLASS offers $EXTENDED_RESOURCE, not nvidia.com/gpu"
    local ns=$TEST_NAMESPACE claim
    create_from pod-seed-extended-resource POD=seed
    wait_pod_ready "$ns" seed
    claim=$(assert_extended_claim "$ns" seed 1)
    assert_container_sees_claim "$ns" seed container "$claim"
}
