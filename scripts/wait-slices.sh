#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Waits until the fakehw-dra DaemonSet is rolled out (its pods are ready only
# once the plugin registered with the kubelet and published its slices) and
# every node running one of its pods has ResourceSlices of the driver, then
# prints them.  On timeout it prints the pods, recent events and the last
# log lines of both containers, and fails.
#
# Environment:
#   KUBE_CONTEXT  kubeconfig context (default: the current one)
#   NAMESPACE, DAEMONSET  where the driver runs (fakehw-dra, fakehw-dra-kubelet-plugin)
#   DRIVER        driver name (default: DRIVER_NAME of the deployed DaemonSet)
#   WAIT_TIMEOUT  seconds for the whole wait (default 300)
set -euo pipefail
# shellcheck source=common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

require_tools kubectl
deadline=$((SECONDS + WAIT_TIMEOUT))

kc -n "$NAMESPACE" get daemonset "$DAEMONSET" >/dev/null ||
    die "no DaemonSet $NAMESPACE/$DAEMONSET${KUBE_CONTEXT:+ in context $KUBE_CONTEXT}: deploy it first (make deploy)"

# label=value,... of the DaemonSet's pod selector.
# shellcheck disable=SC2016 # a Go template, not shell
selector=$(kc -n "$NAMESPACE" get daemonset "$DAEMONSET" \
    -o go-template='{{range $k, $v := .spec.selector.matchLabels}}{{$k}}={{$v}},{{end}}')
selector=${selector%,}
driver=${DRIVER:-$(kc -n "$NAMESPACE" get daemonset "$DAEMONSET" \
    -o jsonpath='{.spec.template.spec.containers[?(@.name=="plugin")].env[?(@.name=="DRIVER_NAME")].value}')}
[[ -n $driver ]] || die "DaemonSet $NAMESPACE/$DAEMONSET has no DRIVER_NAME in its plugin container; set DRIVER"

diagnostics() {
    local pod
    log "diagnostics: pods"
    kc -n "$NAMESPACE" get pods -l "$selector" -o wide >&2 || true
    log "diagnostics: recent events in $NAMESPACE"
    kc -n "$NAMESPACE" get events --sort-by=.lastTimestamp 2>&1 | tail -n 20 >&2 || true
    for pod in $(kc -n "$NAMESPACE" get pods -l "$selector" -o name 2>/dev/null); do
        log "diagnostics: last log lines of $pod (fakehw, then plugin)"
        kc -n "$NAMESPACE" logs "$pod" -c fakehw --tail=15 >&2 || true
        kc -n "$NAMESPACE" logs "$pod" -c plugin --tail=15 >&2 || true
    done
}

remaining() {
    local left=$((deadline - SECONDS))
    ((left > 5)) && echo "$left" || echo 5
}

log "waiting for DaemonSet $NAMESPACE/$DAEMONSET to be ready on every node"
if ! kc -n "$NAMESPACE" rollout status "daemonset/$DAEMONSET" --timeout="$(remaining)s" >&2; then
    diagnostics
    die "DaemonSet $NAMESPACE/$DAEMONSET did not become ready within ${WAIT_TIMEOUT}s"
fi

nodes=$(kc -n "$NAMESPACE" get pods -l "$selector" \
    -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | sed '/^$/d')
[[ -n $nodes ]] ||
    die "no pod of $NAMESPACE/$DAEMONSET runs on any node (are all nodes tainted? the DaemonSet tolerates only fakehw.example.com/partitions)"

# Succeeds when every node in $nodes has a slice of $driver; else says which not.
all_published() {
    local published missing total count
    published=$(kc get resourceslices --field-selector "spec.driver=$driver" \
        -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}') || return 1
    missing=$(comm -23 <(sort -u <<<"$nodes") <(sort -u <<<"$published" | sed '/^$/d'))
    [[ -z $missing ]] && return 0
    total=$(wc -l <<<"$nodes")
    count=$((total - $(wc -l <<<"$missing")))
    echo "ResourceSlices published on ${count// /}/${total// /} nodes; waiting for: $(tr '\n' ' ' <<<"$missing")"
    return 1
}

if ! wait_until "ResourceSlices of $driver on $(wc -l <<<"$nodes" | tr -d ' ') nodes" "$(remaining)" all_published; then
    diagnostics
    die "not every node published ResourceSlices of $driver within ${WAIT_TIMEOUT}s"
fi

log "every node published its devices:"
kc get resourceslices --field-selector "spec.driver=$driver"
echo
kc get resourceslices --field-selector "spec.driver=$driver" \
    -o custom-columns='NODE:.spec.nodeName,POOL:.spec.pool.name,DEVICES:.spec.devices[*].name'
echo
kc get deviceclasses
