#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Device health with the fake driver: a device flipped unhealthy in fakehw
# gets the <driver>/unhealthy NoSchedule taint in its slice, an Unhealthy
# entry in the pod's allocatedResourcesStatus and a Ready=False condition in
# the claim's device status; new claims avoid it; recovery undoes all of it.
# Flips change a node's devices for everyone, hence "serial"; teardown flips
# the device back even when a test fails.
# bats file_tags=health

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# A pod "victim" on the test node holding one device, from claim "victim"
# (start_victim template: from a claim generated from template "victim"):
# sets VICTIM_CLAIM, VICTIM_POOL and VICTIM_DEVICE.
start_victim() {
    local rest source=resourceClaimName
    use_test_node
    if [[ ${1:-} == template ]]; then
        create_from claim-template TEMPLATE=victim COUNT=1
        source=resourceClaimTemplateName
    else
        create_from claim CLAIM=victim COUNT=1
    fi
    create_from pod POD=victim CLAIM_SOURCE=$source CLAIM=victim AFFINITY="$(pin_to "$TEST_NODE")"
    wait_pod_ready "$TEST_NAMESPACE" victim
    VICTIM_CLAIM=$(pod_claim_name "$TEST_NAMESPACE" victim gpu) || fail "pod victim has no claim gpu"
    IFS=$'\t' read -r VICTIM_POOL VICTIM_DEVICE rest < <(claim_results "$TEST_NAMESPACE" "$VICTIM_CLAIM")
    [[ -n $VICTIM_DEVICE ]] || fail "claim $VICTIM_CLAIM has no device"
}

# claim_device_ready NS CLAIM POOL DEVICE True|False: the device's Ready
# condition in the claim status has that status (False must carry the reason).
claim_device_ready() {
    local json
    json=$(claim_json "$1" "$2") || return 1
    jq -e --arg p "$3" --arg dev "$4" --arg s "$5" --arg why "XID 79" '
        any(.status.devices[]? | select(.pool == $p and .device == $dev) | .conditions[]?;
            .type == "Ready" and .status == $s and
            ($s == "True" or ("\(.reason // "") \(.message // "")" | contains($why))))' <<<"$json" >/dev/null || {
        printf 'claim %s device status: %s\n' "$2" "$(jq -c '.status.devices // []' <<<"$json")"
        return 1
    }
}

# requires: gate=DRADeviceTaints
# bats test_tags=fake-only, serial
@test "health: an unhealthy device gets the NoSchedule taint, its pod keeps running, recovery removes it" {
    require_gate DRADeviceTaints
    start_victim
    flip_unhealthy "$TEST_NODE" "$VICTIM_DEVICE"
    wait_for "taint $(unhealthy_taint_key) on $VICTIM_POOL/$VICTIM_DEVICE" "$CONFORMANCE_HEALTH_TIMEOUT" \
        device_has_unhealthy_taint "$VICTIM_POOL" "$VICTIM_DEVICE" >/dev/null
    pod_is_ready "$TEST_NAMESPACE" victim >/dev/null ||
        fail "a NoSchedule taint must not stop the pod that already uses the device"

    fakehw_flip "$TEST_NODE" "$VICTIM_DEVICE" healthy
    wait_for "the taint on $VICTIM_POOL/$VICTIM_DEVICE to go" "$CONFORMANCE_HEALTH_TIMEOUT" \
        device_has_no_unhealthy_taint "$VICTIM_POOL" "$VICTIM_DEVICE" >/dev/null
}

# requires: none
# bats test_tags=fake-only, serial
@test "health: a new claim avoids an unhealthy device and gets it after recovery" {
    local ns=$TEST_NAMESPACE device uuid tree
    # A device the class gives out (not every device of the node is in it:
    # the nvidia personality's gpu.nvidia.com has no MIG devices), free
    # again once the pod that showed it is gone.
    start_victim
    device=$VICTIM_DEVICE
    delete_pod "$ns" victim
    kc delete resourceclaim -n "$ns" victim --wait=false >/dev/null
    wait_gone pod -n "$ns" victim
    wait_gone resourceclaim -n "$ns" victim
    uuid=$(device_uuid "$VICTIM_POOL" "$device")
    tree=$(fakehw_device "$TEST_NODE" "$VICTIM_POOL" "$device") || return 1
    flip_unhealthy "$TEST_NODE" "$tree" "$device"
    wait_for "the driver to mark $TEST_NODE_POOL/$device unhealthy (taint or withdrawal)" \
        "$CONFORMANCE_HEALTH_TIMEOUT" device_marked_unhealthy "$TEST_NODE_POOL" "$device" >/dev/null

    create_from claim-selector CLAIM=wants-it CEL="$(cel_attribute_equals uuid string "$uuid")"
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=wants-it
    assert_pod_stays_pending "$ns" pod-a
    claim_is_unallocated "$ns" wants-it

    fakehw_flip "$TEST_NODE" "$tree" healthy
    wait_for "$TEST_NODE_POOL/$device to be published healthy again" "$CONFORMANCE_HEALTH_TIMEOUT" \
        device_back_to_healthy "$TEST_NODE_POOL" "$device" >/dev/null
    wait_pod_ready "$ns" pod-a
    assert_same "device of claim wants-it" "$TEST_NODE_POOL"$'\t'"$device" "$(claim_devices "$ns" wants-it)"
}

