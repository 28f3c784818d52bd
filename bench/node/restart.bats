#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The fake driver's checkpoint across restarts: a corrupted snapshot, a torn
# or damaged journal line, a CDI root emptied by a reboot; what the plugin
# logs and rebuilds.
# White-box: these read fakehw-kubelet-plugin's own log, so they live beside
# the benchmarks, not in the conformance kit (whose node environment they use).
# shellcheck disable=SC2016,SC2154 # jq filters and eval'd checks; $output, $status come from run

load ../../conformance/node/lib/node_suite
load ../../conformance/node/lib/checkpoint

setup() {
    node_setup
    JOURNAL=$PLUGIN_DIR/checkpoint.journal
}

@test "restart: a corrupted checkpoint is reported and rebuilt from the CDI specs, which stay [fake-driver]" {
    node_up
    claim_new c1 gpu-1 gpu-2
    claim_new c2 gpu-3
    run -0 prepare_json "$(ref c1)" "$(ref c2)"
    local first=$output specs
    specs=$(file_stamps "$CDI_ROOT")
    plugin_stop TERM
    printf '{"checksum": "crc32:00000000", "claims": {garbage' >"$CHECKPOINT"
    plugin_restart
    run -0 grep -E "checkpoint is corrupt: $CHECKPOINT: .*moved $CHECKPOINT to $CHECKPOINT\.corrupt-" "$PLUGIN_LOG"
    run -0 compgen -G "$CHECKPOINT.corrupt-*"
    assert_equal "$(cat "$output")" '{"checksum": "crc32:00000000", "claims": {garbage'
    # The specs of the prepared claims are still there, untouched.
    assert_equal "$(file_stamps "$CDI_ROOT")" "$specs"
    # The rebuilt checkpoint holds both claims and answers as before.
    assert_equal "$(jq -r '[.claims[].state] | join(" ")' "$CHECKPOINT")" "PrepareCompleted PrepareCompleted"
    run -0 prepare_json "$(ref c1)" "$(ref c2)"
    assert_equal "$output" "$first"
    run -0 unprepare_claims "$(ref c1)" "$(ref c2)"
    # The metadata specs follow the answer by a few milliseconds.
    wait_for 5 "an empty CDI root" eval '[[ -z $(find "$CDI_ROOT" -type f) ]]'
    assert_equal "$(checkpoint_claims)" "{}"
}

@test "restart: a torn last journal line (kill -9 during an append) is dropped, the rest replayed [fake-driver]" {
    node_up
    claim_new c1 gpu-0
    claim_new c2 gpu-1
    run -0 prepare_json "$(ref c1)" "$(ref c2)"
    local first=$output
    # One line per prepare, appended since the start-up compaction.
    assert_equal "$(wc -l <"$JOURNAL")" 2
    plugin_kill9
    # Half a line without its newline: an append the crash cut short.
    printf 'crc32:1a2b3c4d {"op":"unprepared","uid":"%s' "${CLAIM_UIDS[c1]}" >>"$JOURNAL"
    plugin_restart
    run -0 grep -F "$JOURNAL: line 3 is torn (no newline" "$PLUGIN_LOG"
    run -1 compgen -G "$PLUGIN_DIR/*.corrupt-*"
    run -1 grep -F "checkpoint is corrupt" "$PLUGIN_LOG"
    # Compacted at start-up: the torn line is gone, both claims are in checkpoint.json.
    assert_equal "$(wc -c <"$JOURNAL")" 0
    assert_equal "$(jq -c '.claims | keys | length' "$CHECKPOINT")" 2
    standin_fault '{"status": 500, "seconds": 60, "path": "/apis/resource.k8s.io/v1/namespaces/"}'
    run -0 prepare_json "$(ref c1)" "$(ref c2)"
    assert_equal "$output" "$first"
}

@test "restart: a bad journal line before the last one is corruption: both files go aside, claims rebuilt from the specs [fake-driver]" {
    node_up
    claim_new c1 gpu-0
    claim_new c2 gpu-1
    run -0 prepare_json "$(ref c1)" "$(ref c2)"
    local first=$output
    plugin_kill9
    # A flipped character in line 1: its checksum no longer matches.
    sed -i '1s/"gpu-0"/"gpu-9"/' "$JOURNAL"
    local damaged
    damaged=$(cat "$JOURNAL")
    plugin_restart
    run -0 grep -E "checkpoint is corrupt: $JOURNAL: line 1: checksum mismatch: .*moved $CHECKPOINT to $CHECKPOINT\.corrupt-[0-9TZ]+ and $JOURNAL to $JOURNAL\.corrupt-" "$PLUGIN_LOG"
    run -0 compgen -G "$JOURNAL.corrupt-*"
    assert_equal "$(cat "$output")" "$damaged"
    assert_equal "$(checkpoint_claims | jq -r '[.[].state] | join(" ")')" "PrepareCompleted PrepareCompleted"
    standin_fault '{"status": 500, "seconds": 60, "path": "/apis/resource.k8s.io/v1/namespaces/"}'
    run -0 prepare_json "$(ref c1)" "$(ref c2)"
    assert_equal "$output" "$first"
}

@test "restart: after a reboot emptied the CDI root, the kubelet's repeated prepare prepares the claim afresh [fake-driver]" {
    node_up
    claim_new c1 gpu-1 gpu-2
    claim_new c2 gpu-3
    run -0 prepare_json "$(ref c1)" "$(ref c2)"
    local first=$output
    plugin_kill9
    # /var/run/cdi is a tmpfs: a reboot leaves the checkpoint and nothing else.
    rm -f "$CDI_ROOT"/*
    plugin_restart
    run -0 grep -E "claim $NODE_NS/c1 \(uid ${CLAIM_UIDS[c1]}\): .* is missing or empty .*dropping the claim" "$PLUGIN_LOG"
    assert_equal "$(checkpoint_claims)" "{}"
    run -0 prepare_json "$(ref c1)" "$(ref c2)"
    assert_equal "$output" "$first"
    cdi_ids_resolve "$output"
    # The same while the plugin runs: a spec gone, the next prepare rewrites it.
    rm "$CDI_ROOT/k8s.$DRIVER-gpu_${CLAIM_UIDS[c2]}.json"
    run -0 prepare_json "$(ref c2)"
    local only_c2='.claims[] | select(.uid == $u)'
    assert_equal "$(jq -c --arg u "${CLAIM_UIDS[c2]}" "$only_c2" <<<"$output")" \
        "$(jq -c --arg u "${CLAIM_UIDS[c2]}" "$only_c2" <<<"$first")"
    cdi_ids_resolve "$output"
    run -0 grep -E "claim $NODE_NS/c2 .* is missing or empty .*preparing the claim afresh" "$PLUGIN_LOG"
    run -0 unprepare_claims "$(ref c1)" "$(ref c2)"
    # The metadata specs follow the answer by a few milliseconds.
    wait_for 5 "an empty CDI root" eval '[[ -z $(find "$CDI_ROOT" -type f) ]]'
}
