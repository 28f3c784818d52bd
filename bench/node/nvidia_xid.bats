#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# XIDs in the nvidia personality (docs/nvidia.md#xids): an XID fakehw
# reports on a device is tainted as NVIDIA's driver taints it,
# gpu.nvidia.com/xid=<code> with effect NoSchedule when fatal and None when
# ignored; a fatal one is also UNHEALTHY on the kubelet health stream and
# not Ready in the claim's device status; clearing it clears all three.
# White-box: it starts fakehw-kubelet-plugin with its own flags, so it lives
# in bench/, not in the conformance kit (whose node environment it uses).
# shellcheck disable=SC2016,SC2154 # jq filters and eval'd checks; $output comes from run

export NODE_DRIVER_NAME=gpu.nvidia.com
load ../../conformance/node/lib/node_suite
load xid

@test "xid: a fatal XID taints gpu.nvidia.com/xid=79 NoSchedule, is UNHEALTHY and not Ready; clearing it heals all three [fake-driver,fakehw]" {
    xid_claim_prepared nvidia gpu-0 gpu-1
    wait_for 10 "claim c1: gpu-1 Ready" condition_is c1 gpu-1 "True DeviceHealthy"
    health_watch_start

    run -0 fakehw_xid gpu-1 79
    wait_for 10 "the XID taint on gpu-1" taints_are gpu-1 "gpu.nvidia.com/xid 79 NoSchedule"
    taints_are gpu-0 ""
    wait_fatal_xid_on_stream gpu-1 79 gpu-0
    wait_for 10 "claim c1: gpu-1 not Ready" condition_is c1 gpu-1 "False XID79"
    assert_equal "$(claim_condition c1 gpu-0)" "True DeviceHealthy"

    run -0 fakehw_xid gpu-1 --clear
    wait_for 10 "no taint on gpu-1" taints_are gpu-1 ""
    wait_for 10 "HEALTHY gpu-1 on the health stream" health_latest_has "^pool=$NODE device=gpu-1 health=HEALTHY .* message=$"
    wait_for 10 "claim c1: gpu-1 Ready again" condition_is c1 gpu-1 "True DeviceHealthy"
    run -0 unprepare_claims "$(ref c1)"
}

@test "xid: an ignored XID taints with effect None and leaves the device healthy and Ready; clearing it removes the taint [fake-driver,fakehw]" {
    xid_claim_prepared nvidia gpu-0
    wait_for 10 "claim c1: gpu-0 Ready" condition_is c1 gpu-0 "True DeviceHealthy"
    health_watch_start

    run -0 fakehw_xid gpu-0 43
    wait_for 10 "the XID taint on gpu-0" taints_are gpu-0 "gpu.nvidia.com/xid 43 None"
    wait_for 10 "the claim message names the XID" eval \
        '[[ $(condition_message c1 gpu-0) == "gpu-0 is healthy: XID 43 (GPU stopped processing) is an application error, ignored" ]]'
    assert_equal "$(claim_condition c1 gpu-0)" "True DeviceHealthy"
    health_latest_has "^pool=$NODE device=gpu-0 health=HEALTHY .* message=$"
    # An ignored XID is no health change the stream reports.
    run grep -c ' device=gpu-0 health=UNHEALTHY' "$HEALTH_OUT"
    assert_output 0

    run -0 fakehw_xid gpu-0 --clear
    wait_for 10 "no taint on gpu-0" taints_are gpu-0 ""
    wait_for 10 "the plain message" eval '[[ $(condition_message c1 gpu-0) == "gpu-0 is healthy" ]]'
    run -0 unprepare_claims "$(ref c1)"
}

@test "xid: --additional-xids-to-ignore makes an XID an application error; a malformed list stops the start [fake-driver,fakehw]" {
    xid_up nvidia --additional-xids-to-ignore ' 79, 94,'
    run -0 fakehw_xid gpu-1 79
    wait_for 10 "the ignored XID's taint" taints_are gpu-1 "gpu.nvidia.com/xid 79 None"
    run -0 fakehw_xid gpu-0 48
    wait_for 10 "a fatal one still" taints_are gpu-0 "gpu.nvidia.com/xid 48 NoSchedule"
    grep -q "XIDs ignored as application errors: 13, 31, 43, 45, 68, 79, 94, 109" "$PLUGIN_LOG"
    plugin_stop
    run "$NODE_BIN/fakehw-kubelet-plugin" --node-name "$NODE" --personality nvidia \
        --additional-xids-to-ignore 48,x
    assert_failure
    assert_output --partial '--additional-xids-to-ignore: item 2 "x" is not an XID (a decimal 1..99999)'
    ADDITIONAL_XIDS_TO_IGNORE=0 run "$NODE_BIN/fakehw-kubelet-plugin" --node-name "$NODE"
    assert_failure
    assert_output --partial 'item 1 "0" is not an XID'
}

@test "xid: a MIG instance's XID taints that instance alone; its GPU's reaches no published device, as with NVIDIA's driver [fake-driver,fakehw]" {
    xid_claim_prepared nvidia gpu-2-mig-3g40gb-9-4
    # The tree names the instance gpu-2-mig-3g40gb-4.
    run -0 fakehw_xid gpu-2-mig-3g40gb-4 94
    wait_for 10 "the instance's taint" taints_are gpu-2-mig-3g40gb-9-4 "gpu.nvidia.com/xid 94 NoSchedule"
    taints_are gpu-2-mig-3g40gb-9-0 ""
    wait_for 10 "claim c1 not Ready" condition_is c1 gpu-2-mig-3g40gb-9-4 "False XID94"
    run -0 fakehw_xid gpu-2 79
    run -0 fakehw_xid gpu-2-mig-3g40gb-4 --clear
    wait_for 10 "the instance healed" taints_are gpu-2-mig-3g40gb-9-4 ""
    wait_for 10 "claim c1 Ready" condition_is c1 gpu-2-mig-3g40gb-9-4 "True DeviceHealthy"
    taints_are gpu-2-mig-3g40gb-9-0 ""
    run -0 slices '[.[].spec.devices[]? | select(.taints) | .name]' -c
    assert_output '[]'
}

@test "xid: an unhealthy device with an XID carries both taints; a scheduled XID comes and goes with its flip [fake-driver,fakehw]" {
    xid_config "$(printf '  flips:\n  - {device: gpu-0, after: 2s, xid: 63, for: 2s}\n')"
    xid_up nvidia
    fakehw_flip gpu-1 unhealthy "ECC double-bit error"
    run -0 fakehw_xid gpu-1 31
    wait_for 10 "both taints on gpu-1" taints_are gpu-1 \
        "$(printf '%s\n' "gpu.nvidia.com/unhealthy ECC-double-bit-error NoSchedule" "gpu.nvidia.com/xid 31 None")"
    wait_for 10 "the scheduled XID" taints_are gpu-0 "gpu.nvidia.com/xid 63 NoSchedule"
    wait_for 10 "the scheduled XID cleared" taints_are gpu-0 ""
}

