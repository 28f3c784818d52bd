#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Standard device attributes (resource.kubernetes.io/..., k8s.io/
# dynamic-resource-allocation deviceattribute): matchAttribute on
# resource.kubernetes.io/numaNode across two requests puts both devices on one
# NUMA node, and a node without such a pair cannot serve the claim.  The
# attribute is CONFORMANCE_NUMA_ATTRIBUTE.  The fake inventory has both kinds
# of node: <cluster>-worker has two GPUs per NUMA node, <cluster>-worker2 one.
# bats file_tags=standard-attributes

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# schedulable_among NODES: those of NODES (one per line) a test pod can land on.
schedulable_among() {
    local ok
    ok=$(kc get nodes -o json | schedulable_nodes) || return 1
    grep -xF -f <(printf '%s\n' "$ok") <<<"$1" || true
}

# requires: none
# bats test_tags=generic
@test "standard attributes: matchAttribute on numaNode across two requests gives two devices on one NUMA node" {
    local ns=$TEST_NAMESPACE attr=$CONFORMANCE_NUMA_ATTRIBUTE slices nodes node
    slices=$(driver_slices)
    nodes=$(schedulable_among "$(attribute_pair_nodes "$attr" possible <<<"$slices")")
    [[ -n $nodes ]] || skip "no schedulable node has two devices with the same $attr"
    node=$(head -n1 <<<"$nodes")

    create_from claim-match-attribute-two-requests CLAIM=same-numa ATTRIBUTE="$(qualified_name "$attr")"
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=same-numa AFFINITY="$(pin_to "$node")"
    wait_pod_ready "$ns" pod-a

    assert_claim_device_count "$ns" same-numa 2
    assert_lines "requests served" 2 "$(claim_results "$ns" same-numa | cut -f3 | sort -u)"
    local pool device values=''
    while IFS=$'\t' read -r pool device; do
        values+=$(slice_device "$pool" "$device" <<<"$slices" | device_attribute "$attr")$'\n'
    done < <(claim_devices "$ns" same-numa)
    assert_lines "distinct $attr values of the two devices" 1 "$(sort -u <<<"${values%$'\n'}")"
}

# requires: none
# bats test_tags=generic
@test "standard attributes: on a node with one device per NUMA node the numaNode pair stays pending" {
    local ns=$TEST_NAMESPACE attr=$CONFORMANCE_NUMA_ATTRIBUTE nodes
    nodes=$(schedulable_among "$(driver_slices | attribute_pair_nodes "$attr" impossible)")
    [[ -n $nodes ]] || skip "no schedulable node whose devices all have different values of $attr"

    create_from claim-match-attribute-two-requests CLAIM=same-numa ATTRIBUTE="$(qualified_name "$attr")"
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=same-numa AFFINITY="$(pin_to "$(head -n1 <<<"$nodes")")"
    assert_pod_stays_pending "$ns" pod-a
    claim_is_unallocated "$ns" same-numa
}
