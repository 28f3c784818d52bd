#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# XIDs in the fakehw personality (docs/driver.md#health-three-ways): a
# fatal XID fakehw reports is the unhealthy taint XID-<n>, UNHEALTHY on the
# health stream and not Ready in the claim's device status, like a health
# flip naming it; an ignored one leaves the device healthy.  The nvidia
# personality's XIDs: nvidia_xid.bats.
# White-box: it starts fakehw-kubelet-plugin with its own flags, so it lives
# in bench/, not in the conformance kit (whose node environment it uses).
# shellcheck disable=SC2016,SC2154 # jq filters and eval'd checks; $output comes from run

load ../../conformance/node/lib/node_suite
load xid

@test "xid: in the fakehw personality a fatal XID is the unhealthy taint XID-79, an ignored one changes nothing [fake-driver,fakehw]" {
    xid_claim_prepared fakehw gpu-0 gpu-1
    health_watch_start
    run -0 fakehw_xid gpu-1 79
    run -0 fakehw_xid gpu-0 13
    wait_for 10 "the taint on gpu-1" taints_are gpu-1 "$DRIVER/unhealthy XID-79 NoSchedule"
    wait_fatal_xid_on_stream gpu-1 79 gpu-0
    wait_for 10 "claim c1: gpu-1 not Ready" condition_is c1 gpu-1 "False XID79"
    wait_for 10 "gpu-0's message names the ignored XID" eval \
        '[[ $(condition_message c1 gpu-0) == "gpu-0 is healthy: XID 13 (Graphics Engine Exception) is an application error, ignored" ]]'
    taints_are gpu-0 ""
    run -0 fakehw_xid gpu-1 --clear
    wait_for 10 "no taint on gpu-1" taints_are gpu-1 ""
    wait_for 10 "claim c1: gpu-1 Ready again" condition_is c1 gpu-1 "True DeviceHealthy"
}
