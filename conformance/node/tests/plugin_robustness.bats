#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The plugin against a misbehaving API server (errors, dropped connections,
# a server that drops device taints) and on the way out (SIGTERM: how fast,
# what it removes, what it keeps).
# shellcheck disable=SC2016,SC2154 # jq filters and eval'd checks; $output, $status come from run

load ../lib/node_suite

# faults_hit KIND: the stand-in's request log has requests hit by a fault of
# KIND (status or close).
faults_hit() {
    standin_requests | grep -q "\"fault\":\"$1\""
}

@test "robustness: API errors and dropped connections at start-up; the plugin rides them out and converges" {
    fakehw_config 4
    fakehw_start
    api_start
    # For 2 s every API request fails: Node reads get a 500, resource.k8s.io
    # requests lose their connection unanswered.
    standin_fault '{"status": 500, "seconds": 2, "path": "/api/v1/"}'
    standin_fault '{"close": true, "seconds": 2, "path": "/apis/"}'
    plugin_start
    kubelet_register
    # Every plugin lists or writes slices at start-up; reading the Node that
    # early is the fake driver's own step (the kubeletplugin helper of
    # k8s.io/dynamic-resource-allocation reads it once its slice informer
    # has synced, which the dropped connections delay past the 2 s).
    if [[ $NODE_FAKE_DRIVER == true ]]; then
        wait_for 5 "requests hit by both faults" eval 'faults_hit status && faults_hit close'
    else
        wait_for 5 "slice requests hit by the dropped connections" faults_hit close
    fi
    plugin_alive
    wait_pool_published "" 20
    plugin_alive
    claim_new c1 "$(pool_devices 1)"
    run -0 prepare_claims "$(ref c1)"
}

# A driver may read the claim with a GET (which now fails) or from a claim
# watch it keeps (which needs no API call): either it prepares, or it
# answers an error for the claim and leaves no CDI spec behind.  The error
# may also fail the whole call (the contract allows it: "If an error is
# returned, the response is ignored"; the kubeletplugin helper of
# k8s.io/dynamic-resource-allocation does so); the fake driver answers per claim.
@test "robustness: a prepare while the API server fails either prepares or gets an error with no files left; the same claim prepares afterwards" {
    node_up
    claim_new c1 "$(pool_devices 1)"
    standin_fault '{"status": 500, "count": 1000, "path": "/apis/resource.k8s.io/v1/namespaces/"}'
    run prepare_claims "$(ref c1)"
    if ((status == 0)); then
        run -0 files_mentioning "$CDI_ROOT" "$CLAIM_UID"
        refute_output ""
        run -0 unprepare_claims "$(ref c1)"
    else
        if ((status == 3)) && [[ $NODE_FAKE_DRIVER != true ]]; then
            assert_output --regexp "($NODE_NS/c1|$CLAIM_UID)"
        else
            assert_equal "$status" 1
            assert_line --regexp "^claim=$CLAIM_UID error=."
        fi
        run -0 files_mentioning "$CDI_ROOT" "$CLAIM_UID"
        assert_output ""
    fi
    standin_clear_faults
    run -0 prepare_claims "$(ref c1)"
    plugin_alive
}

@test "robustness: slice and claim status writes failing for a while still land afterwards [fakehw]" {
    node_up
    claim_new c1 gpu-2
    run -0 prepare_claims "$(ref c1)"
    wait_for 5 "claim c1: gpu-2 Ready" eval '[[ $(claim_condition c1 gpu-2) == "True DeviceHealthy" ]]'
    # Slice writes get 500s, claim status writes lose their connection (after
    # the write happened, so the plugin cannot know).
    standin_fault '{"status": 500, "seconds": 2, "path": "/apis/resource.k8s.io/v1/resourceslices"}'
    standin_fault '{"close": true, "after": true, "seconds": 2, "method": "PATCH"}'
    standin_fault '{"close": true, "seconds": 2, "method": "GET", "path": "/apis/resource.k8s.io/v1/namespaces/"}'
    fakehw_flip gpu-2 unhealthy "XID 48: DBE"
    # A driver that starts a status write from its claim watch does no GET:
    # then only the PATCH's dropped answer (close-after) shows.
    wait_for 5 "requests hit by the faults" eval 'faults_hit status && { faults_hit close || faults_hit close-after; }'
    wait_for 20 "the taint on gpu-2" eval \
        '[[ $(slices "[.[].spec.devices[] | select(.taints) | .name + \" \" + .taints[0].value] | join(\",\")" -r) == "gpu-2 XID-48" ]]'
    wait_for 20 "claim c1: gpu-2 not Ready" eval '[[ $(claim_condition c1 gpu-2) == "False XID48" ]]'
    wait_pool_published 4
    plugin_alive
}

@test "robustness: SIGTERM stops the plugin within NODE_STOP_SECONDS and removes its sockets" {
    node_up
    claim_new c1 "$(pool_devices 1)"
    run -0 prepare_claims "$(ref c1)"
    # The health service is optional (a plugin without it advertises none).
    local health=false
    if [[ -n ${NODE_HEALTH_SERVICE:-$(registration_value health_version)} ]]; then
        health_watch_start
        health=true
    fi
    local reg_sock
    reg_sock=$(registration_value socket)
    [[ $reg_sock == /* ]] || reg_sock=$PWD/$reg_sock
    [[ -S $reg_sock && -S $DRA_SOCK ]]
    plugin_stop TERM
    awk -v t="$PLUGIN_STOP_SECONDS" -v max="$NODE_STOP_SECONDS" 'BEGIN { exit !(t <= max) }' ||
        fail "the plugin took ${PLUGIN_STOP_SECONDS}s to stop (NODE_STOP_SECONDS=$NODE_STOP_SECONDS)"
    [[ ! -e $reg_sock ]] || fail "the registration socket $reg_sock is still there"
    [[ ! -e $DRA_SOCK ]] || fail "the DRA socket $DRA_SOCK is still there"
    if [[ $NODE_FAKE_DRIVER == true ]]; then
        assert_equal "$PLUGIN_STATUS" 0
        [[ ! -e $READY_FILE ]] || fail "the ready file is still there"
    fi
    # The open health stream ended.
    [[ $health == false ]] || wait_for 2 "watch-health to end" eval '! _ne_alive "$HEALTH_PID"'
}
