#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# NodePrepareResources / NodeUnprepareResources of the plugin under test,
# called like the kubelet calls them (kubelet-standin), on claims made
# directly in the API server stand-in: what each claim gets, per-claim errors,
# idempotence, cleanup, hostile claim references, and a plugin killed or with
# a damaged checkpoint (snapshot or journal) between prepare and unprepare, or
# restarted after a "reboot" emptied the CDI root.
# shellcheck disable=SC2016,SC2154 # jq filters and eval'd checks; $output, $status come from run

load ../lib/node_suite
load ../lib/checkpoint

setup() {
    node_setup
    JOURNAL=$PLUGIN_DIR/checkpoint.journal
}

# answer_devices JSON UID: "pool device request,..." per device of the claim
# UID in a prepare answer, and its error if any.
answer_devices() {
    jq -r --arg uid "$2" '.claims[] | select(.uid == $uid) |
        if .error then "error: \(.error)" else (.devices[] | "\(.pool) \(.device) \(.requests | join(","))") end' <<<"$1"
}

# spec_env UID NAME: the value of env NAME in the fake driver's claim spec.
spec_env() {
    jq -r --arg n "$2=" '.containerEdits.env[] | select(startswith($n)) | ltrimstr($n)' \
        "$CDI_ROOT/k8s.$DRIVER-gpu_$1.json"
}

# plugin_files_mentioning UID: files of the plugin dir that name UID, but the
# checkpoint's two files: the journal records past changes, and the snapshot
# keeps a claim unprepared since it was written, until the next compaction
# (checkpoint_claims tells what they hold together).
plugin_files_mentioning() {
    files_mentioning "$PLUGIN_DIR" "$1" | grep -vxF -e "$JOURNAL" -e "$CHECKPOINT" || true
}

# tree_listing: every path under the test's directory but the logs, in
# $TREE_FORMAT (find -printf).
tree_listing() {
    (cd "$BATS_TEST_TMPDIR" && find . -path ./logs -prune -o -printf "$TREE_FORMAT" | sort)
}

# refused_alone METHOD NS UID NAME: the plugin refuses the claim reference:
# the whole call fails, or the claim gets an error and no device.  Another
# plugin may also answer an unprepare with success: no claim of that
# reference was ever prepared, and unprepare of an unknown claim succeeds
# (the contract; "unprepare: a claim that was never prepared ... succeeds").
# Whether it wrote or removed anything, the test's tree listing tells.
refused_alone() {
    run dra_call_raw "$@"
    if ((status == 0)); then
        local entry
        entry=$(sed -n 's/^answer=//p' <<<"$output" | jq -c --arg uid "$3" '.[$uid]')
        [[ $entry != null ]] || fail "$1 $2/$4/$3: the answer has no entry for the claim: $output"
        if [[ $1 == NodeUnprepareResources && $NODE_FAKE_DRIVER != true ]]; then
            return 0
        fi
        jq -e '.error != "" and .devices == 0' <<<"$entry" >/dev/null ||
            fail "$1 $2/$4/$3: accepted: $entry"
    else
        # A gRPC error status for the whole call (kubelet-standin call: 3).
        assert_equal "$status" 3
        assert_line --regexp '^status=[A-Z_]+$'
        refute_line status=OK
    fi
}

# claim_refused UID NS/NAME: the last `run prepare_claims` refused the claim:
# an error entry for it (kubelet-standin: 1), or, from a plugin other than
# the fake driver, a failed call (3) whose message names the claim.  The
# contract allows both: "If an error is returned, the response is ignored.
# Failures for individual claims can be reported inside
# NodePrepareResourcesResponse" (k8s.io/kubelet/pkg/apis/dra/v1/api.proto);
# the kubeletplugin helper of k8s.io/dynamic-resource-allocation fails the
# call when it cannot use a claim.  Sets CALL_FAILED (true or false).
claim_refused() {
    if ((status == 3)) && [[ $NODE_FAKE_DRIVER != true ]]; then
        CALL_FAILED=true
        assert_output --regexp "($2|$1)"
    else
        CALL_FAILED=false
        assert_equal "$status" 1
        assert_line --regexp "^claim=$1 error=.*"
    fi
}

