#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Admin access (DRAAdminAccess): a request with adminAccess gets devices even
# when other claims hold them, for monitoring or maintenance, but only in a
# namespace labelled resource.kubernetes.io/admin-access: "true".
# bats file_tags=admin-access

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# requires: gate=DRAAdminAccess
# bats test_tags=generic
@test "admin access: a claim with adminAccess is refused in a namespace without the label" {
    require_gate DRAAdminAccess
    local manifest out
    manifest=$(render_template claim-admin-all CLAIM=admin)
    if out=$(kc create -f - <<<"$manifest" 2>&1); then
        fail "the API server accepted an adminAccess claim in namespace $TEST_NAMESPACE," \
            "which lacks the resource.kubernetes.io/admin-access label: $out"
    fi
    [[ $out == *resource.kubernetes.io/admin-access* ]] ||
        fail "the refusal should name the resource.kubernetes.io/admin-access label; it says: $out"
}

# requires: gate=DRAAdminAccess
# bats test_tags=generic
@test "admin access: with the namespace label, an adminAccess claim gets a device already in use" {
    require_gate DRAAdminAccess
    local ns=$TEST_NAMESPACE in_use node admin
    kc label namespace "$ns" resource.kubernetes.io/admin-access=true >/dev/null
    create_from claim CLAIM=user COUNT=1
    create_from pod POD=user CLAIM_SOURCE=resourceClaimName CLAIM=user
    wait_pod_ready "$ns" user
    in_use=$(claim_devices "$ns" user)
    node=$(pod_node "$ns" user)

    create_from claim-admin-all CLAIM=admin
    create_from pod POD=admin CLAIM_SOURCE=resourceClaimName CLAIM=admin AFFINITY="$(pin_to "$node")"
    wait_pod_ready "$ns" admin
    admin=$(claim_results "$ns" admin)
    grep -qF -- "$in_use"$'\t' <<<"$admin" ||
        fail "the admin claim should include the in-use device ${in_use/$'\t'//}; it holds:"$'\n'"$admin"
    [[ $(cut -f4 <<<"$admin" | sort -u) == true ]] ||
        fail "every result of the admin claim should carry adminAccess: true:"$'\n'"$admin"
    pod_is_ready "$ns" user >/dev/null || fail "the pod that holds the device stopped being Ready"
    if is_fake_driver; then
        local uuid
        uuid=$(allocated_uuids "$ns" user)
        container_gpu_uuids "$ns" admin ctr | grep -qxF -- "$uuid" ||
            fail "the admin container should see the in-use GPU $uuid"
    fi
}
