#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# allocationMode ExactCount: count N gives N different devices; a count no
# node can satisfy leaves the pod pending, and the scheduler says why.
# bats file_tags=exact-count

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# requires: none
# bats test_tags=generic
@test "exact count: count 2 gets two distinct devices on the pod's node" {
    local ns=$TEST_NAMESPACE
    create_from claim CLAIM=two COUNT=2
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=two
    wait_pod_ready "$ns" pod-a

    assert_claim_device_count "$ns" two 2
    assert_devices_on_node "$(pod_node "$ns" pod-a)" "$(claim_devices "$ns" two)"
    if is_fake_driver; then
        assert_container_sees_claim "$ns" pod-a ctr two
        local visible
        visible=$(container_env "$ns" pod-a ctr FAKEHW_VISIBLE_DEVICES | tr ',' '\n' | sort)
        assert_same "FAKEHW_VISIBLE_DEVICES in the container" "$(allocated_uuids "$ns" two)" "$visible"
    fi
}

# requires: none
# bats test_tags=generic
@test "exact count: more devices than any node has stays pending with a scheduling event" {
    local ns=$TEST_NAMESPACE most count
    most=$(driver_slices | node_device_counts | head -n 1 | cut -f2)
    count=$((most + 1))
    # A claim holds at most 32 results (API limit): beyond that the API
    # refuses the claim instead of the scheduler leaving it pending.
    ((count <= 32)) || skip "the largest node has $most devices; a claim cannot ask for more than 32"
    create_from claim CLAIM=too-many COUNT="$count"
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=too-many

    assert_pod_stays_pending "$ns" pod-a
    claim_is_unallocated "$ns" too-many
}
