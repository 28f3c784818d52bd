#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The plugin's own policies and shutdown: --unhealthy-device-policy auto on a
# server that drops taints, --cleanup-on-exit, and SIGTERM while every API
# request is slow or while fakehw is stopped in the middle of a read.
# White-box: these read fakehw-kubelet-plugin's own log, so they live beside
# the benchmarks, not in the conformance kit (whose node environment they use).
# shellcheck disable=SC2016,SC2154 # jq filters and eval'd checks; $output, $status come from run

load ../../conformance/node/lib/node_suite
load ../../conformance/node/lib/binding

setup() {
    node_setup
    JOURNAL=${CHECKPOINT%.json}.journal # next to checkpoint.json
}

teardown() {
    # A stopped fakehw goes on first: what waits on it could not end.
    [[ -z ${FAKEHW_PID-} ]] || kill -CONT "$FAKEHW_PID" 2>/dev/null || true
    node_teardown
}

# plugin_fuse_waiters: how many of the plugin's threads wait for the answer
# of a FUSE daemon (the kernel's request_wait_answer); fails when none does.
plugin_fuse_waiters() {
    local t n=0
    for t in /proc/"$PLUGIN_PID"/task/*; do
        [[ $(cat "$t/wchan" 2>/dev/null) =~ request_wait_answer|fuse ]] && n=$((n + 1))
    done
    echo "$n"
    ((n > 0))
}

# plugin_exited: the plugin has exited and can be reaped (a zombie whose
# other threads are still in the kernel cannot be yet).
plugin_exited() {
    local status
    status=$(cat "/proc/$PLUGIN_PID/status" 2>/dev/null) || return 0
    [[ $status =~ State:[[:space:]]+Z && $status =~ Threads:[[:space:]]+1$'\n' ]]
}

# stopped_within_budget: the plugin's last stop took at most NODE_STOP_SECONDS
# (2) and a half.
stopped_within_budget() {
    awk -v t="$PLUGIN_STOP_SECONDS" -v max="$NODE_STOP_SECONDS" 'BEGIN { exit !(t <= max + 0.5) }' ||
        fail "the plugin took ${PLUGIN_STOP_SECONDS}s to stop (budget ${NODE_STOP_SECONDS}s)"
}

# checkpoint_folded UID: the journal is empty and checkpoint.json has the claim.
checkpoint_folded() {
    [[ ! -s $JOURNAL ]] || fail "the journal was not folded: $(cat "$JOURNAL")"
    jq -e --arg u "$1" '.claims | has($u)' "$CHECKPOINT" >/dev/null || fail "claim $1 is not in $CHECKPOINT"
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

@test "robustness: SIGTERM ends the plugin within 2 s while fakehw is stopped (SIGSTOP); the checkpoint is folded [fake-driver,fakehw]" {
    node_up
    claim_new c1 gpu-1
    run -0 prepare_claims "$(ref c1)"
    [[ -s $JOURNAL ]] || fail "the prepare left no journal line to fold"
    kill -STOP "$FAKEHW_PID"
    # The stop wakes the inventory thread, whose next poll(2) of the tree
    # asks the stopped fakehw and waits for good.
    plugin_stop TERM 10 || fail "the plugin did not stop within 10 s of SIGTERM"
    stopped_within_budget
    assert_equal "$PLUGIN_STATUS" 0
    grep -q "the inventory thread is still blocked in it" "$PLUGIN_LOG"
    run -0 grep -E "stopped [0-9]+ ms after the signal \(budget 2000 ms\); a thread blocked in the fakehw tree was left behind" "$PLUGIN_LOG"
    echo "# ${PLUGIN_STOP_SECONDS}s from SIGTERM to exit; $output" >&3
    checkpoint_folded "$CLAIM_UID"
}

@test "robustness: SIGTERM while fakehw is stopped in the middle of a read of the plugin's: stopped within 2 s, folded; the exit waits for fakehw [fake-driver,fakehw]" {
    node_up
    claim_new c1 gpu-1
    run -0 prepare_claims "$(ref c1)"
    # gpu-0 flaps, so the plugin reads the tree all the time; fakehw is
    # stopped until one of those reads waits on it.
    _ne_spawn "$NODE_LOGS/flapper.log" bash -c 'while :; do echo unhealthy >"$1"; echo healthy >"$1"; done' flapper "$MNT/devices/gpu-0/health"
    NODE_BG_PIDS+=("$_NE_PID")
    sleep 0.5
    local tries=0
    until kill -STOP "$FAKEHW_PID" && sleep 0.2 && plugin_fuse_waiters >/dev/null; do
        kill -CONT "$FAKEHW_PID"
        ((++tries < 50)) || fail "no thread of the plugin waited on fakehw in 50 tries"
        sleep "0.0$((RANDOM % 9 + 1))"
    done
    local t0 ms
    t0=$(_ne_now)
    kill -TERM "$PLUGIN_PID"
    wait_for 3 "the plugin's stop line" grep -qE "stopped [0-9]+ ms after the signal" "$PLUGIN_LOG"
    ms=$(sed -n 's/.*stopped \([0-9]*\) ms after the signal.*/\1/p' "$PLUGIN_LOG" | tail -n 1)
    ((ms <= 2000)) || fail "the plugin stopped ${ms} ms after the signal (budget 2000 ms)"
    grep -q "a thread blocked in the fakehw tree was left behind" "$PLUGIN_LOG"
    checkpoint_folded "$CLAIM_UID"
    # A read fakehw took before it stopped holds its thread until fakehw
    # answers, through SIGKILL too (the kernel's uninterruptible wait for a
    # FUSE answer): nothing in the plugin ends it, fakehw going on or away
    # does.  A read fakehw had not taken yet ends with the process.
    local how="fakehw had not taken the read"
    if ! wait_for 1 "the plugin to exit" plugin_exited; then
        run -0 plugin_fuse_waiters
        how="fakehw had taken the read and went on $((($(_ne_now) - t0) / 1000)) ms after the signal"
        kill -CONT "$FAKEHW_PID"
        wait_for 5 "the plugin to exit once fakehw goes on" plugin_exited
    fi
    echo "# stopped ${ms} ms after the signal, exited $((($(_ne_now) - t0) / 1000)) ms after it ($how)" >&3
    local rc=0
    wait "$PLUGIN_PID" || rc=$?
    PLUGIN_PID=''
    assert_equal "$rc" 0
}

