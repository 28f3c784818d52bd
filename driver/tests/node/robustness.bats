#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The plugin's own policies and shutdown: --unhealthy-device-policy auto on a
# server that drops taints, --cleanup-on-exit, and SIGTERM while every API
# request is slow.
# White-box: these read fakehw-kubelet-plugin's own log, so they live with the
# driver, not in the conformance kit (whose node environment they use).
# shellcheck disable=SC2016,SC2154 # jq filters and eval'd checks; $output, $status come from run

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert
load ../../../conformance/node/lib/node_env

setup() {
    node_setup
}

teardown() {
    node_teardown
}

@test "robustness: --unhealthy-device-policy auto on a server that drops taints leaves unhealthy devices out [fake-driver,fakehw]" {
    fakehw_config 4
    fakehw_start
    api_start --drop-device-taints
    plugin_start --unhealthy-device-policy auto
    kubelet_register
    wait_pool_published 4
    fakehw_flip gpu-1 unhealthy "XID 79: GPU has fallen off the bus"
    wait_for 5 "gpu-1 to leave the pool" pool_settled 3
    run -0 pool_devices
    assert_output "gpu-0
gpu-2
gpu-3"
    # Said once, with the policy that decided it.
    run -0 grep -c "the API server dropped the device taints .*unhealthy devices are now left out of the ResourceSlices (--unhealthy-device-policy=auto)" "$PLUGIN_LOG"
    assert_output 1
    fakehw_flip gpu-1 healthy
    wait_for 5 "gpu-1 back in the pool" pool_settled 4
    run -0 slices '[.[].spec.devices[] | select(.taints)] | length'
    assert_output 0
}

@test "robustness: plain SIGTERM keeps the slices; --cleanup-on-exit deletes them [fake-driver]" {
    node_up
    plugin_stop TERM
    assert_equal "$PLUGIN_STATUS" 0
    pool_settled 4 || fail "the slices did not survive a plain SIGTERM"
    plugin_start --cleanup-on-exit
    kubelet_register
    wait_pool_published 4
    plugin_stop TERM
    assert_equal "$PLUGIN_STATUS" 0
    run -0 slices length
    assert_output 0
    run -0 grep -F "deleting this node's ResourceSlices" "$PLUGIN_LOG"
}

@test "robustness: SIGTERM ends the plugin within 5 s while every API request takes 25 s; the prepare in flight is answered [fake-driver]" {
    node_up
    claim_new c1 "$(pool_devices 1)"
    # From here every API request is answered after 25 s (longer than the
    # plugin's 10 s per-attempt timeout, so it would retry for minutes).
    standin_fault '{"delayMs": 25000, "seconds": 120}'
    plugin_stop TERM
    plugin_start --cleanup-on-exit
    kubelet_register
    local out=$BATS_TEST_TMPDIR/prepare.out
    _ne_spawn "$out" "$NODE_BIN/kubelet-standin" prepare --endpoint "$DRA_SOCK" "$(ref c1)"
    # shellcheck disable=SC2034 # read by the eval below
    local prep=$_NE_PID
    sleep 1 # the prepare now waits on its GET of the claim
    plugin_stop TERM 30
    awk -v t="$PLUGIN_STOP_SECONDS" 'BEGIN { exit !(t <= 5) }' ||
        fail "the plugin took ${PLUGIN_STOP_SECONDS}s to stop with a slow API server"
    # The prepare was answered (with an error), not left hanging.
    wait_for 5 "the prepare call to end" eval '! _ne_alive "$prep"'
    grep -qE "error=|UNAVAILABLE" "$out" || fail "the prepare got no answer: $(cat "$out")"
    run -0 grep -E "stopped [0-9]+ ms after the signal" "$PLUGIN_LOG"
    # The cleanup ran inside the budget and said why it could not finish.
    run -0 grep -F "deleting ResourceSlices on exit" "$PLUGIN_LOG"
    # Status 1: the slices could not be deleted.
    assert_equal "$PLUGIN_STATUS" 1
}

@test "robustness: a prepare that must GET its claim while the API server fails gets an error and leaves no files [fake-driver]" {
    fakehw_config 2
    fakehw_start
    api_start
    # The claim watch never lists, so a prepare cannot take the claim from it.
    standin_fault '{"status": 500, "count": 100000, "path": "/apis/resource.k8s.io/v1/resourceclaims"}'
    plugin_start
    kubelet_register
    wait_pool_published 2
    claim_new c1 gpu-0
    standin_fault '{"status": 500, "count": 1000, "path": "/apis/resource.k8s.io/v1/namespaces/"}'
    run -1 prepare_claims "$(ref c1)"
    assert_output --regexp "^claim=$CLAIM_UID error=.*500"
    run -0 files_mentioning "$CDI_ROOT" "$CLAIM_UID"
    assert_output ""
    standin_clear_faults
    run -0 prepare_claims "$(ref c1)"
    run -0 files_mentioning "$CDI_ROOT" "$CLAIM_UID"
    refute_output ""
}
