#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# allocationMode All: the claim gets every device of the class on the node.
# A second All claim for the same node waits until the first is released.
# Needs every device of the test node free, hence "serial".
# bats file_tags=all-mode

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# requires: none
# bats test_tags=generic, serial
@test "all mode: a claim gets every device of the node; a second one waits for it" {
    local ns=$TEST_NAMESPACE first second
    use_test_node
    local n
    n=$(grep -c . <<<"$TEST_NODE_DEVICES")
    ((n <= 32)) || skip "node $TEST_NODE has $n devices; an allocation holds at most 32"
    local affinity
    affinity=$(pin_to "$TEST_NODE")

    create_from claim-all CLAIM=all-first
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=all-first AFFINITY="$affinity"
    wait_pod_ready "$ns" pod-a
    first=$(claim_devices "$ns" all-first)
    assert_devices_on_node "$TEST_NODE" "$first"
    if is_fake_driver; then
        # Every GPU of the fake driver belongs to the class.
        assert_same "devices of claim all-first (every device of node $TEST_NODE)" \
            "$(awk -v p="$TEST_NODE_POOL" '{print p "\t" $0}' <<<"$TEST_NODE_DEVICES" | sort)" "$first"
        assert_container_sees_claim "$ns" pod-a ctr all-first
    else
        [[ -n $first ]] || fail "claim all-first is allocated without devices"
    fi

    create_from claim-all CLAIM=all-second
    create_from pod POD=pod-b CLAIM_SOURCE=resourceClaimName CLAIM=all-second AFFINITY="$affinity"
    assert_pod_stays_pending "$ns" pod-b
    claim_is_unallocated "$ns" all-second

    delete_pod "$ns" pod-a
    wait_pod_ready "$ns" pod-b
    second=$(claim_devices "$ns" all-second)
    assert_same "devices of claim all-second (the same devices, now free)" "$first" "$second"
}