@test "robustness: SIGTERM during a start that waits on a stopped fakehw ends the plugin within 2 s [fake-driver,fakehw]" {
    fakehw_config 2
    fakehw_start
    api_start
    kill -STOP "$FAKEHW_PID"
    plugin_start
    wait_for 10 "the plugin's start to wait on fakehw" plugin_fuse_waiters
    plugin_stop TERM 10 || fail "the plugin did not stop within 10 s of SIGTERM"
    stopped_within_budget
    # The watchdog ended it: the start cannot be interrupted.
    assert_equal "$PLUGIN_STATUS" 1
    echo "# ${PLUGIN_STOP_SECONDS}s from SIGTERM to exit" >&3
    grep -q "Terminated: still not stopped 1900 ms after the signal; exiting now" "$PLUGIN_LOG"
}

@test "robustness: SIGTERM ends the plugin within 2 s while its binder waits on a stopped fakehw for an attach file [fake-driver,fakehw]" {
    binding_node
    claim_create c5
    kill -STOP "$FAKEHW_PID"
    # The binder reads gpu-1's attach file for the new allocation.
    allocate c5 gpu-1 "2026-11-26T03:00:00Z"
    wait_for 10 "a thread of the plugin to wait on fakehw" plugin_fuse_waiters
    plugin_stop TERM 10 || fail "the plugin did not stop within 10 s of SIGTERM"
    stopped_within_budget
    assert_equal "$PLUGIN_STATUS" 0
    echo "# ${PLUGIN_STOP_SECONDS}s from SIGTERM to exit" >&3
    grep -q "binder: its worker is still blocked in the fakehw tree" "$PLUGIN_LOG"
    run -0 grep -E "stopped [0-9]+ ms after the signal" "$PLUGIN_LOG"
}
