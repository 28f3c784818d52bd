#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# fakehw-kubelet-plugin's Prometheus endpoint (--metrics-address): after a
# prepare, an unprepare and a health flip, the counters and histograms a
# driver author reads have moved; the address is checked before anything
# starts, the log names the URL really bound, and idle connections cannot
# keep a scrape out.
# shellcheck disable=SC2016,SC2154 # jq filters; $output comes from run

load ../../conformance/node/lib/node_suite

# metrics_port: the port of the URL the plugin logged it serves the metrics at.
metrics_port() {
    sed -n 's|.*metrics: serving http://127\.0\.0\.1:\([0-9]*\)/metrics$|\1|p' "$PLUGIN_LOG" | tail -n 1 | grep .
}

scrape() {
    curl -sS --max-time 5 "http://127.0.0.1:$(metrics_port)/metrics"
}

# value NAME{LABELS}: one sample of the last scrape ($SCRAPE).
value() {
    awk -v k="$1" '$1 == k { print $2; found = 1 } END { exit !found }' <<<"$SCRAPE"
}

@test "metrics: prepare, unprepare, a flip and API requests show on /metrics [fake-driver,fakehw]" {
    fakehw_config 4
    node_start 4 --metrics-address 127.0.0.1:0
    wait_for 5 "the metrics port in the plugin log" metrics_port
    # Port 0 was asked for: the log names the one the kernel picked.
    [[ $(metrics_port) -gt 0 ]] || fail "logged port $(metrics_port)"

    SCRAPE=$(scrape)
    # The version --version prints, in the start line and as build_info.
    local release commit
    read -r _ release commit < <("$NODE_BIN/fakehw-kubelet-plugin" --version)
    commit=${commit#(git }
    commit=${commit%)}
    run -0 grep -F "starting fakehw-kubelet-plugin $release (git $commit): driver " "$PLUGIN_LOG"
    assert_equal "$(value "fakehw_dra_build_info{version=\"$release\",git_commit=\"$commit\"}")" 1
    assert_equal "$(value 'fakehw_dra_node_prepare_claims_total{result="success"}')" 0
    assert_equal "$(value fakehw_dra_claims_prepared)" 0
    assert_equal "$(value fakehw_dra_resourceslices)" 1
    assert_equal "$(value fakehw_dra_devices_published)" 4
    assert_equal "$(value fakehw_dra_health_flips_total)" 0
    # Publishing the pool at start-up is no flip: no latency sample.
    assert_equal "$(value fakehw_dra_health_change_to_slice_seconds_count)" 0
    assert_equal "$(value fakehw_dra_health_change_to_health_stream_seconds_count)" 0
    [[ $(value 'fakehw_dra_api_requests_total{verb="POST",code="201"}') -ge 1 ]] ||
        fail "no slice create counted: $(grep api_requests <<<"$SCRAPE")"

    claim_new c1 gpu-0 gpu-1
    claim_new c2 gpu-2
    run prepare_claims "$(ref c1)" "$(ref c2)" default/missing/00000000-0000-0000-0000-000000000001
    SCRAPE=$(scrape)
    assert_equal "$(value 'fakehw_dra_node_prepare_claims_total{result="success"}')" 2
    assert_equal "$(value 'fakehw_dra_node_prepare_claims_total{result="error"}')" 1
    assert_equal "$(value 'fakehw_dra_node_prepare_duration_seconds_count{result="success"}')" 2
    assert_equal "$(value 'fakehw_dra_node_prepare_duration_seconds_bucket{result="success",le="+Inf"}')" 2
    assert_equal "$(value fakehw_dra_claims_prepared)" 2
    [[ $(value 'fakehw_dra_api_requests_total{verb="GET",code="404"}') -ge 1 ]] ||
        fail "the missing claim's 404 is not counted: $(grep api_requests <<<"$SCRAPE")"

    fakehw_flip gpu-0 unhealthy "XID 79: GPU has fallen off the bus"
    wait_for 10 "the taint and the claim condition" eval '[[ $(claim_condition c1 gpu-0) == "False XID79" ]] && slices ".[].spec.devices[] | select(.name == \"gpu-0\") | .taints" -e >/dev/null'
    # (wait_for runs its command in a subshell: SCRAPE is read again after.)
    wait_for 5 "the flip in the metrics" eval 'SCRAPE=$(scrape) && [[ $(value fakehw_dra_health_change_to_claim_status_seconds_count) -ge 1 && $(value fakehw_dra_health_change_to_slice_seconds_count) -ge 1 ]]'
    SCRAPE=$(scrape)
    assert_equal "$(value fakehw_dra_health_flips_total)" 1
    assert_equal "$(value fakehw_dra_devices_tainted)" 1
    assert_equal "$(value fakehw_dra_health_change_to_health_stream_seconds_count)" 1
    # One flip, one sample: the flip's sync, not the start-up publish too.
    assert_equal "$(value fakehw_dra_health_change_to_slice_seconds_count)" 1
    [[ $(value fakehw_dra_claim_status_writes_total) -ge 2 ]] || fail "claim status writes not counted"

    run unprepare_claims "$(ref c2)"
    assert_success
    SCRAPE=$(scrape)
    assert_equal "$(value 'fakehw_dra_node_unprepare_claims_total{result="success"}')" 1
    assert_equal "$(value fakehw_dra_claims_prepared)" 1
    # Anything else than GET /metrics is refused.
    run curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(metrics_port)/"
    assert_output 404
}

