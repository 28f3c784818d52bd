# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# What a person needs when a scenario fails: the state of the test's pods and
# claims, the driver's slices, the events, the driver's last log lines and the
# manifests the test created.  Printed on stdout from teardown, so bats shows
# it under the failed test and the JUnit report carries it.

diag_section() {
    printf '\n---- %s\n' "$*"
}

# print_diagnostics NAMESPACE
print_diagnostics() {
    local ns=$1 pods claims nodes
    printf '\n==== diagnostics for "%s" (namespace %s)\n' "${BATS_TEST_DESCRIPTION:-?}" "$ns"

    diag_section "pods"
    kc get pods -n "$ns" -o wide 2>&1 || true
    pods=$(kc get pods -n "$ns" -o json 2>/dev/null) || pods='{"items":[]}'
    jq -r '.items[] | "pod \(.metadata.name): phase \(.status.phase // "?") node \(.spec.nodeName // "-")",
        (.status.conditions[]? | select(.status != "True") | "  condition \(.type)=\(.status) \(.reason // "") \(.message // "")"),
        (.status.containerStatuses[]? | "  container \(.name): ready=\(.ready) restarts=\(.restartCount) state=\(.state | keys[0])" +
            (if .state.waiting then " (\(.state.waiting.reason // ""): \(.state.waiting.message // ""))" else "" end) +
            (if .allocatedResourcesStatus then " health=\(.allocatedResourcesStatus | tojson)" else "" end)),
        (.status.resourceClaimStatuses[]? | "  claim \(.name) -> \(.resourceClaimName // "none")")' \
        <<<"$pods" 2>&1 || true

    diag_section "resourceclaims"
    kc get resourceclaims -n "$ns" 2>&1 || true
    claims=$(kc get resourceclaims -n "$ns" -o json 2>/dev/null) || claims='{"items":[]}'
    jq -r '.items[] | "claim \(.metadata.name):",
        "  requests: \(.spec.devices.requests | tojson)",
        (if .spec.devices.constraints then "  constraints: \(.spec.devices.constraints | tojson)" else empty end),
        "  allocation: \(.status.allocation.devices.results // "none" | tojson)",
        "  reservedFor: \([.status.reservedFor[]? | "\(.resource)/\(.name)"] | tojson)",
        (if .status.devices then "  devices status: \(.status.devices | tojson)" else empty end)' \
        <<<"$claims" 2>&1 || true

    diag_section "events (oldest first)"
    kc get events -n "$ns" --sort-by=.lastTimestamp 2>&1 | tail -n 40 || true

    # Devices held by claims of other namespaces explain "cannot allocate
    # all claims" when the test's own claims look satisfiable.
    diag_section "devices of $CONFORMANCE_DRIVER allocated in every namespace"
    kc get resourceclaims -A -o json 2>/dev/null |
        jq -r --arg d "$CONFORMANCE_DRIVER" '.items[] | select(.status.allocation) |
            "\(.metadata.namespace)/\(.metadata.name)\(if .metadata.deletionTimestamp then " (deleting)" else "" end): " +
            ([.status.allocation.devices.results[]? | select(.driver == $d) | "\(.pool)/\(.device)"] | join(" ")) +
            " reservedFor=\([.status.reservedFor[]? | .name] | join(","))"' 2>&1 || true

    diag_section "resourceslices of $CONFORMANCE_DRIVER"
    kc get resourceslices --field-selector "spec.driver=$CONFORMANCE_DRIVER" -o json 2>/dev/null |
        jq -r '.items[] | "slice \(.metadata.name): node \(.spec.nodeName // "-") pool \(.spec.pool.name)@\(.spec.pool.generation)",
            (.spec.devices[]? | "  \(.name)" + (if .taints then " taints=\(.taints | tojson)" else "" end))' 2>&1 || true

    diag_section "driver logs ($CONFORMANCE_DRIVER_NAMESPACE, $CONFORMANCE_DRIVER_POD_SELECTOR, last $CONFORMANCE_LOG_LINES lines)"
    nodes=$(jq -r '[.items[].spec.nodeName // empty] | unique[]' <<<"$pods" 2>/dev/null)
    print_driver_logs "$nodes" || true

    if [[ -d ${BATS_TEST_TMPDIR:-/nonexistent}/manifests ]]; then
        diag_section "manifests created by the test"
        local f
        for f in "$BATS_TEST_TMPDIR"/manifests/*.yaml; do
            [[ -f $f ]] || continue
            printf '# %s\n' "$(basename "$f")"
            cat "$f"
        done
    fi
    printf '==== end of diagnostics\n'
}

# print_driver_logs NODES: the plugin container's last lines on those nodes
# (all driver pods when NODES is empty).
print_driver_logs() {
    local nodes=$1 json pod node
    json=$(kc get pods -n "$CONFORMANCE_DRIVER_NAMESPACE" -l "$CONFORMANCE_DRIVER_POD_SELECTOR" -o json 2>&1) || {
        printf 'cannot list driver pods: %s\n' "$json"
        return 0
    }
    while read -r pod node; do
        [[ -n $pod ]] || continue
        if [[ -n $nodes ]] && ! grep -qxF -- "$node" <<<"$nodes"; then
            continue
        fi
        printf '# pod %s on %s, container %s\n' "$pod" "$node" "$CONFORMANCE_PLUGIN_CONTAINER"
        kc logs -n "$CONFORMANCE_DRIVER_NAMESPACE" "$pod" -c "$CONFORMANCE_PLUGIN_CONTAINER" \
            --tail="$CONFORMANCE_LOG_LINES" 2>&1 || true
    done < <(jq -r '.items[] | "\(.metadata.name) \(.spec.nodeName // "-")"' <<<"$json")
}