@test "prepare: a one-device claim gets its device, with CDI ids of specs in the CDI root" {
    node_up
    local dev
    dev=$(pool_devices 1)
    claim_new c1 "$dev"
    run -0 prepare_json "$(ref c1)"
    local answer=$output
    assert_equal "$(answer_devices "$answer" "$CLAIM_UID")" "$POOL $dev gpu"
    run -0 cdi_ids "$answer"
    refute_output ""
    cdi_ids_resolve "$answer"
    # The text form agrees.
    run -0 prepare_claims "$(ref c1)"
    assert_output --partial "claim=$CLAIM_UID pool=$POOL device=$dev requests=gpu cdi="
}

@test "prepare: the fake driver's CDI layout for a one-device claim [fake-driver]" {
    node_up
    claim_new c1 gpu-1
    run -0 prepare_claims "$(ref c1)"
    assert_output "claim=$CLAIM_UID pool=$NODE device=gpu-1 requests=gpu cdi=k8s.$DRIVER/gpu=$CLAIM_UID-gpu-1,$DRIVER/metadata=${CLAIM_UID}_gpu"
    assert_equal "$(spec_env "$CLAIM_UID" FAKEHW_VISIBLE_DEVICES)" "$(device_attr gpu-1 uuid)"
    assert_equal "$(spec_env "$CLAIM_UID" DRA_CLAIM_UID)" "$CLAIM_UID"
    assert_equal "$(jq -r .cdiVersion "$CDI_ROOT/k8s.$DRIVER-gpu_$CLAIM_UID.json")" 0.5.0
    local meta=$PLUGIN_DIR/dra-device-metadata/${NODE_NS}_c1/gpu/metadata.json
    assert_equal "$(jq -r '.requests[0].devices[0].attributes.uuid.string' "$meta")" "$(device_attr gpu-1 uuid)"
    assert_equal "$(checkpoint_claims | jq -r --arg u "$CLAIM_UID" '.[$u].state')" PrepareCompleted
}

@test "prepare: a multi-device claim with two requests: every device, in allocation order" {
    node_up 4
    local d
    mapfile -t d < <(pool_devices 3)
    claim_create c1 gpus=2 extra=1
    claim_allocate_results c1 "$(results "gpus=${d[0]},${d[2]}" "extra=${d[1]}")"
    run -0 prepare_json "$(ref c1)"
    local answer=$output
    assert_equal "$(answer_devices "$answer" "$CLAIM_UID")" "$POOL ${d[0]} gpus
$POOL ${d[2]} gpus
$POOL ${d[1]} extra"
    cdi_ids_resolve "$answer"
    if [[ $NODE_FAKE_DRIVER == true ]]; then
        # One metadata device per request; all three GPUs visible, in order.
        assert_equal "$(cdi_ids "$answer" | grep -c /metadata=)" 2
        assert_equal "$(spec_env "$CLAIM_UID" FAKEHW_VISIBLE_DEVICES)" \
            "$(device_attr "${d[0]}" uuid),$(device_attr "${d[2]}" uuid),$(device_attr "${d[1]}" uuid)"
    fi
}

@test "prepare: a claim the scheduler made for a pod's extended resources is prepared like any other" {
    node_up
    local d
    mapfile -t d < <(pool_devices 2)
    # What kube-scheduler creates for a pod asking <class's extendedResourceName>: 1
    # in two containers (KEP-5004): one request per container, named
    # container-<i>-request-<j>, and the extended-resource-claim annotation.
    claim_post pod-a-extended-resources-x7k2p "$(jq -cn --arg c "$DRIVER" '{
        apiVersion: "resource.k8s.io/v1", kind: "ResourceClaim",
        metadata: {name: "pod-a-extended-resources-x7k2p",
                   annotations: {"resource.kubernetes.io/extended-resource-claim": "true"}},
        spec: {devices: {requests: [
            {name: "container-0-request-0", exactly: {deviceClassName: $c, allocationMode: "ExactCount", count: 1}},
            {name: "container-1-request-0", exactly: {deviceClassName: $c, allocationMode: "ExactCount", count: 1}}]}}}')"
    claim_allocate_results pod-a-extended-resources-x7k2p \
        "$(results "container-0-request-0=${d[0]}" "container-1-request-0=${d[1]}")"
    run -0 prepare_json "$(ref pod-a-extended-resources-x7k2p)"
    local answer=$output
    assert_equal "$(answer_devices "$answer" "${CLAIM_UIDS[pod-a-extended-resources-x7k2p]}")" "$POOL ${d[0]} container-0-request-0
