#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Driver restart: deleting the kubelet plugin pod of a node must not disturb
# running pods (their claims stay prepared), the node's ResourceSlices come
# back with the same devices, and new claims on the node work.  Disruptive,
# hence "serial"; runs last in file order.
# bats file_tags=driver-restart

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# Succeeds when a driver pod other than $2 runs Ready on node $1.
new_driver_pod_ready() {
    local json
    json=$(kc get pods -n "$CONFORMANCE_DRIVER_NAMESPACE" -l "$CONFORMANCE_DRIVER_POD_SELECTOR" \
        --field-selector "spec.nodeName=$1" -o json) || return 1
    jq -e --arg old "$2" 'any(.items[]; .metadata.name != $old and .metadata.deletionTimestamp == null
        and any(.status.conditions[]?; .type == "Ready" and .status == "True"))' <<<"$json" >/dev/null || {
        jq -r '.items[] | "\(.metadata.name): \(.status.phase)"' <<<"$json"
        return 1
    }
}

# Succeeds when node $1 publishes exactly the devices in $2.
node_publishes() {
    local now
    now=$(driver_slices | node_devices "$1") || return 1
    [[ $now == "$2" ]] || {
        printf 'node %s publishes [%s]\n' "$1" "$(tr '\n' ' ' <<<"$now")"
        return 1
    }
}

# Waits until node $1 has a Ready driver pod again (teardown, also on failure).
await_driver_on_node() {
    wait_for "a Ready driver pod on node $1" "$CONFORMANCE_RESTART_TIMEOUT" new_driver_pod_ready "$1" "" >/dev/null
}

# requires: none
# bats test_tags=generic, serial, disruptive
@test "driver restart: running pods keep their devices, slices come back, new claims work" {
    local ns=$TEST_NAMESPACE old_pod devices
    [[ $(driver_pods_json | jq '.items | length') -gt 0 ]] ||
        skip "no driver pods in $CONFORMANCE_DRIVER_NAMESPACE with $CONFORMANCE_DRIVER_POD_SELECTOR to restart"
    use_test_node
    local affinity
    affinity=$(pin_to "$TEST_NODE")
    create_from claim-template TEMPLATE=one-gpu COUNT=1
    create_from pod POD=before CLAIM_SOURCE=resourceClaimTemplateName CLAIM=one-gpu AFFINITY="$affinity"
    wait_pod_ready "$ns" before
    local claim
    claim=$(pod_claim_name "$ns" before gpu)
    devices=$(claim_devices "$ns" "$claim")

    old_pod=$(driver_pod_on_node "$TEST_NODE")
    defer await_driver_on_node "$TEST_NODE"
    kc delete pod -n "$CONFORMANCE_DRIVER_NAMESPACE" "$old_pod" --wait=false >/dev/null
    wait_for "a new driver pod on $TEST_NODE to be Ready" "$CONFORMANCE_RESTART_TIMEOUT" \
        new_driver_pod_ready "$TEST_NODE" "$old_pod" >/dev/null
    wait_for "node $TEST_NODE to publish its devices again" "$CONFORMANCE_RESTART_TIMEOUT" \
        node_publishes "$TEST_NODE" "$TEST_NODE_DEVICES" >/dev/null

    # The running pod is untouched: Ready, not restarted, same claim and devices.
    pod_is_ready "$ns" before >/dev/null || fail "pod before is no longer Ready after the driver restart"
    assert_same "restarts of the running container" 0 "$(container_restarts "$ns" before ctr)"
    assert_same "devices of the running pod's claim" "$devices" "$(claim_devices "$ns" "$claim")"
    assert_claim_reserved_for "$ns" "$claim" before
    # Not checked: fakegpu-smi inside the running container.  The fake driver
    # runs fakehw in the plugin's pod, so deleting that pod ends the FUSE tree
    # the running container had mounted (docs/install.md); real GPUs do not
    # vanish with their driver, and a driver under test keeps its devices.

    # The restarted driver prepares new claims and unprepares old ones.
    create_from pod POD=after CLAIM_SOURCE=resourceClaimTemplateName CLAIM=one-gpu AFFINITY="$affinity"
    wait_pod_ready "$ns" after
    if is_fake_driver; then
        assert_container_sees_claim "$ns" after ctr "$(pod_claim_name "$ns" after gpu)"
    fi
    delete_pod "$ns" before
    wait_gone pod -n "$ns" before
    wait_gone resourceclaim -n "$ns" "$claim"
}
