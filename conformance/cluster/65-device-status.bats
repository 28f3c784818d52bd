#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# ResourceClaim device status: the driver reports per-device entries in
# status.devices (conditions, data) for the devices it prepared.  Optional for
# drivers: CONFORMANCE_DEVICE_STATUS says whether the driver under test does.
# bats file_tags=device-status

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# Succeeds when every allocated device of the driver has a status entry with
# conditions or data; prints the entries.
devices_reported() {
    local json
    json=$(claim_json "$1" "$2") || return 1
    jq -e --arg d "$CONFORMANCE_DRIVER" '
        [.status.allocation.devices.results[]? | select(.driver == $d)] as $alloc
        | [.status.devices[]? | select(.driver == $d)] as $st
        | ($alloc | length) > 0 and
          all($alloc[]; . as $r | any($st[]; .pool == $r.pool and .device == $r.device and
              (((.conditions // []) | length) > 0 or .data != null)))' <<<"$json" >/dev/null || {
        printf 'status.devices: %s\n' "$(jq -c '.status.devices // []' <<<"$json")"
        return 1
    }
}

# requires: gate=DRAResourceClaimDeviceStatus, param=CONFORMANCE_DEVICE_STATUS
# bats test_tags=generic
@test "device status: the driver's status.devices entries appear on the claim" {
    require_gate DRAResourceClaimDeviceStatus
    require_param CONFORMANCE_DEVICE_STATUS "report ResourceClaim device status"
    local ns=$TEST_NAMESPACE json
    create_from claim CLAIM=reported COUNT=1
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=reported
    wait_pod_ready "$ns" pod-a
    wait_for "status.devices entries for the devices of claim reported" "$CONFORMANCE_TIMEOUT" \
        devices_reported "$ns" reported >/dev/null

    json=$(claim_json "$ns" reported)
    # Only allocated devices may be reported on.
    jq -e --arg d "$CONFORMANCE_DRIVER" '
        [.status.allocation.devices.results[] | "\(.driver)/\(.pool)/\(.device)"] as $alloc
        | all(.status.devices[]; "\(.driver)/\(.pool)/\(.device)" as $k | $alloc | index($k) != null)' \
        <<<"$json" >/dev/null ||
        fail "status.devices names devices that are not allocated: $(jq -c '.status.devices' <<<"$json")"

    if is_fake_driver; then
        local pool device rest uuid
        IFS=$'\t' read -r pool device rest < <(claim_results "$ns" reported)
        uuid=$(device_uuid "$pool" "$device")
        jq -e --arg p "$pool" --arg dev "$device" --arg u "$uuid" '
            .status.devices[] | select(.pool == $p and .device == $dev)
            | any(.conditions[]?; .type == "Ready" and .status == "True") and (.data | tostring | contains($u))' \
            <<<"$json" >/dev/null ||
            fail "fake driver: the status of $pool/$device should have condition Ready=True and its uuid $uuid in data:" \
                "$(jq -c '.status.devices' <<<"$json")"
    fi
}
