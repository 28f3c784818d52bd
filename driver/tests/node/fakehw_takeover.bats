#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The plugin across a gap in the fakehw tree: a fakehw that takes the mount
# over from its predecessor (--takeover-timeout, as in a surge rolling
# update) is back within --fakehw-gone-grace-ms, and nothing is written or
# reported unhealthy; a tree gone for longer turns the devices unhealthy
# once the grace has passed, not before.
# White-box: these read fakehw-kubelet-plugin's own log, so they live with the
# driver, not in the conformance kit (whose node environment they use).
# shellcheck disable=SC2016,SC2034,SC2154 # jq filters, eval'd checks; FAKEHW_PID is node_env's; $output, $status come from run

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert
load ../../../conformance/node/lib/node_env

setup() {
    node_setup
    NEXT_PID=''
}

teardown() {
    [[ -z $NEXT_PID ]] || _ne_reap "$NEXT_PID" TERM 5 || true
    node_teardown
}

# tainted: how many published devices carry a taint.
tainted() {
    slices '[.[].spec.devices[]? | select(.taints)] | length'
}

# writes: the API requests other than GET since the last standin_clear_requests.
writes() {
    standin_requests | jq -s -c '[.[] | select(.method != "GET") | "\(.method) \(.path)"]'
}

@test "a fakehw takeover is back within the grace: no write, nothing unhealthy [fake-driver,fakehw]" {
    node_up
    claim_new c1 gpu-0
    run -0 prepare_claims "$(ref c1)"
    wait_for 5 "claim c1: gpu-0 Ready" eval '[[ $(claim_condition c1 gpu-0) == "True DeviceHealthy" ]]'
    health_watch_start
    standin_clear_requests

    _ne_spawn "$NODE_LOGS/fakehw-next.log" "$NODE_BIN/fakehw" --config "$FAKEHW_CONFIG" \
        --mount "$MNT" --node "$NODE" --dev-dir "$DEV_DIR" --foreground -v 2 --takeover-timeout 30
    NEXT_PID=$_NE_PID
    wait_for 5 "the successor to wait" grep -q "another fakehw serves it; waiting" "$NODE_LOGS/fakehw-next.log"
    fakehw_stop
    FAKEHW_PID=$NEXT_PID NEXT_PID=''
    wait_for 5 "the successor to serve" _ne_tree_served
    wait_for 5 "the plugin to see the tree back" grep -q "is back within the grace" "$PLUGIN_LOG"
    # Time for whatever a change would have sent.
    sleep 1

    run -0 writes
    assert_output "[]"
    run -1 grep -E "devices now unhealthy" "$PLUGIN_LOG"
    run -1 grep " health=UNHEALTHY " "$HEALTH_OUT"
    assert_equal "$(tainted)" 0
    assert_equal "$(claim_condition c1 gpu-0)" "True DeviceHealthy"
    run -0 ls "$DEV_DIR"
    assert_output "$(printf 'fakegpu%s\n' 0 1 2 3)"
    run -0 unprepare_claims "$(ref c1)"
}

@test "a tree gone for longer than --fakehw-gone-grace-ms: unhealthy after the grace, not before [fake-driver,fakehw]" {
    fakehw_config 4
    fakehw_start
    api_start
    plugin_start --fakehw-gone-grace-ms 1500
    kubelet_register
    wait_pool_published 4

    local t0
    t0=$(_ne_now)
    fakehw_stop
    wait_for 5 "the plugin to see the tree gone" grep -q "devices turn unhealthy unless it is back within 1500 ms" "$PLUGIN_LOG"
    assert_equal "$(tainted)" 0
    wait_for 10 "every device tainted" eval '[[ $(tainted) == 4 ]]'
    (($(_ne_now) - t0 >= 1500000))
    grep -q "4 devices now unhealthy" "$PLUGIN_LOG"

    fakehw_start
    wait_for 10 "no taint left" eval '[[ $(tainted) == 0 ]]'
}
