#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The plugin across a gap in the fakehw tree: a fakehw that takes the mount
# over from its predecessor (--takeover-timeout, as in a surge rolling
# update) is back within --fakehw-gone-grace-ms, and nothing is written or
# reported unhealthy; a tree gone for longer turns the devices unhealthy
# once the grace has passed, not before.  A plugin in a mount namespace of
# its own that reads the tree through a bind of the parent directory, as in
# its container, follows the takeover, and its CDI specs name the host path.
# White-box: these read fakehw-kubelet-plugin's own log, so they live beside
# the benchmarks, not in the conformance kit (whose node environment they use).
# shellcheck disable=SC2016,SC2034,SC2154 # jq filters, eval'd checks; FAKEHW_PID is node_env's; $output, $status come from run

load ../../conformance/node/lib/node_suite

setup() {
    node_setup
    NEXT_PID='' HOST_RUN=''
}

teardown() {
    local rc=0
    [[ -z $NEXT_PID ]] || _ne_reap "$NEXT_PID" TERM 5 || true
    node_teardown || rc=$?
    if [[ -n $HOST_RUN ]] && _ne_mounted "$HOST_RUN"; then
        umount -l "$HOST_RUN" || rc=1
    fi
    return "$rc"
}

# tainted: how many published devices carry a taint.
tainted() {
    slices '[.[].spec.devices[]? | select(.taints)] | length'
}

# writes: the API requests other than GET since the last standin_clear_requests.
writes() {
    standin_requests | jq -s -c '[.[] | select(.method != "GET") | "\(.method) \(.path)"]'
}

# take_over: a successor fakehw waits for the mount (--takeover-timeout),
# the running one stops, the successor serves the tree.
take_over() {
    _ne_spawn "$NODE_LOGS/fakehw-next.log" "$NODE_BIN/fakehw" --config "$FAKEHW_CONFIG" \
        --mount "$MNT" --node "$NODE" --dev-dir "$DEV_DIR" --foreground -v 2 --takeover-timeout 30
    NEXT_PID=$_NE_PID
    wait_for 5 "the successor to wait" grep -q "another fakehw serves it; waiting" "$NODE_LOGS/fakehw-next.log"
    fakehw_stop
    FAKEHW_PID=$NEXT_PID NEXT_PID=''
    wait_for 5 "the successor to serve" _ne_tree_served
}

# parent_bind_layout: the tree at $HOST_RUN/fakehw, $HOST_RUN a shared mount
# as the host's /var/run is; $VIEW is where the plugin's namespace binds it.
parent_bind_layout() {
    ((EUID == 0)) || skip "mount namespaces need root"
    unshare --mount true 2>/dev/null || skip "unshare --mount is not permitted here"
    HOST_RUN=$NODE_ROOT/run VIEW=$NODE_ROOT/host/run
    MNT=$HOST_RUN/fakehw
    mkdir -p "$MNT" "$VIEW"
    mount --bind "$HOST_RUN" "$HOST_RUN"
    mount --make-shared "$HOST_RUN"
}

# plugin_start_behind_bind: the plugin as in its container: in a mount
# namespace of its own, reading the tree at $VIEW/fakehw, a bind of
# $HOST_RUN with HostToContainer propagation (rslave), while a tmpfs hides
# $HOST_RUN itself, so it cannot read the host path by mistake.
plugin_start_behind_bind() {
    local cmd ns_setup
    cmd=$(plugin_command) || return 1
    cmd+=$(printf ' %q' --fakehw-root "$VIEW/fakehw" --fakehw-host-root "$MNT")
    ns_setup=$(printf 'mount --rbind %q %q && mount --make-rslave %q && mount -t tmpfs hidden %q' \
        "$HOST_RUN" "$VIEW" "$VIEW" "$HOST_RUN")
    echo "=== $(date -u +%T.%N) starting in a mount namespace: $ns_setup && exec $cmd" >>"$PLUGIN_LOG"
    # unshare and bash exec, so $! is the plugin's pid.
    unshare --mount --propagation slave bash -c "$ns_setup && exec $cmd" </dev/null >>"$PLUGIN_LOG" 2>&1 3>&- &
    PLUGIN_PID=$!
    PLUGIN_STATUS=''
}

# tainted_names: the published devices that carry a taint, comma-separated.
tainted_names() {
    slices '[.[].spec.devices[]? | select(.taints) | .name] | sort | join(",")' -r
}

@test "a fakehw takeover is back within the grace: no write, nothing unhealthy [fake-driver,fakehw]" {
    node_up
    claim_new c1 gpu-0
    run -0 prepare_claims "$(ref c1)"
    wait_for 5 "claim c1: gpu-0 Ready" eval '[[ $(claim_condition c1 gpu-0) == "True DeviceHealthy" ]]'
    health_watch_start
    standin_clear_requests

    take_over
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

@test "through a bind of the parent: the plugin follows a takeover, CDI specs name the host path [fake-driver,fakehw]" {
    parent_bind_layout
    fakehw_config 4
    fakehw_start
    api_start
    plugin_start_behind_bind
    kubelet_register
    wait_pool_published 4
    claim_new c1 gpu-0
    run -0 prepare_claims "$(ref c1)"

    # The runtime reads the spec on the host: the host path, never the view.
    local spec
    spec=$(files_mentioning "$CDI_ROOT" "$(claim_get c1 | jq -r .metadata.uid)" | grep -v metadata | head -n 1)
    run -0 jq -r '.containerEdits.env[] | select(startswith("FAKEHW_ROOT="))' "$spec"
    assert_output "FAKEHW_ROOT=$MNT"
    run -0 jq -r '.devices[].containerEdits.mounts[] | "\(.hostPath) \(.containerPath)"' "$spec"
    assert_output "$MNT/devices/gpu-0 $MNT/devices/gpu-0"
    run -1 grep -rlF "$VIEW" "$CDI_ROOT"

    health_watch_start
    take_over
    wait_for 5 "the plugin to see the tree back" grep -q "is back within the grace" "$PLUGIN_LOG"
    # A flip on the successor's tree reaches the plugin: it reads the new
    # mount, not the one it started with.
    fakehw_flip gpu-1 unhealthy "flipped after the takeover"
    wait_for 10 "gpu-1 tainted" eval '[[ $(tainted_names) == gpu-1 ]]'
    wait_for 5 "gpu-1 unhealthy on the health stream" health_latest_has "device=gpu-1 health=UNHEALTHY .*flipped after the takeover"
    run -1 grep -F "devices now unhealthy" "$PLUGIN_LOG"
    fakehw_flip gpu-1 healthy
    wait_for 10 "no taint left" eval '[[ -z $(tainted_names) ]]'
    assert_equal "$(claim_condition c1 gpu-0)" "True DeviceHealthy"
    run -0 unprepare_claims "$(ref c1)"
}
