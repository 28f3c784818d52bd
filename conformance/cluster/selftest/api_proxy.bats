#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Reads through kubectl proxy (lib/api_proxy.bash): which kubectl calls the
# proxy answers, that its answers are kubectl's (objects, lists with their
# kinds, names, NotFound errors), that the preflight falls back to kubectl
# when the proxy cannot start, and that the proxy ends with the suite.  The
# fake cluster's `kubectl proxy` is bin/fake_api_proxy.py.

# Tests set suite parameters as globals that the sourced helpers read.
# shellcheck disable=SC2030,SC2031,SC2034,SC2154
load selftest

setup() {
    selftest_setup
    export CONFORMANCE_API_PROXY=true
    params_defaults
    # The proxy serves <path with / as _>.json of the fake cluster.
    jq '{items: [.items[] | {kind: "ResourceSlice", apiVersion: "resource.k8s.io/v1"} + .]}' \
        "$FAKE_CLUSTER/slices.json" >"$FAKE_CLUSTER/api_apis_resource.k8s.io_v1_resourceslices.json"
    jq '.items[0] + {kind: "Pod", apiVersion: "v1"}' "$SELFTEST_DIR/fixtures/test-pods.json" \
        >"$FAKE_CLUSTER/api_api_v1_namespaces_ns1_pods_ready.json"
    jq '{items: [.items[] | {kind: "Pod", apiVersion: "v1"} + .]}' "$SELFTEST_DIR/fixtures/test-pods.json" \
        >"$FAKE_CLUSTER/api_api_v1_namespaces_ns1_pods.json"
    SHORT_TMP=$(mktemp -d) # a unix socket path must stay short
}

teardown() {
    [[ -z ${OWNER:-} ]] || kill "$OWNER" 2>/dev/null || true
    rm -rf "$SHORT_TMP"
}

# start OWNER_PID: the preflight's start, with the given process as the suite.
start() {
    sleep 600 3>&- &
    OWNER=$!
    start_api_proxy "$SHORT_TMP" "$OWNER"
}

@test "api proxy: plain reads with a namespace are planned as API paths; everything else stays kubectl's" {
    api_read_plan get pod -n ns1 ready -o json
    assert_equal "$API_PATH" /api/v1/namespaces/ns1/pods/ready
    api_read_plan get resourceslices --field-selector "spec.driver=d,spec.nodeName=n" -o json
    assert_equal "$API_PATH" /apis/resource.k8s.io/v1/resourceslices
    assert_equal "$API_FIELDS" "spec.driver=d,spec.nodeName=n"
    api_read_plan get pods -n fakehw-dra -l app=x --field-selector spec.nodeName=w -o json
    assert_equal "$API_PATH" /api/v1/namespaces/fakehw-dra/pods
    assert_equal "$API_LABELS" app=x
    api_read_plan get resourceclaim -n ns1 c -o name
    assert_equal "$API_NAME_PREFIX/$API_NAME" resourceclaim.resource.k8s.io/c
    api_read_plan get deviceclass gpu.example.com -o json
    assert_equal "$API_PATH" /apis/resource.k8s.io/v1/deviceclasses/gpu.example.com
    api_read_plan get daemonset -n d ds -o json
    assert_equal "$API_PATH" /apis/apps/v1/namespaces/d/daemonsets/ds
    local -a no
    for no in "create -f -" "get pods -o json" "get pod -n ns1 ready -o wide" \
        "get pod -n ns1 ready -o jsonpath={.spec}" "get pods,resourceclaims -n ns1 -o json" \
        "get pods -A -o json" "get devicetaintrules -o json" "get pod -n ns1 a b -o json" \
        "get --raw /metrics" "delete pod -n ns1 a" "get pod -n ns1 ready"; do
        read -ra words <<<"$no"
        run api_read_plan "${words[@]}"
        assert_failure
    done
}

@test "api proxy: the preflight's proxy answers as kubectl does: objects, lists with kinds, names, NotFound" {
    local by_kubectl
    by_kubectl=$(driver_slices)
    start
    assert_equal "$API_READS" "reads through kubectl proxy on $SHORT_TMP/api.sock"
    assert_equal "$CONFORMANCE_API_SOCKET" "$SHORT_TMP/api.sock"
    : >"$FAKE_CLUSTER/calls.log"

    # A list: the same slices, each with its kind, as kubectl prints them.
    run driver_slices
    assert_success
    assert_equal "$(jq -S . <<<"$output")" "$(jq -S . <<<"$by_kubectl")"
    run kc get resourceslices --field-selector spec.driver=gpu.fakehw.example.com -o json
    assert_equal "$(jq -r '.kind, ([.items[].kind] | unique[])' <<<"$output")" $'List\nResourceSlice'
    run grep -c 'fieldSelector=spec.driver=gpu.fakehw.example.com' "$FAKE_CLUSTER/proxy-requests.log"
    assert_output 2

    # An object, and the queries built on it.
    run pod_node ns1 ready
    assert_output worker-1
    run pod_uid ns1 ready
    assert_output uid-ready
    run kc get pods -n ns1 -o name
    assert_line --index 0 pod/ready
    # A missing object: kubectl's error line, so is_gone holds.
    run kc get pod -n ns1 gone -o json
    assert_failure
    assert_output 'Error from server (NotFound): pods "gone" not found'
    run is_gone pod -n ns1 gone
    assert_success
    run is_gone pod -n ns1 ready
    assert_failure
    assert_output "pod/ready still exists"

    # None of these reached kubectl.
    run cat "$FAKE_CLUSTER/calls.log"
    assert_output ""
}

@test "api proxy: writes and other formats still go to kubectl" {
    start
    : >"$FAKE_CLUSTER/calls.log"
    kc get pods -n ns1 -o wide >/dev/null
    run cat "$FAKE_CLUSTER/calls.log"
    assert_output "get pods -n ns1 -o wide"
}

@test "api proxy: a proxy that cannot start, or CONFORMANCE_API_PROXY=false, leaves every call to kubectl" {
    touch "$FAKE_CLUSTER/proxy-broken"
    start
    assert_equal "${CONFORMANCE_API_SOCKET:-}" ""
    [[ $API_READS == "reads through kubectl (kubectl proxy did not answer on its socket within 10s: error: cannot start the proxy)" ]] ||
        fail "API_READS: $API_READS"
    run driver_slices
    assert_success
    run grep -c '^get resourceslices' "$FAKE_CLUSTER/calls.log"
    assert_output 1

    rm "$FAKE_CLUSTER/proxy-broken"
    CONFORMANCE_API_PROXY=false
    start
    assert_equal "$API_READS" "reads through kubectl (CONFORMANCE_API_PROXY=false)"
    assert_equal "${CONFORMANCE_API_SOCKET:-}" ""
    run params_validate
    assert_success
    CONFORMANCE_API_PROXY=maybe
    run params_validate
    assert_output --partial "CONFORMANCE_API_PROXY=maybe must be true or false"
}

@test "api proxy: the proxy ends with the process that runs the suite" {
    start
    [[ -S $SHORT_TMP/api.sock ]]
    kill "$OWNER"
    local i
    for ((i = 0; i < 100; i++)); do
        [[ -e $SHORT_TMP/api.sock ]] || break
        sleep 0.1
    done
    [[ ! -e $SHORT_TMP/api.sock ]] || fail "the proxy's socket is still there after its owner ended"
    run pgrep -f "fake_api_proxy.py $FAKE_CLUSTER"
    assert_failure
}
