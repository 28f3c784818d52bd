#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Monitoring: the kubelet's PodResources API (v1 List and Get) reports the DRA
# devices of a running pod: its claim and the driver, pool and device names
# the claim was allocated.  Read with the fake driver's fakehw-podresources
# (docs/podresources.md): from a pod on the test node running the driver's
# image with the socket's directory mounted, or, when the driver runs
# outside pods (CONFORMANCE_FAKEHW_EXEC), through that command with the
# fakehw-podresources next to CONFORMANCE_FAKEHW_BIN.  The API has no
# request names, so there are none to check.
# bats file_tags=podresources

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# podresources NODE ARGS...: runs fakehw-podresources ARGS on NODE.
podresources() {
    local node=$1 prefix
    shift
    if [[ -n $CONFORMANCE_FAKEHW_EXEC ]]; then
        read -ra prefix <<<"$CONFORMANCE_FAKEHW_EXEC"
        CONFORMANCE_FAKEHW_NODE=$node "${prefix[@]}" "${CONFORMANCE_FAKEHW_BIN%/*}/fakehw-podresources" "$@"
    else
        kc exec -n "$TEST_NAMESPACE" podres -c ctr -- fakehw-podresources "$@"
    fi
}

# start_reader: the pod that reads the socket on the test node (not needed
# when the driver runs outside pods).
start_reader() {
    [[ -z $CONFORMANCE_FAKEHW_EXEC ]] || return 0
    local driver_pod image
    driver_pod=$(driver_pod_on_node "$TEST_NODE") || return 1
    image=$(kc get pod -n "$CONFORMANCE_DRIVER_NAMESPACE" "$driver_pod" -o json |
        jq -er --arg c "$CONFORMANCE_PLUGIN_CONTAINER" '.spec.containers[] | select(.name == $c) | .image') ||
        fail "driver pod $driver_pod has no container $CONFORMANCE_PLUGIN_CONTAINER"
    kc label namespace "$TEST_NAMESPACE" --overwrite pod-security.kubernetes.io/enforce=privileged >/dev/null
    create_from pod-podresources POD=podres NODE="$TEST_NODE" DRIVER_IMAGE="$image"
    wait_pod_ready "$TEST_NAMESPACE" podres
}

# requires: fake-driver
# bats test_tags=fake-only
@test "podresources: List and Get report the running pod's claim and its devices" {
    require_fake_driver
    local ns=$TEST_NAMESPACE claim expected got out
    use_test_node
    create_from claim-template TEMPLATE=monitored COUNT=2
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimTemplateName CLAIM=monitored AFFINITY="$(pin_to "$TEST_NODE")"
    wait_pod_ready "$ns" pod-a
    claim=$(pod_claim_name "$ns" pod-a gpu) || fail "pod-a has no claim gpu"
    expected=$(claim_results "$ns" "$claim" | awk -F'\t' -v d="$CONFORMANCE_DRIVER" '{print d "/" $1 "/" $2}' | sort)
    start_reader

    out=$(podresources "$TEST_NODE" --json list) || fail "fakehw-podresources list: $out"
    got=$(jq -r --arg ns "$ns" --arg c "$claim" '.pods[] | select(.namespace == $ns and .name == "pod-a")
        | .containers[] | select(.name == "ctr") | .claims[] | select(.namespace == $ns and .name == $c)
        | .devices[] | "\(.driver)/\(.pool)/\(.device)"' <<<"$out" | sort)
    assert_same "List: devices of claim $claim in pod-a/ctr" "$expected" "$got"

    out=$(podresources "$TEST_NODE" --json get "$ns/pod-a") || fail "fakehw-podresources get: $out"
    assert_same "Get: pods" "pod-a" "$(jq -r '[.pods[].name] | join(",")' <<<"$out")"
    got=$(jq -r '.pods[0].containers[0].claims[0].devices[] | "\(.driver)/\(.pool)/\(.device)"' <<<"$out" | sort)
    assert_same "Get: devices of pod-a" "$expected" "$got"
    jq -e '.pods[0].containers[0].claims[0].devices | all(.[]; (.cdiDevices | length) > 0)' <<<"$out" >/dev/null ||
        fail "Get: a device without CDI ids: $out"

    out=$(podresources "$TEST_NODE" list) || fail "fakehw-podresources list: $out"
    grep -E "^$ns +pod-a +ctr +$claim +$CONFORMANCE_DRIVER " <<<"$out" >/dev/null ||
        fail "the table has no row for pod-a: $out"
}
