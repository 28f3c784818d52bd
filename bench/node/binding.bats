#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Binding conditions of attachable devices: the plugin's claim status writes
# retry through conflicts and server errors, and say so in its log.
# White-box: these read fakehw-kubelet-plugin's own log, so they live beside
# the benchmarks, not in the conformance kit (whose node environment they use).
# shellcheck disable=SC2016,SC2154 # jq filters and eval'd checks; $output, $status come from run

load ../../conformance/node/lib/node_suite
load ../../conformance/node/lib/binding

@test "binding: status writes retry through conflicts and server errors [fakehw]" {
    binding_node
    claim_create c5
    standin_clear_requests
    standin_fault '{"status": 409, "count": 2, "method": "PATCH", "path": "/apis/resource.k8s.io/v1/namespaces/"}'
    # Six: one more than the API client's own retries of a 5xx, so the
    # binder's backoff has to act too.
    standin_fault '{"status": 500, "count": 6, "method": "PATCH", "path": "/apis/resource.k8s.io/v1/namespaces/"}'
    # The allocation goes in with PUT, so every PATCH is the plugin's.
    local claim
    claim=$(claim_get c5 | jq -c --argjson r "$(bound_results gpu-2)" \
        '.status.allocation = {allocationTimestamp: "2026-11-26T03:00:00Z", devices: {results: $r}}')
    api PUT "$RESOURCE_API/namespaces/$NODE_NS/resourceclaims/c5/status" "$claim" >/dev/null
    wait_for 20 "claim c5: $FAILED True" conditions_are c5 gpu-2 "$FAILED True AttachFailed"
    # Two conflicts (re-read at once), six server errors, then the write.
    run -0 patches_of c5
    assert_output 9
    grep -q 'writing the binding conditions of claim default/c5 failed' "$PLUGIN_LOG"
}
