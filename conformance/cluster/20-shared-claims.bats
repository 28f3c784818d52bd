#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A ResourceClaim created on its own is shared: every container and every pod
# that names it gets the same allocation.  When the last pod goes, the claim
# stays, unreserved and deallocated, ready for the next user.
# bats file_tags=shared-claims

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# requires: none
# bats test_tags=generic
@test "shared claims: two containers of a pod and a second pod share one allocation" {
    local ns=$TEST_NAMESPACE
    create_from claim CLAIM=shared COUNT=1
    create_from pod-two-containers POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=shared
    create_from pod POD=pod-b CLAIM_SOURCE=resourceClaimName CLAIM=shared
    wait_pod_ready "$ns" pod-a
    wait_pod_ready "$ns" pod-b

    assert_claim_device_count "$ns" shared 1
    assert_claim_reserved_for "$ns" shared pod-a pod-b
    assert_same "node of pod-b (must be the node of the shared device, like pod-a)" \
        "$(pod_node "$ns" pod-a)" "$(pod_node "$ns" pod-b)"

    if is_fake_driver; then
        local expected seen ctr
        expected=$(allocated_uuids "$ns" shared)
        for ctr in pod-a/ctr-a pod-a/ctr-b pod-b/ctr; do
            seen=$(container_gpu_uuids "$ns" "${ctr%/*}" "${ctr#*/}")
            assert_same "GPU UUID seen by fakegpu-smi in $ctr" "$expected" "$seen"
        done
    fi
}

# requires: none
# bats test_tags=generic
@test "shared claims: the claim outlives its pods and is deallocated after them" {
    local ns=$TEST_NAMESPACE
    create_from claim CLAIM=shared COUNT=1
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=shared
    create_from pod POD=pod-b CLAIM_SOURCE=resourceClaimName CLAIM=shared
    wait_pod_ready "$ns" pod-a
    wait_pod_ready "$ns" pod-b
    assert_claim_reserved_for "$ns" shared pod-a pod-b

    delete_pod "$ns" pod-a
    wait_gone pod -n "$ns" pod-a
    # One user left: still allocated, reserved for pod-b only.
    wait_for "claim shared reserved for pod-b alone" "$CONFORMANCE_TIMEOUT" \
        assert_claim_reserved_for "$ns" shared pod-b
    claim_is_allocated "$ns" shared >/dev/null

    delete_pod "$ns" pod-b
    wait_gone pod -n "$ns" pod-b
    wait_for "claim shared to be unreserved and deallocated" "$CONFORMANCE_TIMEOUT" \
        claim_is_released "$ns" shared
    kc get resourceclaim -n "$ns" shared -o name >/dev/null ||
        fail "the shared claim was deleted with its pods; only generated claims go with their pod"
}