$POOL ${d[1]} container-1-request-0"
    cdi_ids_resolve "$answer"
    run -0 unprepare_claims "$(ref pod-a-extended-resources-x7k2p)"
}

@test "prepare: a claim shared by two pods: the second prepare gives the same answer and rewrites nothing" {
    node_up
    claim_new shared "$(pool_devices 1)"
    run -0 prepare_json "$(ref shared)"
    local first=$output before plugin_before
    before=$(file_stamps "$CDI_ROOT")
    plugin_before=$(file_stamps "$PLUGIN_DIR")
    [[ -n $before ]] || fail "the first prepare wrote no CDI spec into $CDI_ROOT"
    run -0 prepare_json "$(ref shared)"
    assert_equal "$output" "$first"
    # Same inodes, sizes and nanosecond mtimes: no file was rewritten.
    assert_equal "$(file_stamps "$CDI_ROOT")" "$before"
    if [[ $NODE_FAKE_DRIVER == true ]]; then
        assert_equal "$(file_stamps "$PLUGIN_DIR")" "$plugin_before"
    fi
}

@test "prepare: devices of another driver in the claim are left alone; a claim of another driver only prepares to no devices" {
    node_up
    local dev
    dev=$(pool_devices 1)
    # The kubelet sends a claim to every driver of its allocation results:
    # each prepares its own devices and ignores the others'.
    claim_create mixed gpu=2
    claim_allocate_results mixed "[$(results "gpu=$dev" | jq -c '.[0]'),
        {\"request\": \"gpu\", \"driver\": \"other.example.com\", \"pool\": \"elsewhere\", \"device\": \"dev-0\"}]"
    run -0 prepare_json "$(ref mixed)"
    assert_equal "$(answer_devices "$output" "$CLAIM_UID")" "$POOL $dev gpu"
    run -0 files_mentioning "$CDI_ROOT" elsewhere
    assert_output ""
    # A claim allocated only to another driver: the kubelet never sends
    # it here (k8s.io/kubernetes pkg/kubelet/cm/dra: a claim goes to the
    # drivers of its results), so only the fake driver is held to an answer.
    [[ $NODE_FAKE_DRIVER == true ]] || return 0
    claim_create other
    claim_allocate_results other \
        '[{"request": "gpu", "driver": "other.example.com", "pool": "elsewhere", "device": "dev-0"}]'
    run -0 prepare_json "$(ref other)"
    assert_equal "$(jq -c '.claims[0] | [.uid, .error // "", (.devices // [] | length)]' <<<"$output")" \
        "[\"$CLAIM_UID\",\"\",0]"
    run -0 files_mentioning "$CDI_ROOT" "$CLAIM_UID"
    assert_output ""
}

@test "prepare: an unallocated claim fails alone, with an error naming the claim" {
    node_up
    claim_create pending
    local pending_uid=$CLAIM_UID
    claim_new good "$(pool_devices 1)"
    run prepare_claims "$(ref pending)" "$(ref good)"
    claim_refused "$pending_uid" "$NODE_NS/pending"
    if [[ $CALL_FAILED == true ]]; then
        # The kubelet ignores the answer of a failed call and tries again
        # later: the good claim prepares on its own.
        run -0 prepare_claims "$(ref good)"
    else
        assert_line --regexp "^claim=$pending_uid error=.*($NODE_NS/pending|$pending_uid)"
    fi
    assert_line --regexp "^claim=${CLAIM_UIDS[good]} pool=$POOL device="
    if [[ $NODE_FAKE_DRIVER == true ]]; then
        assert_line --partial "not allocated"
    fi
    run -0 files_mentioning "$CDI_ROOT" "$pending_uid"
    assert_output ""
}

@test "prepare: a claim replaced in the API server (another uid) is refused" {
    node_up
    local dev
    dev=$(pool_devices 1)
    claim_new c1 "$dev"
    local old_ref
    old_ref=$(ref c1)
    local old_uid=$CLAIM_UID
    claim_delete c1
    claim_new c1 "$dev"
    [[ $CLAIM_UID != "$old_uid" ]]
    run prepare_claims "$old_ref"
    claim_refused "$old_uid" "$NODE_NS/c1"
    if [[ $NODE_FAKE_DRIVER == true ]]; then
        assert_output --partial "got replaced"
        assert_output --partial "$CLAIM_UID"
    fi
    run -0 files_mentioning "$CDI_ROOT" "$old_uid"
    assert_output ""
    # The new claim itself prepares.
    run -0 prepare_claims "$(ref c1)"
}

@test "prepare: re-prepare is answered from the checkpoint while the API server fails [fake-driver]" {
    node_up
    claim_new c1 gpu-0 gpu-3
    run -0 prepare_json "$(ref c1)"
    local first=$output
    # Every claim request fails now: only the checkpoint can answer.
    standin_fault '{"status": 500, "seconds": 60, "path": "/apis/resource.k8s.io/v1/namespaces/"}'
    run -0 prepare_json "$(ref c1)"
    assert_equal "$output" "$first"
}

@test "prepare: after unprepare the claim prepares afresh" {
    node_up
    claim_new c1 "$(pool_devices 2 | tail -n 1)"
    run -0 prepare_json "$(ref c1)"
    local first=$output
    run -0 unprepare_claims "$(ref c1)"
    run -0 prepare_json "$(ref c1)"
    assert_equal "$output" "$first"
    cdi_ids_resolve "$output"
    # A driver that removes an unprepared claim's files after the answer
    # must not remove those of the new prepare: still there a while later.
    sleep 0.5
    cdi_ids_resolve "$output"
}

@test "unprepare: the claims' CDI specs and files go; every claim of the request gets an entry" {
    node_up
    local d unknown=0d4f5b2e-8c1a-4e7b-9f3d-2a6c8e0b1d57
    mapfile -t d < <(pool_devices 3)
    claim_new c1 "${d[0]}" "${d[1]}"
    claim_new c2 "${d[2]}"
    run -0 prepare_claims "$(ref c1)" "$(ref c2)"
    [[ -n $(files_mentioning "$CDI_ROOT" "${CLAIM_UIDS[c1]}") ]] || fail "prepare wrote no CDI spec for c1"
    run -0 unprepare_claims "$(ref c1)" "$NODE_NS/never-prepared/$unknown" "$(ref c2)"
    assert_output "claim=${CLAIM_UIDS[c1]} ok
claim=$unknown ok
claim=${CLAIM_UIDS[c2]} ok"
    # A driver may remove the claims' CDI specs right after the answer (the
    # fake driver does: removed before it, they made the kubelet wait while
    # the runtime re-read the CDI directory).  No container can ask for them
    # any more: their CDI ids name the unprepared claims.
    local uid
    for uid in "${CLAIM_UIDS[c1]}" "${CLAIM_UIDS[c2]}"; do
        wait_for 5 "no CDI spec mentioning $uid" eval "[[ -z \$(files_mentioning \"\$CDI_ROOT\" $uid) ]]"
    done
    if [[ $NODE_FAKE_DRIVER == true ]]; then
        # Metadata files and checkpoint entries are gone too, right after the
        # answer (the metadata directory and the journal line follow it).
        wait_for 5 "the claims' metadata and checkpoint entries gone" eval \
            '[[ -z $(plugin_files_mentioning "${CLAIM_UIDS[c1]}")$(plugin_files_mentioning "${CLAIM_UIDS[c2]}") && $(checkpoint_claims) == "{}" ]]'
        if [[ -d $PLUGIN_DIR/dra-device-metadata ]]; then
            run -0 find "$PLUGIN_DIR/dra-device-metadata" -mindepth 1
            assert_output ""
        fi
    fi
}

@test "unprepare: a claim that was never prepared (or is unknown to the API server) succeeds" {
    node_up
    claim_new c1 "$(pool_devices 1)"
    run -0 unprepare_claims "$(ref c1)"
    assert_output "claim=$CLAIM_UID ok"
    run -0 unprepare_claims "$NODE_NS/no-such-claim/4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
    assert_output "claim=4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f ok"
    # Twice after a prepare: the second unprepare finds nothing and succeeds.
    run -0 prepare_claims "$(ref c1)"
    run -0 unprepare_claims "$(ref c1)"
    run -0 unprepare_claims "$(ref c1)"
    assert_output "claim=$CLAIM_UID ok"
}

@test "prepare: claim references that would escape the plugin's directories are refused; nothing is written" {
    # Three levels deep, so that ../../ and ../../../ from any directory of
    # the plugin stay inside this test's directory, where find sees them.
    node_setup "$BATS_TEST_TMPDIR/r/a/b"
    node_up
    claim_new c1 "$(pool_devices 1)"
    local good=$CLAIM_UID before bad ns uid name method
    if [[ $NODE_FAKE_DRIVER == true ]]; then
        # Nothing may change at all (the ready file is the last write of the
        # start-up).  Another plugin may write files of its own at any time:
        # for it, only paths count.
        wait_for 2 "the ready file" test -s "$READY_FILE"
        TREE_FORMAT='%p %i %s %T@\n'
    else
        TREE_FORMAT='%p\n'
        # Its first call may create its own state (dra-example-driver
        # writes checkpoint.json on its first unprepare): one of a
        # well-formed unknown claim comes first.
        run -0 unprepare_claims "$NODE_NS/no-such-claim/4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
    fi
    before=$(tree_listing)
    for bad in "$NODE_NS ../../etc c1" "$NODE_NS ../../../escape c1" "$NODE_NS $good/../../x c1" \
        ".. $good c1" "../.. $good c1" "$NODE_NS $good ../../c1" "$NODE_NS $good .."; do
        read -r ns uid name <<<"$bad"
        for method in NodePrepareResources NodeUnprepareResources; do
            refused_alone "$method" "$ns" "$uid" "$name"
            if [[ $NODE_FAKE_DRIVER == true ]]; then
                assert_output --regexp 'not a UID|not a DNS label|not a DNS subdomain'
            fi
        done
    done
    # Nothing was created, changed in place or removed anywhere around.
    assert_equal "$(tree_listing)" "$before"
    # An empty uid cannot even be answered (it keys the answer map): the
    # call fails.  The fake driver says INVALID_ARGUMENT; the kubelet treats
    # every non-OK status alike, so another plugin may use another code.
    run -3 dra_call_raw NodePrepareResources "$NODE_NS" "" c1
    refute_line status=OK
    if [[ $NODE_FAKE_DRIVER == true ]]; then
        assert_line status=INVALID_ARGUMENT
    fi
    # The claim itself is untouched and still prepares.
    run -0 prepare_claims "$(ref c1)"
}

@test "restart: kill -9 between prepare and unprepare; the new instance answers the same and unprepare cleans up" {
    node_up
    local d
    mapfile -t d < <(pool_devices 2)
    claim_new c1 "${d[@]}"
    run -0 prepare_json "$(ref c1)"
    local first=$output
    plugin_kill9
    plugin_restart
    if [[ $NODE_FAKE_DRIVER == true ]]; then
        # From the checkpoint: the claim cannot be fetched now.
        standin_fault '{"status": 500, "seconds": 60, "path": "/apis/resource.k8s.io/v1/namespaces/"}'
    fi
    run -0 prepare_json "$(ref c1)"
    assert_equal "$output" "$first"
    cdi_ids_resolve "$output"
    [[ $NODE_FAKE_DRIVER != true ]] || standin_clear_faults
    run -0 unprepare_claims "$(ref c1)"
    wait_for 5 "no CDI spec mentioning the claim" eval '[[ -z $(files_mentioning "$CDI_ROOT" "$CLAIM_UID") ]]'
    if [[ $NODE_FAKE_DRIVER == true ]]; then
        # Its metadata directory and its journal line follow the answer.
        wait_for 5 "the claim's metadata and checkpoint entry gone" eval \
            '[[ -z $(plugin_files_mentioning "$CLAIM_UID") && $(checkpoint_claims) == "{}" ]]'
    fi
}
