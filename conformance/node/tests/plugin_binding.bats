#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Device binding conditions (KEP-5007) with attachable fake GPUs: the plugin
# publishes bindsToNode, bindingConditions and bindingFailureConditions for
# them, asks fakehw to attach a device once a claim is allocated to it, and
# reports the outcome as a condition in the claim's status.devices, which is
# what the scheduler waits for before it binds the pod (docs/driver.md,
# "Binding conditions").  Here the test plays the scheduler: it writes the
# allocation (with the binding conditions copied from the slice) and reads
# the conditions back.
# shellcheck disable=SC2016,SC2154 # jq filters; $output comes from run

load ../lib/node_suite
load ../lib/binding

@test "binding: attachable devices are published with bindsToNode and both condition lists; plain ones without [fakehw]" {
    binding_node
    run -0 slices '[.[].spec.devices[] | {name, bindsToNode, bindingConditions, bindingFailureConditions}] | sort_by(.name) | .[]'
    assert_line --index 0 '{"name":"gpu-0","bindsToNode":null,"bindingConditions":null,"bindingFailureConditions":null}'
    assert_line --index 1 "{\"name\":\"gpu-1\",\"bindsToNode\":true,\"bindingConditions\":[\"$ATTACHED\"],\"bindingFailureConditions\":[\"$FAILED\"]}"
    assert_line --index 2 "{\"name\":\"gpu-2\",\"bindsToNode\":true,\"bindingConditions\":[\"$ATTACHED\"],\"bindingFailureConditions\":[\"$FAILED\"]}"
}

@test "binding: an allocation makes the plugin attach the device, then set the attached condition; others' status stays [fakehw]" {
    binding_node
    claim_create c1
    assert_equal "$(device_attr gpu-1 attach)" detached
    # Allocated with another driver's device, whose entry in status.devices
    # comes first and must survive every write of the plugin.
    local nic='{"request":"gpu","driver":"nic.example.com","pool":"p","device":"eth0"}'
    api PATCH "$RESOURCE_API/namespaces/$NODE_NS/resourceclaims/c1/status" \
        "{\"status\":{\"allocation\":{\"allocationTimestamp\":\"2026-11-26T03:00:00Z\",\"devices\":{\"results\":$(bound_results gpu-1 | jq -c --argjson n "$nic" '[$n] + .')}},
          \"devices\":[{\"driver\":\"nic.example.com\",\"pool\":\"p\",\"device\":\"eth0\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"Up\",\"message\":\"\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}]}}" >/dev/null
    wait_for 5 "gpu-1 attaching" attach_is gpu-1 attaching
    # fakehw takes 1s: no condition before that.
    assert_equal "$(conditions c1 gpu-1)" ""
    wait_for 10 "gpu-1 attached" attach_is gpu-1 attached
    wait_for 10 "claim c1: $ATTACHED True" conditions_are c1 gpu-1 "$ATTACHED True Attached"
    run -0 claim_get c1
    assert_equal "$(jq -r '.status.devices[0].device' <<<"$output")" eth0
    assert_equal "$(jq -r --arg t "$ATTACHED" '.status.devices[1].conditions[] | select(.type == $t) | .message' <<<"$output")" \
        "fakehw attached gpu-1"
    # The device is prepared like any other, and the claim-status writer
    # adds Ready next to the binding condition without losing it.
    run -0 prepare_claims "$(ref c1)"
    wait_for 5 "claim c1: Ready and attached" conditions_are c1 gpu-1 "Ready True DeviceHealthy
$ATTACHED True Attached"
    assert_equal "$(claim_get c1 | jq -r '.status.devices[0].device')" eth0
    run -0 unprepare_claims "$(ref c1)"
    # Deleting the claim frees the device: the plugin detaches it.
    claim_delete c1
    wait_for 5 "gpu-1 detached" attach_is gpu-1 detached
    plugin_alive
}

@test "binding: a scripted failure sets attach-failed; the next allocation is attached anew [fakehw]" {
    binding_node
    claim_create c2
    allocate c2 gpu-2 2026-11-26T03:00:00Z
    wait_for 10 "claim c2: $FAILED True" conditions_are c2 gpu-2 "$FAILED True AttachFailed"
    assert_equal "$(device_attr gpu-2 attach)" failed
    run -0 claim_get c2
    assert_equal "$(jq -r --arg t "$FAILED" '.status.devices[0].conditions[] | select(.type == $t) | .message' <<<"$output")" \
        "fakehw could not attach gpu-2"
    # The scheduler gives the allocation up: nothing holds gpu-2 any more.
    deallocate c2
    wait_for 5 "gpu-2 detached" attach_is gpu-2 detached
    # The pod is scheduled again, to the same device: this time it attaches.
    allocate c2 gpu-2 2026-11-26T03:01:00Z
    wait_for 10 "claim c2: $ATTACHED True" conditions_are c2 gpu-2 "$ATTACHED True Attached"
    assert_equal "$(device_attr gpu-2 attach)" attached
}

@test "binding: an allocation without binding conditions is left alone [fakehw]" {
    binding_node
    claim_new c3 gpu-0
    claim_create c4
    claim_allocate_results c4 "$(results gpu=gpu-1)"
    # Give the binder every chance to act, then check it did not.
    sleep 1
    assert_equal "$(device_attr gpu-1 attach)" detached
    assert_equal "$(conditions c3 gpu-0)" ""
    assert_equal "$(conditions c4 gpu-1)" ""
}

@test "binding: prepare of a device allocated with binding conditions waits for its attach; without them it is prepared as before [fakehw]" {
    binding_node
    # gpu-2's attaches all fail: the plugin's own attach leaves it failed.
    run -0 "$NODE_BIN/fakehw" attach --mount "$MNT" gpu-2 fail always
    claim_create c5
    allocate c5 gpu-2 2026-11-26T03:00:00Z
    wait_for 10 "claim c5: $FAILED True" conditions_are c5 gpu-2 "$FAILED True AttachFailed"
    # A kubelet that prepares anyway (the scheduler did not wait): refused,
    # naming the claim, the device and its attach state; nothing written.
    run -1 prepare_claims "$(ref c5)"
    assert_line --regexp "^claim=${CLAIM_UIDS[c5]} error=.*$NODE_NS/c5.*device gpu-2 is failed, not attached, but was allocated with binding condition $ATTACHED"
    run -0 files_mentioning "$CDI_ROOT" "${CLAIM_UIDS[c5]}"
    assert_output ""
    # Once the device is attached the kubelet's retry succeeds.
    run -0 "$NODE_BIN/fakehw" attach --mount "$MNT" gpu-2 fail never
    run -0 "$NODE_BIN/fakehw" attach --mount "$MNT" gpu-2 attach
    assert_output "gpu-2: attached (attachFailure never, attachDelayMs 0)"
    wait_for 10 "claim c5 prepared" prepare_claims "$(ref c5)"
    run -0 unprepare_claims "$(ref c5)"
    # No binding conditions in the result (a scheduler with the gate off):
    # a detached attachable device is prepared as before.
    claim_create c6
    claim_allocate_results c6 "$(results gpu=gpu-1)"
    assert_equal "$(device_attr gpu-1 attach)" detached
    run -0 prepare_claims "$(ref c6)"
    assert_line --regexp "^claim=${CLAIM_UIDS[c6]} pool=$POOL device=gpu-1"
    plugin_alive
}
