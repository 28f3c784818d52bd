#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Opaque configuration: config in the DeviceClass and in the claim is copied
# into the allocation (class first, then claim) and the driver applies it when
# it prepares the device.  The fake driver turns GpuConfig env entries into
# container environment, claim entries overriding class entries.
# bats file_tags=opaque-config

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# requires: none
# bats test_tags=fake-only
@test "opaque config: class and claim config reach the container, the claim's winning" {
    local ns=$TEST_NAMESPACE class=$TEST_NAMESPACE-config sources
    track_cluster_object deviceclass "$class"
    create_from deviceclass-config CLASS="$class"
    create_from claim-config CLAIM=configured CLASS="$class"
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=configured
    wait_pod_ready "$ns" pod-a

    # The API part: both configs are in the allocation, class config first.
    sources=$(claim_json "$ns" configured | jq -r '[.status.allocation.devices.config[]?.source] | join(",")')
    assert_same "sources of the configs copied into the allocation" "FromClass,FromClaim" "$sources"

    assert_same "CONFORMANCE_FROM_CLASS in the container" class \
        "$(container_env "$ns" pod-a ctr CONFORMANCE_FROM_CLASS)"
    assert_same "CONFORMANCE_FROM_CLAIM in the container" claim \
        "$(container_env "$ns" pod-a ctr CONFORMANCE_FROM_CLAIM)"
    assert_same "CONFORMANCE_OVERRIDDEN in the container (claim config applies after class config)" claim \
        "$(container_env "$ns" pod-a ctr CONFORMANCE_OVERRIDDEN)"
}
