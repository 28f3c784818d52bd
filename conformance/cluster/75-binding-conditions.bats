#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Device binding conditions (KEP-5007) with the fake driver's attachable
# GPUs: the scheduler holds a pod whose claim got such a device until the
# driver reports the device attached (the condition <driver>/attached True
# in the claim's status.devices), and starts over when the driver reports
# <driver>/attach-failed.  Needs a device with bindingConditions on the test
# node: an `attach:` entry in the fakehw inventory (manifests/base/fakehw.yaml
# gives the kind worker one).  The failure test scripts fakehw, hence serial.
# bats file_tags=binding-conditions

load lib/helpers

# The serial scenarios here all need the node with an attachable device: with JOBS > 1
# they run one at a time, so the other job runs another file's scenarios
# instead of waiting for this node's lock.
setup_file() { export BATS_NO_PARALLELIZE_WITHIN_FILE=true; }
setup() { scenario_setup; }
teardown() { scenario_teardown; }

# Picks an attachable device on the test node: sets BC_DEVICE, BC_UUID and
# BC_POOL, or skips when there is none.
pick_attachable_device() {
    use_test_node '(.bindingConditions // []) | length > 0'
    local slices
    slices=$(driver_slices) || return 1
    BC_POOL=$TEST_NODE_POOL
    BC_DEVICE=$(jq -r --arg p "$BC_POOL" '[.[] | select(.spec.pool.name == $p) | .spec.devices[]?
        | select((.bindingConditions // []) | length > 0) | .name][0] // ""' <<<"$slices")
    [[ -n $BC_DEVICE ]] ||
        skip "no device of $CONFORMANCE_DRIVER on node $TEST_NODE has bindingConditions (an attach: entry in the fakehw inventory; or the API server drops the field)"
    BC_UUID=$(slice_device "$BC_POOL" "$BC_DEVICE" <<<"$slices" | device_attribute uuid)
    [[ -n $BC_UUID ]] || fail "device $BC_POOL/$BC_DEVICE has no uuid attribute"
}

# claim_condition_time NS CLAIM DEVICE TYPE: lastTransitionTime of condition
# TYPE of DEVICE when it is True; fails otherwise.
claim_condition_time() {
    local json
    json=$(claim_json "$1" "$2") || return 1
    jq -er --arg dev "$3" --arg t "$4" '[.status.devices[]? | select(.device == $dev) | .conditions[]?
        | select(.type == $t and .status == "True") | .lastTransitionTime][0] // error("no \($t) True for \($dev): \(.status.devices // [] | tostring)")' <<<"$json"
}

# pod_scheduled_time NS POD: lastTransitionTime of PodScheduled True.
pod_scheduled_time() {
    pod_json "$1" "$2" | jq -er '[.status.conditions[]? | select(.type == "PodScheduled" and .status == "True") | .lastTransitionTime][0] // error("not scheduled")'
}

# pod_event NS POD REGEX: an event of the pod whose reason or message matches.
pod_event() {
    local json
    json=$(kc get events -n "$1" --field-selector "involvedObject.kind=Pod,involvedObject.name=$2" -o json) || return 1
    jq -er --arg re "$3" '[.items[] | "\(.reason): \(.message)" | select(test($re))][0] // error("no event matching \($re)")' <<<"$json"
}

# device_attach NODE DEVICE: the device's attach state in fakehw.
device_attach() {
    fakehw_on_node "$1" cat "$CONFORMANCE_FAKEHW_MOUNT/devices/$2/attach"
}

# attach_is NODE DEVICE STATE
attach_is() {
    local now
    now=$(device_attach "$1" "$2") || return 1
    [[ $now == "$3" ]] || {
        echo "$2 on $1 is $now"
        return 1
    }
}

# requires: fake-driver, gate=DRADeviceBindingConditions, gate=DRAResourceClaimDeviceStatus
# bats test_tags=fake-only
@test "binding conditions: a pod whose claim needs an attachable GPU waits unbound until it is attached, then runs" {
    require_fake_driver
    require_gate DRADeviceBindingConditions
    require_gate DRAResourceClaimDeviceStatus
    local ns=$TEST_NAMESPACE attached scheduled
    pick_attachable_device
    create_from claim-selector CLAIM=attach-me CEL="$(cel_attribute_equals uuid string "$BC_UUID")"
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=attach-me AFFINITY="$(pin_to "$TEST_NODE")"
    wait_pod_ready "$ns" pod-a

    attached=$(claim_condition_time "$ns" attach-me "$BC_DEVICE" "$CONFORMANCE_DRIVER/attached") ||
        fail "claim attach-me: $attached"
    scheduled=$(pod_scheduled_time "$ns" pod-a) || fail "pod-a: $scheduled"
    # RFC 3339 UTC compares as text: bound no earlier than attached.
    [[ ! $scheduled < $attached ]] ||
        fail "pod-a was bound at $scheduled, before $BC_DEVICE was reported attached at $attached"
    run pod_event "$ns" pod-a '^BindingConditionsPending:'
    [[ $status == 0 ]] || fail "pod-a has no BindingConditionsPending event from the scheduler: $output"
    assert_same "fakehw attach state of $BC_DEVICE" attached "$(device_attach "$TEST_NODE" "$BC_DEVICE")"
}

# requires: fake-driver, gate=DRADeviceBindingConditions, gate=DRAResourceClaimDeviceStatus
# bats test_tags=fake-only, serial
@test "binding conditions: a scripted attach failure makes the scheduler release the allocation; the retry attaches and runs" {
    require_fake_driver
    require_gate DRADeviceBindingConditions
    require_gate DRAResourceClaimDeviceStatus
    local ns=$TEST_NAMESPACE out
    pick_attachable_device
    # The device must be free and detached for the script to bite.
    wait_for "$BC_DEVICE detached" "$CONFORMANCE_TIMEOUT" attach_is "$TEST_NODE" "$BC_DEVICE" detached >/dev/null
    defer fakehw_on_node "$TEST_NODE" sh -c "echo 'fail never' >$CONFORMANCE_FAKEHW_MOUNT/devices/$BC_DEVICE/attach"
    out=$(fakehw_on_node "$TEST_NODE" sh -c "echo 'fail next' >$CONFORMANCE_FAKEHW_MOUNT/devices/$BC_DEVICE/attach" 2>&1) ||
        fail "scripting the attach failure $(fakehw_where "$TEST_NODE"): $out"

    create_from claim-selector CLAIM=fail-once CEL="$(cel_attribute_equals uuid string "$BC_UUID")"
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=fail-once AFFINITY="$(pin_to "$TEST_NODE")"
    wait_for "a scheduling event about the binding failure of pod-a" "$CONFORMANCE_TIMEOUT" \
        pod_event "$ns" pod-a 'binding failed|attach-failed' >/dev/null
    wait_pod_ready "$ns" pod-a
    claim_condition_time "$ns" fail-once "$BC_DEVICE" "$CONFORMANCE_DRIVER/attached" >/dev/null ||
        fail "claim fail-once has no attached condition after the retry"
    assert_same "scripted failure used up" never \
        "$(fakehw_on_node "$TEST_NODE" cat "$CONFORMANCE_FAKEHW_MOUNT/devices/$BC_DEVICE/attachFailure")"
}

# Runs when CONFORMANCE_BINDING_TIMEOUT_SECONDS gives the scheduler's
# bindingTimeout (docs/conformance.md, "Binding timeout"): the default, 600 s,
# is too long for a routine run.
# requires: fake-driver, gate=DRADeviceBindingConditions, gate=DRAResourceClaimDeviceStatus
# bats test_tags=fake-only, serial
@test "binding conditions: an attach that outlasts the scheduler's binding timeout releases the allocation; the pod is retried" {
    [[ -n $CONFORMANCE_BINDING_TIMEOUT_SECONDS ]] ||
        skip "the scheduler's binding timeout is unknown: run with CONFORMANCE_BINDING_TIMEOUT_SECONDS set to its DynamicResources bindingTimeout (docs/conformance.md, \"Binding timeout\")"
    require_fake_driver
    require_gate DRADeviceBindingConditions
    require_gate DRAResourceClaimDeviceStatus
    local ns=$TEST_NAMESPACE limit=$CONFORMANCE_BINDING_TIMEOUT_SECONDS first second out delay
    pick_attachable_device
    wait_for "$BC_DEVICE detached" "$CONFORMANCE_TIMEOUT" attach_is "$TEST_NODE" "$BC_DEVICE" detached >/dev/null
    # An attach that takes far longer than the timeout: fakehw's delay, set
    # at run time and put back afterwards.
    delay=$(fakehw_on_node "$TEST_NODE" cat "$CONFORMANCE_FAKEHW_MOUNT/devices/$BC_DEVICE/attachDelayMs" 2>&1) ||
        fail "reading the attach delay of $BC_DEVICE $(fakehw_where "$TEST_NODE"): $delay (a fakehw without run-time delays?)"
    defer fakehw_on_node "$TEST_NODE" "$CONFORMANCE_FAKEHW_BIN" attach --mount "$CONFORMANCE_FAKEHW_MOUNT" "$BC_DEVICE" delay "${delay}ms"
    out=$(fakehw_on_node "$TEST_NODE" "$CONFORMANCE_FAKEHW_BIN" attach --mount "$CONFORMANCE_FAKEHW_MOUNT" \
        "$BC_DEVICE" delay "$((limit * 10 + 3600))s" 2>&1) ||
        fail "setting the attach delay of $BC_DEVICE $(fakehw_where "$TEST_NODE"): $out"

    create_from claim-selector CLAIM=slow-attach CEL="$(cel_attribute_equals uuid string "$BC_UUID")"
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=slow-attach AFFINITY="$(pin_to "$TEST_NODE")"
    first=$(wait_for "claim slow-attach allocated" "$CONFORMANCE_TIMEOUT" allocation_time "$ns" slow-attach) ||
        fail "$first"
    wait_for "$BC_DEVICE attaching" "$CONFORMANCE_TIMEOUT" attach_is "$TEST_NODE" "$BC_DEVICE" attaching >/dev/null
    # Held: allocated, waiting in PreBind, not bound.
    out=$(pod_unbound "$ns" pod-a) || fail "$out while $BC_DEVICE is still attaching"
    wait_for "a BindingConditionsPending event of pod-a" "$CONFORMANCE_TIMEOUT" \
        pod_event "$ns" pod-a '^BindingConditionsPending:' >/dev/null

    # After the timeout, counted from allocationTimestamp, the scheduler gives
    # the allocation up and schedules the pod again: a new allocation.
    second=$(wait_for "a new allocation of claim slow-attach after the binding timeout ($limit s)" \
        "$((limit + CONFORMANCE_TIMEOUT))" allocated_after "$ns" slow-attach "$first") || fail "$second"
    ((second - first >= limit)) ||
        fail "claim slow-attach was allocated again $((second - first)) s after its first allocation, before the binding timeout of $limit s"
    out=$(pod_unbound "$ns" pod-a) || fail "$out although $BC_DEVICE never finished attaching"
    wait_for "a scheduling event about the binding timeout of pod-a" "$CONFORMANCE_TIMEOUT" \
        pod_event "$ns" pod-a 'binding timeout' >/dev/null

    # The device attaches now: the retry binds and runs.
    out=$(fakehw_on_node "$TEST_NODE" "$CONFORMANCE_FAKEHW_BIN" attach --mount "$CONFORMANCE_FAKEHW_MOUNT" "$BC_DEVICE" delay 0 2>&1) &&
        out=$(fakehw_on_node "$TEST_NODE" "$CONFORMANCE_FAKEHW_BIN" attach --mount "$CONFORMANCE_FAKEHW_MOUNT" "$BC_DEVICE" detach 2>&1) ||
        fail "ending the slow attach of $BC_DEVICE $(fakehw_where "$TEST_NODE"): $out"
    wait_pod_ready "$ns" pod-a
    claim_condition_time "$ns" slow-attach "$BC_DEVICE" "$CONFORMANCE_DRIVER/attached" >/dev/null ||
        fail "claim slow-attach has no attached condition after the retry"
}
