#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Two instances of the plugin on one node, as during a DaemonSet rolling
# update with maxSurge: each with its pod's UID (--rolling-update-uid), one
# plugin dir between them.  Sockets named after the UIDs, a claim prepared
# through one and unprepared through the other, one pool without churn, and
# an instance that stops removes only its own sockets.
# White-box: it uses the fake driver's flag and reads its checkpoint.
# shellcheck disable=SC2016,SC2034,SC2154 # jq filters; JOURNAL and DRA_SOCK are read by the libraries; $output, $status come from run

load ../../conformance/node/lib/node_suite
load ../../conformance/node/lib/checkpoint

# Short: a pod's 36-character UID would not fit in the socket paths below
# bats' temporary directory (the unit tests cover the names of long ones).
UID_A=pod-a1b2
UID_B=pod-c3d4

setup() {
    node_setup
    JOURNAL=$PLUGIN_DIR/checkpoint.journal
    B_PID='' B_LOG=$NODE_LOGS/plugin-b.log
    REG_A=$REG_DIR/$DRIVER-$UID_A-reg.sock DRA_A=$PLUGIN_DIR/dra-$UID_A.sock
    REG_B=$REG_DIR/$DRIVER-$UID_B-reg.sock DRA_B=$PLUGIN_DIR/dra-$UID_B.sock
}

teardown() {
    local problem=''
    if [[ -n $B_PID ]]; then
        _ne_reap "$B_PID" TERM 10 || problem="instance B did not stop within 10s of SIGTERM"
        [[ -n $problem || $_NE_STATUS == 0 ]] || problem="instance B exited with status $_NE_STATUS"
    fi
    node_teardown
    [[ -z $problem ]] || {
        echo "teardown: $problem" >&2
        return 1
    }
}

# start_b: the second instance, with its own log and ready file.
start_b() {
    local cmd
    cmd=$(plugin_command) || return 1
    cmd+=" --rolling-update-uid $UID_B --ready-file $(printf '%q' "$NODE_ROOT/ready-b")"
    echo "=== $(date -u +%T.%N) starting: $cmd" >>"$B_LOG"
    # shellcheck disable=SC2093
    _ne_spawn "$B_LOG" bash -c "exec $cmd"
    B_PID=$_NE_PID
}

# register_both: the kubelet stand-in registers every plugin socket of the
# driver it finds; both must be there and registered.
register_both() {
    wait_for 10 "both registration sockets" test -S "$REG_A" -a -S "$REG_B"
    run -0 ks register --registry-dir "$REG_DIR" --driver "$DRIVER" --timeout 10
    assert_equal "$(grep -c '^registered=true$' <<<"$output")" 2
    assert_equal "$(sed -n 's/^endpoint=//p' <<<"$output" | sort)" "$(printf '%s\n' "$DRA_A" "$DRA_B" | sort)"
}

slice_versions() {
    slices '[.[] | .metadata.name + "@" + .metadata.resourceVersion] | join(" ")' -r
}

@test "rolling update: two instances share the node; prepare on one, unprepare on the other [fake-driver]" {
    fakehw_config 4
    fakehw_start
    api_start
    plugin_start --rolling-update-uid "$UID_A"
    wait_for 10 "instance A's registration socket" test -S "$REG_A"
    wait_pool_published 4
    local before
    before=$(slice_versions)
    start_b
    register_both
    # Neither instance uses the names of an instance alone on the node.
    [[ ! -e $REG_DIR/$DRIVER-reg.sock && ! -e $PLUGIN_DIR/dra.sock ]]
    wait_for 10 "both instances ready" test -f "$READY_FILE" -a -f "$NODE_ROOT/ready-b"
    # B found the pool published and left it as it was.
    assert_equal "$(slice_versions)" "$before"

    claim_new c1 gpu-1 gpu-2
    DRA_SOCK=$DRA_A
    run -0 prepare_json "$(ref c1)"
    local answer=$output spec
    spec=$CDI_ROOT/k8s.$DRIVER-gpu_${CLAIM_UIDS[c1]}.json
    [[ -s $spec ]]
    # B answers the repeated prepare the same, from what A wrote.
    DRA_SOCK=$DRA_B
    run -0 prepare_json "$(ref c1)"
    assert_equal "$output" "$answer"
    run -0 grep -F "claim default/c1 (uid ${CLAIM_UIDS[c1]}): already prepared" "$B_LOG"
    # Unprepared through B: the files are gone when it answers, and the
    # checkpoint, which both keep, is empty.
    run -0 unprepare_claims "$(ref c1)"
    [[ ! -e $spec ]]
    assert_equal "$(checkpoint_claims)" "{}"
    [[ -z $(find "$CDI_ROOT" -type f) ]]
    # A sees it: a new prepare through A prepares the claim afresh.
    DRA_SOCK=$DRA_A
    run -0 prepare_json "$(ref c1)"
    assert_equal "$output" "$answer"
    [[ -s $spec ]]
    DRA_SOCK=$DRA_B
    run -0 unprepare_claims "$(ref c1)"
    assert_equal "$(checkpoint_claims)" "{}"

    # A health flip: both publish it, the pool settles once and stays.
    fakehw_flip gpu-3 unhealthy XID-79
    wait_for 10 "the taint on gpu-3" eval '[[ $(slices "[.[].spec.devices[] | select(.name == \"gpu-3\") | .taints | length] | add" -r) == 1 ]]'
    wait_pool_published 4
    sleep 1
    before=$(slice_versions)
    sleep 2
    assert_equal "$(slice_versions)" "$before"

    # A stops (the old pod of the update): its sockets go, B's stay and serve.
    plugin_stop TERM
    assert_equal "$PLUGIN_STATUS" 0
    [[ ! -e $REG_A && ! -e $DRA_A ]]
    [[ -S $REG_B && -S $DRA_B ]]
    run -0 prepare_json "$(ref c1)"
    run -0 unprepare_claims "$(ref c1)"
    assert_equal "$(checkpoint_claims)" "{}"
    # Without --cleanup-on-exit the pool stays published.
    assert_equal "$(slice_versions)" "$before"
}

@test "rolling update: a bad --rolling-update-uid stops the start with the flag's name [fake-driver]" {
    run -2 "$NODE_BIN/fakehw-kubelet-plugin" --node-name "$NODE" --rolling-update-uid ../etc
    assert_output --partial '--rolling-update-uid (POD_UID) "../etc": character 3'
    POD_UID=$(printf 'a%.0s' {1..129}) run -2 "$NODE_BIN/fakehw-kubelet-plugin" --node-name "$NODE"
    assert_output --partial 'want 1 to 128 characters'
}
