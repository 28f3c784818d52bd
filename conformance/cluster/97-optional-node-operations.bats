#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Optional node operations (KEP-5945, alpha in 1.37): a device published in a
# slice with skipNodeOperations ["*"] (the fake driver's virtual GPUs) is
# usable without any NodePrepareResources call: the allocation carries the
# field, the pod runs, and the container got nothing from the driver's CDI
# spec (no FAKEHW_VISIBLE_DEVICES), which only a prepare writes.
# bats file_tags=optional-node-operations

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# requires: fake-driver, gate=DRAOptionalNodeOperations
# bats test_tags=fake-only
@test "optional node operations: a device that skips node operations is usable without a prepare call" {
    require_fake_driver
    require_gate DRAOptionalNodeOperations
    local ns=$TEST_NAMESPACE slices device uuid json
    use_test_node
    slices=$(driver_slices) || return 1
    device=$(jq -r --arg p "$TEST_NODE_POOL" '[.[] | select(.spec.pool.name == $p and
        any(.spec.skipNodeOperations[]?; . == "*")) | .spec.devices[]?.name][0] // ""' <<<"$slices")
    [[ -n $device ]] ||
        skip "no slice of $CONFORMANCE_DRIVER on node $TEST_NODE skips node operations (a virtual: true device in the fakehw inventory; or the API server drops the field)"
    uuid=$(slice_device "$TEST_NODE_POOL" "$device" <<<"$slices" | device_attribute uuid)
    create_from claim-selector CLAIM=virtual CEL="$(cel_attribute_equals uuid string "$uuid")"
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=virtual AFFINITY="$(pin_to "$TEST_NODE")"
    wait_pod_ready "$ns" pod-a

    json=$(claim_json "$ns" virtual)
    jq -e --arg d "$device" 'any(.status.allocation.devices.results[]; .device == $d and
        any(.skipNodeOperations[]?; . == "*"))' <<<"$json" >/dev/null ||
        fail "the allocation of $device does not carry skipNodeOperations: $(jq -c '.status.allocation.devices.results' <<<"$json")"
    if container_env "$ns" pod-a ctr FAKEHW_VISIBLE_DEVICES >/dev/null; then
        fail "pod-a's container has FAKEHW_VISIBLE_DEVICES: the kubelet prepared the claim"
    fi
}
