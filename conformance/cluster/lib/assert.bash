# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Assertions shared by the scenarios.  Each one says in its failure message
# what DRA behaviour was expected and what the cluster showed.

# assert_same WHAT EXPECTED ACTUAL (not bats-assert's assert_equal: WHAT comes first)
assert_same() {
    [[ $2 == "$3" ]] || {
        fail "$1: expected \"$2\", got \"$3\""
        return 1
    }
}

# assert_lines WHAT N TEXT: TEXT has exactly N non-empty lines.
assert_lines() {
    local n
    n=$(grep -c . <<<"$3" || true)
    ((n == $2)) || {
        fail "$1: expected $2, got $n:"$'\n'"$3"
        return 1
    }
}

# assert_claim_reserved_for NS CLAIM POD...: reservedFor holds exactly these pods.
assert_claim_reserved_for() {
    local ns=$1 claim=$2 pod expected='' actual
    shift 2
    for pod in "$@"; do
        expected+=$(pod_uid "$ns" "$pod")$'\n'
    done
    expected=$(sort <<<"${expected%$'\n'}")
    actual=$(claim_reserved_uids "$ns" "$claim") || return 1
    [[ $actual == "$expected" ]] || {
        fail "claim $ns/$claim: reservedFor should be pods [$*] (uids $(tr '\n' ' ' <<<"$expected")), is uids [$(tr '\n' ' ' <<<"$actual")]"
        return 1
    }
}

# assert_generated_claim NS POD CLAIM: CLAIM was generated for pod claim
# "gpu" of POD from a template: owned by the pod, annotated with the pod
# claim name, allocated and reserved for the pod alone.
assert_generated_claim() {
    local ns=$1 pod=$2 claim=$3 json uid
    json=$(claim_json "$ns" "$claim") || return 1
    uid=$(pod_uid "$ns" "$pod") || return 1
    jq -e --arg uid "$uid" 'any(.metadata.ownerReferences[]?; .kind == "Pod" and .uid == $uid and .controller == true)' \
        <<<"$json" >/dev/null || {
        fail "claim $ns/$claim should have pod $pod as controlling owner; ownerReferences: $(jq -c '.metadata.ownerReferences' <<<"$json")"
        return 1
    }
    assert_same "annotation resource.kubernetes.io/pod-claim-name of claim $claim" gpu \
        "$(jq -r '.metadata.annotations["resource.kubernetes.io/pod-claim-name"] // ""' <<<"$json")" || return 1
    claim_is_allocated "$ns" "$claim" >/dev/null || {
        fail "generated claim $ns/$claim of running pod $pod is not allocated"
        return 1
    }
    assert_claim_reserved_for "$ns" "$claim" "$pod"
}

# The "<pool>\t<device>" pairs a claim holds for the driver, sorted.
claim_devices() {
    claim_results "$1" "$2" | cut -f1,2 | sort
}

# assert_claim_device_count NS CLAIM N: N results, all different devices.
assert_claim_device_count() {
    local devices
    devices=$(claim_devices "$1" "$2") || return 1
    assert_lines "devices allocated to claim $1/$2" "$3" "$devices" || return 1
    assert_lines "distinct devices allocated to claim $1/$2" "$3" "$(sort -u <<<"$devices")"
}

# assert_devices_on_node NODE DEVICES: every "<pool>\t<device>" line is a
# device the driver publishes for NODE.
assert_devices_on_node() {
    local node=$1 on_node line
    on_node=$(driver_slices | node_pool_devices "$node") || return 1
    while IFS= read -r line; do
        [[ -n $line ]] || continue
        grep -qxF -- "$line" <<<"$on_node" || {
            fail "device ${line/$'\t'//} is not one of node $node's devices: $(tr '\n\t' ' /' <<<"$on_node")"
            return 1
        }
    done <<<"$2"
}
