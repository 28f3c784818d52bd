#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Pre-scheduled pods: a pod created with spec.nodeName already set bypasses
# the scheduler, so nothing allocates or reserves its claim; the kubelet
# refuses to prepare the claim, says why in an event, retries, and never
# starts the container.  The form to use instead, a nodeSelector on the
# node's hostname label, goes through the scheduler and runs.
# bats file_tags=pre-scheduled

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# prepare_refused NS POD: the kubelet's FailedPrepareDynamicResources event.
prepare_refused() {
    local json
    json=$(kc get events -n "$1" --field-selector "involvedObject.kind=Pod,involvedObject.name=$2,reason=FailedPrepareDynamicResources" -o json) || return 1
    jq -er '[.items[] | .message][0] // error("no FailedPrepareDynamicResources event yet")' <<<"$json"
}

# pod_not_running NS POD: Pending, no container started.
pod_not_running() {
    pod_json "$1" "$2" | jq -e '.status.phase == "Pending" and
        all(.status.containerStatuses[]?; .state.running == null and .state.terminated == null)' >/dev/null
}

# requires: none
# bats test_tags=generic
@test "pre-scheduled: a pod with spec.nodeName and an unallocated claim does not start; the kubelet says why" {
    local ns=$TEST_NAMESPACE msg
    use_test_node
    create_from claim CLAIM=unallocated COUNT=1
    create_from pod-node-name POD=pod-a CLAIM=unallocated NODE="$TEST_NODE"
    msg=$(wait_for "the kubelet to refuse the claim of pod-a" "$CONFORMANCE_TIMEOUT" prepare_refused "$ns" pod-a) ||
        return 1
    [[ $msg == *"not allowed to use ResourceClaim unallocated"* ]] ||
        fail "the kubelet's event does not name the claim: $msg"
    holds_for "pod-a stays Pending without a running container" "$CONFORMANCE_PENDING_SECONDS" \
        pod_not_running "$ns" pod-a
    claim_is_unallocated "$ns" unallocated >/dev/null ||
        fail "claim unallocated got allocated though no scheduler saw pod-a"
}

# requires: none
# bats test_tags=generic
@test "pre-scheduled: the nodeSelector form reaches the same node through the scheduler and runs" {
    local ns=$TEST_NAMESPACE node hostname
    use_test_node
    hostname=$(kc get node "$TEST_NODE" -o jsonpath='{.metadata.labels.kubernetes\.io/hostname}')
    [[ -n $hostname ]] || skip "node $TEST_NODE has no kubernetes.io/hostname label"
    create_from claim CLAIM=selected COUNT=1
    create_from pod-node-selector POD=pod-a CLAIM=selected HOSTNAME="$hostname"
    wait_pod_ready "$ns" pod-a
    node=$(pod_node "$ns" pod-a)
    assert_same "node of pod-a" "$TEST_NODE" "$node"
    assert_claim_reserved_for "$ns" selected pod-a
}
