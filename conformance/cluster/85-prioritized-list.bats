#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Prioritized list (DRAPrioritizedList): a request with firstAvailable gets
# the first subrequest that can be satisfied, in the order written.
# bats file_tags=prioritized-list

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# requires: gate=DRAPrioritizedList
# bats test_tags=generic
@test "prioritized list: the first satisfiable subrequest is chosen" {
    require_gate DRAPrioritizedList
    local ns=$TEST_NAMESPACE requests
    create_from claim-first-available CLAIM=alternatives
    create_from pod POD=pod-a CLAIM_SOURCE=resourceClaimName CLAIM=alternatives
    wait_pod_ready "$ns" pod-a

    requests=$(claim_results "$ns" alternatives | cut -f3 | sort -u)
    assert_same "request of the allocation results (\"none\" matches nothing, \"one\" comes before \"two\")" \
        gpu/one "$requests"
    assert_claim_device_count "$ns" alternatives 1
}
