#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Device health, driven through fakehw: a flip must reach the three places
# that report it (the slice taint, the kubelet health stream, the claim's
# status.devices condition) and go away again on recovery; fakehw dying must
# turn every device unhealthy without taking the plugin down.
# shellcheck disable=SC2016,SC2154 # jq filters and eval'd checks; $output, $status come from run

load ../lib/node_suite

# tainted_devices: names of the published devices that carry a taint.
tainted_devices() {
    slices '.[].spec.devices[]? | select(.taints) | .name' -r
}

@test "health: a flip taints the device, tells the kubelet and marks the claim; recovery clears all three [fakehw]" {
    node_up
    claim_new c1 gpu-1 gpu-2
    run -0 prepare_claims "$(ref c1)"
    wait_for 5 "claim c1: gpu-1 Ready" condition_is c1 gpu-1 "True DeviceHealthy"
    health_watch_start
    health_latest_has "device=gpu-1 health=HEALTHY "

    fakehw_flip gpu-1 unhealthy "XID 79: GPU has fallen off the bus"
    wait_for 5 "the taint on gpu-1" taints_are gpu-1 "$DRIVER/unhealthy XID-79 NoSchedule"
    run -0 tainted_devices
    assert_output gpu-1
    wait_for 5 "UNHEALTHY gpu-1 on the health stream" health_latest_has \
        "^pool=$NODE device=gpu-1 health=UNHEALTHY .* message=XID 79: GPU has fallen off the bus$" \
        "^pool=$NODE device=gpu-0 health=HEALTHY " "^pool=$NODE device=gpu-2 health=HEALTHY "
    wait_for 5 "claim c1: gpu-1 not Ready" condition_is c1 gpu-1 "False XID79"
    run -0 claim_get c1
    assert_equal "$(jq -r '.status.devices[] | select(.device == "gpu-1") | .conditions[0].message' <<<"$output")" \
        "XID 79: GPU has fallen off the bus"
    assert_equal "$(claim_condition c1 gpu-2)" "True DeviceHealthy"

    fakehw_flip gpu-1 healthy
    wait_for 5 "no taint on gpu-1" taints_are gpu-1 ""
    run -0 tainted_devices
    assert_output ""
    wait_for 5 "HEALTHY gpu-1 on the health stream" health_latest_has "^pool=$NODE device=gpu-1 health=HEALTHY .* message=$"
    wait_for 5 "claim c1: gpu-1 Ready again" condition_is c1 gpu-1 "True DeviceHealthy"
    plugin_alive
}

@test "health: a reason without an XID becomes a label-safe taint value and DeviceUnhealthy [fakehw]" {
    node_up
    claim_new c1 gpu-3
    run -0 prepare_claims "$(ref c1)"
    fakehw_flip gpu-3 unhealthy "ECC double-bit error"
    wait_for 5 "the taint on gpu-3" taints_are gpu-3 "$DRIVER/unhealthy ECC-double-bit-error NoSchedule"
    wait_for 5 "claim c1: gpu-3 not Ready" condition_is c1 gpu-3 "False DeviceUnhealthy"
    fakehw_flip gpu-3 unhealthy
    wait_for 5 "the reasonless taint on gpu-3" taints_are gpu-3 "$DRIVER/unhealthy unhealthy NoSchedule"
}