# requires: gate=DRAResourceClaimDeviceStatus, param=CONFORMANCE_DEVICE_STATUS
# bats test_tags=fake-only, serial
@test "health: the claim's device status turns Ready=False with the reason, and back to True" {
    require_gate DRAResourceClaimDeviceStatus
    require_param CONFORMANCE_DEVICE_STATUS "report ResourceClaim device status"
    start_victim
    flip_unhealthy "$TEST_NODE" "$VICTIM_DEVICE"
    wait_for "condition Ready=False on $VICTIM_DEVICE in claim victim" "$CONFORMANCE_HEALTH_TIMEOUT" \
        claim_device_ready "$TEST_NAMESPACE" victim "$VICTIM_POOL" "$VICTIM_DEVICE" False >/dev/null

    fakehw_flip "$TEST_NODE" "$VICTIM_DEVICE" healthy
    wait_for "condition Ready=True on $VICTIM_DEVICE in claim victim" "$CONFORMANCE_HEALTH_TIMEOUT" \
        claim_device_ready "$TEST_NAMESPACE" victim "$VICTIM_POOL" "$VICTIM_DEVICE" True >/dev/null
}

# requires: minor=35, gate=ResourceHealthStatus
# bats test_tags=fake-only, serial
@test "health: the pod's allocatedResourcesStatus turns Unhealthy, and Healthy after recovery" {
    # The 1.34 kubelet (pkg/kubelet/cm/dra/manager.go, UpdateAllocatedResourcesStatus)
    # matches the container's pod-claim name against the ResourceClaim's own
    # name, so it never reports a generated claim; 1.35 looks the claim up in
    # the pod's status.resourceClaimStatuses.  Seen on a real 1.34.4 kubelet.
    require_server_minor 35
    require_gate ResourceHealthStatus
    # A generated claim: the kubelet (1.35 at least) finds a container's claim
    # through the pod's status.resourceClaimStatuses, which lists generated
    # claims only, and reports nothing for a claim the pod names directly.
    start_victim template
    flip_unhealthy "$TEST_NODE" "$VICTIM_DEVICE"
    wait_for "allocatedResourcesStatus Unhealthy in pod victim" "$CONFORMANCE_HEALTH_TIMEOUT" \
        pod_device_health "$TEST_NAMESPACE" victim ctr Unhealthy >/dev/null

    fakehw_flip "$TEST_NODE" "$VICTIM_DEVICE" healthy
    wait_for "allocatedResourcesStatus Healthy in pod victim" "$CONFORMANCE_HEALTH_TIMEOUT" \
        pod_device_health "$TEST_NAMESPACE" victim ctr Healthy >/dev/null
}

# requires: minor=35, gate=DRADeviceTaints, gate=ResourceHealthStatus
# bats test_tags=fake-only, serial
@test "health: a fatal XID taints the device and marks the pod Unhealthy, an ignored one does not; clearing undoes it" {
    # 1.35: a taint with effect None (an ignored XID in the nvidia
    # personality), and the kubelet's report of a generated claim (above).
    require_server_minor 35
    require_gate DRADeviceTaints
    require_gate ResourceHealthStatus
    start_victim template
    fakehw_on_node "$TEST_NODE" test -e "$CONFORMANCE_FAKEHW_MOUNT/devices/$VICTIM_DEVICE/xid" ||
        skip "fakehw on $TEST_NODE has no xid files (a fakehw without XIDs)"
    local ns=$TEST_NAMESPACE key value effect
    # XID 79, "GPU has fallen off the bus": fatal.
    read -r key value effect < <(xid_taint fatal 79)
    fakehw_xid "$TEST_NODE" "$VICTIM_DEVICE" 79
    wait_for "taint $key=$value:$effect on $VICTIM_POOL/$VICTIM_DEVICE" "$CONFORMANCE_HEALTH_TIMEOUT" \
        device_has_taint "$VICTIM_POOL" "$VICTIM_DEVICE" "$key" "$value" "$effect" >/dev/null
    wait_for "allocatedResourcesStatus Unhealthy in pod victim" "$CONFORMANCE_HEALTH_TIMEOUT" \
        pod_device_health "$ns" victim ctr Unhealthy >/dev/null
    [[ $effect == NoExecute ]] || pod_is_ready "$ns" victim >/dev/null ||
        fail "a $effect taint must not stop the pod that already uses the device"
    fakehw_xid "$TEST_NODE" "$VICTIM_DEVICE" --clear
    wait_for "the XID taint on $VICTIM_POOL/$VICTIM_DEVICE to go" "$CONFORMANCE_HEALTH_TIMEOUT" \
        device_has_no_taint "$VICTIM_POOL" "$VICTIM_DEVICE" "$key" >/dev/null
    wait_for "allocatedResourcesStatus Healthy in pod victim" "$CONFORMANCE_HEALTH_TIMEOUT" \
        pod_device_health "$ns" victim ctr Healthy >/dev/null

    # XID 13, "Graphics Engine Exception": an application's fault, ignored.
    fakehw_xid "$TEST_NODE" "$VICTIM_DEVICE" 13
    if read -r key value effect < <(xid_taint ignored 13); then
        wait_for "taint $key=$value:$effect on $VICTIM_POOL/$VICTIM_DEVICE" "$CONFORMANCE_HEALTH_TIMEOUT" \
            device_has_taint "$VICTIM_POOL" "$VICTIM_DEVICE" "$key" "$value" "$effect" >/dev/null
    fi
    holds_for "pod victim's device to stay Healthy with an ignored XID" "$CONFORMANCE_PENDING_SECONDS" \
        pod_device_health "$ns" victim ctr Healthy
    device_has_no_taint "$VICTIM_POOL" "$VICTIM_DEVICE" "$(unhealthy_taint_key)" >/dev/null ||
        fail "an ignored XID must not mark $VICTIM_POOL/$VICTIM_DEVICE unhealthy"
}