@test "metrics: a prepare reads an allocated claim from the plugin's watch, with no GET [fake-driver,fakehw]" {
    fakehw_config 2
    node_start 2 --metrics-address 127.0.0.1:0 -v 3
    wait_for 5 "the metrics port in the plugin log" metrics_port

    claim_new c1 gpu-0
    claim_create c2 gpu=1 # not allocated: the watch does not keep it
    wait_for 10 "c1 in the plugin's claim watch" eval '[[ $(scrape | awk "\$1 == \"fakehw_dra_claims_watched\" { print \$2 }") == 1 ]]'
    # The watch's copy has another name for that uid: a GET, which decides.
    run prepare_claims "$NODE_NS/other/${CLAIM_UIDS[c1]}"
    assert_output --partial "404"
    standin_clear_requests
    run prepare_claims "$(ref c1)"
    assert_success
    SCRAPE=$(scrape)
    assert_equal "$(value 'fakehw_dra_prepare_claim_reads_total{source="watch"}')" 1
    assert_equal "$(value 'fakehw_dra_prepare_claim_reads_total{source="get"}')" 1
    run jq -rs --arg p "$RESOURCE_API/namespaces/$NODE_NS/resourceclaims/c1" \
        '[.[] | select(.method == "GET" and .path == $p)] | length' < <(standin_requests)
    assert_output 0
    # The claim-status writer started from the watch's copy too: a PATCH, no GET.
    wait_for 10 "the status PATCH of c1" eval '[[ $(standin_requests | jq -s --arg p "$RESOURCE_API/namespaces/$NODE_NS/resourceclaims/c1/status" "[.[] | select(.method == \"PATCH\" and (.path | startswith(\$p)))] | length") -ge 1 ]]'
    run jq -rs --arg p "$RESOURCE_API/namespaces/$NODE_NS/resourceclaims/c1" \
        '[.[] | select(.method == "GET" and .path == $p)] | length' < <(standin_requests)
    assert_output 0

    # -v 3: the steps of the prepare and the gRPC timeline of its call.
    run -0 grep -E "claim $NODE_NS/c1 \(uid ${CLAIM_UIDS[c1]}\): prepare [0-9.]+ ms: wait [0-9.]+, checkpoint [0-9.]+, claim [0-9.]+, plan [0-9.]+, files [0-9.]+" "$PLUGIN_LOG"
    run -0 grep -E "rpc /k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources on dra: [0-9.]+ ms from arrival to sent: request read [0-9.]+, to a worker [0-9.]+, handler [0-9.]+, reply sent [0-9.]+" "$PLUGIN_LOG"

    # Not in the watch (never allocated): a GET, which finds no allocation.
    run prepare_claims "$(ref c2)"
    assert_output --partial "not allocated"
    SCRAPE=$(scrape)
    assert_equal "$(value 'fakehw_dra_prepare_claim_reads_total{source="watch"}')" 1
    assert_equal "$(value 'fakehw_dra_prepare_claim_reads_total{source="get"}')" 2
}

@test "metrics: off by default; a bad or taken --metrics-address is refused naming the flag, before any API call [fake-driver]" {
    fakehw_config 1
    fakehw_start
    api_start
    plugin_start
    kubelet_register
    wait_pool_published 1
    run grep -c 'metrics: serving' "$PLUGIN_LOG"
    assert_output 0
    plugin_stop TERM
    standin_clear_requests
    run "$NODE_BIN/fakehw-kubelet-plugin" --node-name "$NODE" --kubeconfig "$KUBECONFIG_FILE" \
        --fakehw-root "$MNT" --kubelet-registrar-directory-path "$REG_DIR" \
        --kubelet-plugins-directory-path "$PLUGINS_DIR" --cdi-root "$CDI_ROOT" --metrics-address 9400
    assert_failure
    assert_output --partial 'metrics address "9400": want HOST:PORT'
    # The API stand-in's own port is taken.
    local taken=127.0.0.1:${API##*:}
    run "$NODE_BIN/fakehw-kubelet-plugin" --node-name "$NODE" --kubeconfig "$KUBECONFIG_FILE" \
        --fakehw-root "$MNT" --kubelet-registrar-directory-path "$REG_DIR" \
        --kubelet-plugins-directory-path "$PLUGINS_DIR" --cdi-root "$CDI_ROOT" --metrics-address "$taken"
    assert_failure
    assert_output --partial "--metrics-address: metrics server: cannot listen on $taken"
    assert_output --partial "Address already in use"
    run standin_requests
    assert_output ''
}

# scrape_answered: one scrape, given a second.
scrape_answered() {
    curl -sS --max-time 1 "http://127.0.0.1:$(metrics_port)/metrics" | grep -q '^fakehw_dra_build_info'
}

@test "metrics: a burst of 160 idle connections does not keep a scrape out [fake-driver]" {
    fakehw_config 2
    node_start 2 --metrics-address 127.0.0.1:0
    wait_for 5 "the metrics port in the plugin log" metrics_port
    local port fd fds=() i t0 ms
    port=$(metrics_port)
    # Each sends half a request and waits: the kernel takes every
    # connection; the server holds 16 and must not let the rest queue.
    for ((i = 0; i < 160; i++)); do
        exec {fd}<>"/dev/tcp/127.0.0.1/$port"
        # In a subshell: a connection the server closed at once may refuse
        # the write with SIGPIPE.
        (printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n' >&"$fd") 2>/dev/null || true
        fds+=("$fd")
    done
    t0=$(_ne_now)
    wait_for 3 "a scrape to be answered" scrape_answered
    ms=$((($(_ne_now) - t0) / 1000))
    echo "# a scrape answered ${ms} ms after a burst of 160 half-sent requests" >&3
    for fd in "${fds[@]}"; do
        exec {fd}>&-
    done
    plugin_alive || fail "the plugin died"
}