@test "health: fakehw killed marks every device unhealthy, the plugin keeps serving; fakehw back heals them [fakehw]" {
    node_up
    claim_new c1 gpu-0
    run -0 prepare_json "$(ref c1)"
    local prepared=$output
    wait_for 5 "claim c1: gpu-0 Ready" condition_is c1 gpu-0 "True DeviceHealthy"
    health_watch_start

    fakehw_kill9
    # The mount stays behind, stale.
    run stat "$MNT/generation"
    assert_failure
    assert_output --partial "Transport endpoint is not connected"
    # The plugin first waits out its grace for a tree that comes back at
    # once (--fakehw-gone-grace-ms, 3 s).
    wait_for 10 "every device tainted fakehw-unavailable" eval \
        '[[ $(slices "[.[].spec.devices[] | .taints[]?.value] | join(\" \")" -r) == "fakehw-unavailable fakehw-unavailable fakehw-unavailable fakehw-unavailable" ]]'
    wait_for 5 "UNHEALTHY devices on the health stream" eval \
        '[[ $(health_latest | grep -c " health=UNHEALTHY ") == 4 ]]'
    wait_for 5 "claim c1: gpu-0 not Ready" condition_is c1 gpu-0 "False FakehwUnavailable"

    # Still serving: GetInfo, a prepared claim from the checkpoint, unknown claims.
    plugin_alive
    kubelet_register
    run -0 prepare_json "$(ref c1)"
    assert_equal "$output" "$prepared"
    run -1 prepare_claims "$NODE_NS/no-such-claim/6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
    assert_output --regexp "^claim=6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d error=."
    run -0 unprepare_claims "$NODE_NS/no-such-claim/6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

    fakehw_start --clear-stale
    wait_for 5 "no taint left" eval '[[ -z $(tainted_devices) ]]'
    wait_pool_published 4
    wait_for 5 "HEALTHY devices on the health stream" eval \
        '[[ $(health_latest | grep -c " health=HEALTHY ") == 4 ]]'
    wait_for 5 "claim c1: gpu-0 Ready again" condition_is c1 gpu-0 "True DeviceHealthy"
    plugin_alive
}

@test "health: each advertised health version streams the full list and a flip; a 1.37 kubelet picks v1, an older one v1alpha1 [fakehw]" {
    node_up
    local versions svc served=0
    versions=$(registration_value supported_versions)
    if [[ $NODE_FAKE_DRIVER == true || ,$versions, == *,v1.DRAResourceHealth,* ]]; then
        assert_equal "$(registration_value health_version)" v1.DRAResourceHealth
    fi
    if [[ ,$versions, == *,v1alpha1.DRAResourceHealth,* ]]; then
        # A 1.34-1.36 kubelet knows only v1alpha1 and skips the v1 string.
        NODE_KUBELET_HEALTH_SERVICES=v1alpha1.DRAResourceHealth kubelet_register
        assert_equal "$(registration_value health_version)" v1alpha1.DRAResourceHealth
        assert_equal "$(registration_value version)" v1.DRAPlugin
    fi
    for svc in v1.DRAResourceHealth v1alpha1.DRAResourceHealth; do
        [[ ,$versions, == *,$svc,* ]] || continue
        served=$((served + 1))
        NODE_HEALTH_SERVICE=$svc health_watch_start
        health_latest_has "^pool=$NODE device=gpu-0 health=HEALTHY " "^pool=$NODE device=gpu-1 health=HEALTHY " \
            "^pool=$NODE device=gpu-2 health=HEALTHY " "^pool=$NODE device=gpu-3 health=HEALTHY "
        fakehw_flip gpu-2 unhealthy "XID 48: double bit ECC error"
        wait_for 5 "UNHEALTHY gpu-2 on the $svc stream" health_latest_has \
            "^pool=$NODE device=gpu-2 health=UNHEALTHY .* message=XID 48: double bit ECC error$" \
            "^pool=$NODE device=gpu-1 health=HEALTHY "
        fakehw_flip gpu-2 healthy
        wait_for 5 "HEALTHY gpu-2 on the $svc stream" health_latest_has "^pool=$NODE device=gpu-2 health=HEALTHY .* message=$"
        _ne_reap "$HEALTH_PID" TERM 2 || true
    done
    ((served > 0)) || fail "the plugin advertises no health service: $versions"
    [[ $NODE_FAKE_DRIVER != true ]] || assert_equal "$served" 2
    plugin_alive
}
