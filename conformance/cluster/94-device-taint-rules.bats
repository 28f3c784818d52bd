#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# DeviceTaintRule (KEP-5055): an admin taints devices without touching the
# driver's slices.  NoSchedule keeps new claims off, NoExecute evicts the pods
# using the devices unless the request tolerates the taint, tolerationSeconds
# delays that, the rule's status says what it matched, and deleting the rule
# gives the devices back.  The suite uses the version the API server serves
# (v1alpha3 in 1.35, v1beta2 in 1.36, v1 in 1.37: CONFORMANCE_TAINT_RULE_API).
# The rules taint devices for everyone, hence "serial".  Driver-agnostic but
# the last test, which needs the driver's own health taint with NoExecute.
# bats file_tags=device-taint-rules

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

RULE_KEY=conformance.fakehw.example.com/taint-rule

# rule_resource: devicetaintrules named with the version the server serves
# (resource.k8s.io/v1alpha3 -> devicetaintrules.v1alpha3.resource.k8s.io).
# A bare "devicetaintrule" goes through kubectl's discovery cache, which after
# an in-place upgrade or downgrade can still map it to a version the server
# no longer serves ("the server could not find the requested resource").
rule_resource() {
    local v=${CONFORMANCE_TAINT_RULE_API#resource.k8s.io/}
    printf 'devicetaintrules.%s.resource.k8s.io' "$v"
}

# new_rule NAME EFFECT [DEVICE]: a DeviceTaintRule on DEVICE of the test
# node's pool (the whole pool without DEVICE), deleted at teardown.
new_rule() {
    local selector
    selector=$(jq -cn --arg d "$CONFORMANCE_DRIVER" --arg p "$TEST_NODE_POOL" --arg dev "${3:-}" \
        '{driver: $d, pool: $p} + (if $dev == "" then {} else {device: $dev} end)')
    track_cluster_object "$(rule_resource)" "$1"
    create_from device-taint-rule RULE="$1" TAINT_RULE_API="$CONFORMANCE_TAINT_RULE_API" \
        SELECTOR="$selector" KEY=$RULE_KEY VALUE=conformance EFFECT="$2"
}

# start_user POD [TOLERATIONS]: pod POD on the test node with its own claim
# POD of one device (tolerating TOLERATIONS, a JSON list); sets USER_DEVICE.
start_user() {
    if [[ -n ${2:-} ]]; then
        create_from claim-tolerating CLAIM="$1" TOLERATIONS="$2"
    else
        create_from claim CLAIM="$1" COUNT=1
    fi
    create_from pod POD="$1" CLAIM_SOURCE=resourceClaimName CLAIM="$1" AFFINITY="$(pin_to "$TEST_NODE")"
    wait_pod_ready "$TEST_NAMESPACE" "$1"
    IFS=$'\t' read -r _ USER_DEVICE _ < <(claim_results "$TEST_NAMESPACE" "$1")
    [[ -n $USER_DEVICE ]] || fail "claim $1 has no device"
}

# rule_condition RULE: "<status> <reason> <message>" of its EvictionInProgress condition.
rule_condition() {
    kc get "$(rule_resource)" "$1" -o json |
        jq -er '[.status.conditions[]? | select(.type == "EvictionInProgress")][0]
            | "\(.status) \(.reason) \(.message)" // error("no EvictionInProgress condition")'
}

# rule_condition_matches RULE REGEX
rule_condition_matches() {
    local c
    c=$(rule_condition "$1") || return 1
    [[ $c =~ $2 ]] || {
        printf 'EvictionInProgress of %s: %s\n' "$1" "$c"
        return 1
    }
}

# The DeviceTaintRule of 1.35 on (1.34's v1alpha3 has another selector, no
# status and no effect None).
require_rules() {
    require_server_minor 35
    require_taint_rule_api
    require_gate DRADeviceTaints
    use_test_node
}

# requires: minor=35, api=devicetaintrules, gate=DRADeviceTaints
# bats test_tags=generic, serial
@test "taint rules: NoSchedule keeps new claims off the device while the pod using it stays" {
    require_rules
    local ns=$TEST_NAMESPACE n
    start_user user
    new_rule "$ns-noschedule" NoSchedule "$USER_DEVICE"
    holds_for "pod $ns/user keeps running with its device tainted NoSchedule" "$CONFORMANCE_PENDING_SECONDS" \
        pod_is_ready "$ns" user
    # Free the device: a claim for every device of the node can no longer be met.
    delete_pod "$ns" user
    wait_gone pod -n "$ns" user
    kc delete resourceclaim -n "$ns" user --wait=false >/dev/null
    wait_gone resourceclaim -n "$ns" user
    n=$(wc -l <<<"$TEST_NODE_DEVICES")
    create_from claim CLAIM=all COUNT="$n"
    create_from pod POD=pod-all CLAIM_SOURCE=resourceClaimName CLAIM=all AFFINITY="$(pin_to "$TEST_NODE")"
    assert_pod_stays_pending "$ns" pod-all
    claim_is_unallocated "$ns" all
}

# requires: minor=35, api=devicetaintrules, gate=DRADeviceTaints
# bats test_tags=generic, serial
@test "taint rules: removing the rule lets the device be allocated again" {
    require_rules
    local ns=$TEST_NAMESPACE n
    n=$(wc -l <<<"$TEST_NODE_DEVICES")
    new_rule "$ns-remove" NoSchedule "$(head -n1 <<<"$TEST_NODE_DEVICES")"
    create_from claim CLAIM=all COUNT="$n"
    create_from pod POD=pod-all CLAIM_SOURCE=resourceClaimName CLAIM=all AFFINITY="$(pin_to "$TEST_NODE")"
    assert_pod_stays_pending "$ns" pod-all
    kc delete "$(rule_resource)" "$ns-remove" >/dev/null
    wait_pod_ready "$ns" pod-all
    assert_claim_device_count "$ns" all "$n"
}

# requires: minor=35, api=devicetaintrules, gate=DRADeviceTaints
# bats test_tags=generic, serial
@test "taint rules: NoExecute evicts a pod using a tainted device unless its request tolerates the taint" {
    require_rules
    (($(wc -l <<<"$TEST_NODE_DEVICES") >= 2)) || skip "node $TEST_NODE has fewer than 2 devices"
    local ns=$TEST_NAMESPACE
    start_user plain
    start_user tolerant "$(jq -cn --arg k $RULE_KEY '[{key: $k, operator: "Exists", effect: "NoExecute"}]')"
    new_rule "$ns-noexecute" NoExecute
    wait_gone pod -n "$ns" plain
    holds_for "pod $ns/tolerant, whose request tolerates the taint, keeps running" "$CONFORMANCE_PENDING_SECONDS" \
        pod_is_ready "$ns" tolerant
    wait_for "the rule's status to count the eviction" "$CONFORMANCE_TIMEOUT" \
        rule_condition_matches "$ns-noexecute" '1 pod evicted since starting the controller' >/dev/null
}

# requires: minor=35, api=devicetaintrules, gate=DRADeviceTaints
# bats test_tags=generic, serial
@test "taint rules: tolerationSeconds delays the eviction" {
    require_rules
    local ns=$TEST_NAMESPACE delay=12 start elapsed
    start_user late "$(jq -cn --arg k $RULE_KEY --argjson s $delay '[{key: $k, operator: "Exists", effect: "NoExecute", tolerationSeconds: $s}]')"
    start=$SECONDS
    new_rule "$ns-delay" NoExecute "$USER_DEVICE"
    holds_for "pod $ns/late to run on during its tolerationSeconds" $((delay / 2)) pod_is_ready "$ns" late
    wait_for "pod $ns/late to be evicted after ${delay}s" $((delay + CONFORMANCE_TIMEOUT)) is_gone pod -n "$ns" late >/dev/null
    elapsed=$((SECONDS - start))
    # The clock starts when the API server stamps the taint, just after our
    # start; a poll interval (rounded up) of slack on our side.
    ((elapsed + ($(seconds_to_ms "$CONFORMANCE_POLL_INTERVAL") + 999) / 1000 >= delay)) ||
        fail "pod $ns/late was evicted after ${elapsed}s, before its tolerationSeconds ($delay)"
}

# requires: minor=35, api=devicetaintrules, gate=DRADeviceTaints
# bats test_tags=generic, serial
@test "taint rules: the status of a rule with effect None reports the devices and pods it matched" {
    require_rules
    local ns=$TEST_NAMESPACE
    start_user user
    new_rule "$ns-none" None "$USER_DEVICE"
    wait_for "the EvictionInProgress condition of rule $ns-none" "$CONFORMANCE_TIMEOUT" \
        rule_condition_matches "$ns-none" \
        '^False NoEffect 1 published device selected\. 1 allocated device selected\. 1 pod would be evicted in 1 namespace if the effect was NoExecute\.' >/dev/null
    pod_is_ready "$ns" user >/dev/null || fail "effect None must not touch the pod"
}

# Runs when CONFORMANCE_DRIVER_TAINT_EFFECT=NoExecute says the plugin was
# started with --taint-effect NoExecute.
# requires: fake-driver, gate=DRADeviceTaints
# bats test_tags=fake-only, serial
@test "taint rules: the driver's own health taint with NoExecute evicts the pod on a flip" {
    [[ $CONFORMANCE_DRIVER_TAINT_EFFECT == NoExecute ]] ||
        skip "the driver taints unhealthy devices $CONFORMANCE_DRIVER_TAINT_EFFECT; run with the plugin's --taint-effect NoExecute and CONFORMANCE_DRIVER_TAINT_EFFECT=NoExecute (docs/conformance.md)"
    require_gate DRADeviceTaints
    use_test_node
    local ns=$TEST_NAMESPACE
    start_user victim
    flip_unhealthy "$TEST_NODE" "$USER_DEVICE"
    wait_for "taint $(unhealthy_taint_key) NoExecute on $TEST_NODE_POOL/$USER_DEVICE" "$CONFORMANCE_HEALTH_TIMEOUT" \
        device_has_unhealthy_taint "$TEST_NODE_POOL" "$USER_DEVICE" NoExecute >/dev/null
    wait_gone pod -n "$ns" victim
}
