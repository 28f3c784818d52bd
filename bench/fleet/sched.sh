#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One scheduler throughput run on a fleet that scripts/fleet/fleet.sh
# brought up (docs/benchmarks.md "Fleet"):
#
#   sched.sh MODE PODS [RESULTS]
#
# MODE: dra (one claim each, from a template: one whole GPU), taints (the
# same, the claim tolerating the unhealthy taint every device carries),
# mig (one claim for a 1g.10gb partition of a dynamic-MIG GPU), ext (no
# claim: nvidia.com/gpu: 1 from the Node's allocatable, the device-plugin
# way). PODS pods (and their claims) are made in a fresh namespace while the
# scheduler is paused; the run ends when every one is scheduled (or after SCHED_TIMEOUT seconds, default 900).
# Prints, and appends to RESULTS (TSV) when given: nodes, mode, pods,
# scheduled, seconds, pods/s, p50 and p99 of
# scheduler_pod_scheduling_sli_duration_seconds (the scheduler's own
# histogram, the difference across the run), the API server's RSS (MiB),
# the 1-minute load average, "busy" when it is above the cores (else
# "quiet"), how long making the pods took (ms) and KWOK's heartbeat
# (lease or status, scripts/fleet/fleet.sh FLEET_HEARTBEAT).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROG=sched
# shellcheck source=lib.bash source-path=SCRIPTDIR
source "$HERE/lib.bash"
: "${REAL_NODE_RUN:=/run/fakehw-fleet}"
: "${SCHED_TIMEOUT:=900}"
MODE=${1:?usage: sched.sh dra|taints|mig|ext PODS [RESULTS]}
PODS=${2:?usage: sched.sh MODE PODS [RESULTS]}
RESULTS=${3:-}
PKI=$REAL_NODE_STATE/pki
NS=fleet-bench-$MODE
[[ $PODS =~ ^[1-9][0-9]*$ ]] || die "PODS '$PODS' is not a positive number"

metrics() { # the scheduler's metrics, with the admin certificate
    curl -sk --cert "$PKI/admin.crt" --key "$PKI/admin.key" https://127.0.0.1:10259/metrics
}

# The claim template of MODE (none for ext).
template() {
    local extra=()
    case $MODE in
    ext) return 0 ;;
    taints) extra=("tolerations: [{key: $DRIVER/unhealthy, operator: Exists}]") ;;
    mig) extra=("selectors:" "- cel: {expression: 'device.attributes[\"$DRIVER\"].profile == \"1g.10gb\"'}") ;;
    dra) ;;
    *) die "unknown MODE $MODE" ;;
    esac
    cat <<EOF
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu, namespace: $NS}
spec:
  spec:
EOF
    gpu_claim_spec 4 "count: 1" "${extra[@]}"
}

pods() { # PODS pods: one claim each from the template, or nvidia.com/gpu: 1
    local i spec='  - {name: c, image: fake, resources: {claims: [{name: gpu}]}}
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: gpu}'
    [[ $MODE != ext ]] || spec='  - {name: c, image: fake, resources: {limits: {nvidia.com/gpu: "1"}}}'
    for ((i = 0; i < PODS; i++)); do
        cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: p-$i, namespace: $NS}
spec:
  containers:
$spec
EOF
    done
}

scheduled() { # how many pods of NS have a node
    kctl get pods -n "$NS" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true
}

heartbeat() { # the Stage KWOK runs: lease or status
    if tr '\0' ' ' <"/proc/$(cat "$REAL_NODE_RUN/kwok.pid")/cmdline" | grep -q heartbeat-with-lease; then
        echo lease
    else
        echo status
    fi
}

apiserver_rss_mib() {
    awk '/^VmRSS/ {printf "%d", $2 / 1024}' "/proc/$(cat "$REAL_NODE_RUN/kube-apiserver.pid")/status"
}

fresh_namespace "$NS"
if [[ $MODE != ext ]]; then template | kctl apply -f - >/dev/null; fi
before=$(mktemp) after=$(mktemp)
trap 'rm -f "$before" "$after"' EXIT
# The scheduler is paused (SIGSTOP) while the pods and their claims are
# made, so the run times the scheduler alone, not how fast one client can
# make pods; it goes on (SIGCONT) with every pod in its queue.
sched_pid=$(cat "$REAL_NODE_RUN/kube-scheduler.pid")
metrics >"$before"
kill -STOP "$sched_pid"
trap 'kill -CONT "$sched_pid" 2>/dev/null; rm -f "$before" "$after"' EXIT
c0=$(date +%s%N)
pods | kctl create -f - >/dev/null
if [[ $MODE != ext ]]; then
    for ((s = 0; s < SCHED_TIMEOUT; s++)); do
        [[ $(kctl get resourceclaims -n "$NS" --no-headers 2>/dev/null | wc -l) -ge $PODS ]] && break
        sleep 1
    done
fi
created=$(($(date +%s%N) - c0))
t0=$(date +%s%N)
kill -CONT "$sched_pid"
n=0
for ((s = 0; s < SCHED_TIMEOUT * 5; s++)); do
    n=$(scheduled)
    [[ $n -ge $PODS ]] && break
    sleep 0.2
done
secs=$(awk -v ns="$(($(date +%s%N) - t0))" 'BEGIN {printf "%.1f", ns / 1e9}')
metrics >"$after"
nodes=$(kctl get nodes -l type=kwok --no-headers | wc -l)
load=$(cut -d' ' -f1 /proc/loadavg)
running=$(kctl get pods -n "$NS" --field-selector status.phase=Running --no-headers 2>/dev/null | wc -l)
line=$({ python3 "$HERE/quantiles.py" "$before" "$after" | tr '\n' ' '
    python3 "$HERE/quantiles.py" "$before" "$after" scheduler_scheduling_attempt_duration_seconds; } | awk -v nodes="$nodes" -v mode="$MODE" \
    -v pods="$PODS" -v n="$n" -v secs="$secs" -v rss="$(apiserver_rss_mib)" -v load="$load" \
    -v running="$running" -v cores="$(nproc)" -v cms="$((created / 1000000))" -v hb="$(heartbeat)" \
    '{busy = (load > cores) ? "busy" : "quiet";
      printf "%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", nodes, mode, pods, n, running,
             secs, n / secs, $1, $2, $3, $4, rss, load, busy, cms, hb}')
printf 'nodes\tmode\tpods\tscheduled\trunning\tseconds\tpods/s\tsli_p50_s\tsli_p99_s\tattempt_p50_s\tattempt_p99_s\tapiserver_rss_mib\tload1\tmachine\tcreate_ms\theartbeat\n'
printf '%s\n' "$line"
[[ -z $RESULTS ]] || printf '%s\n' "$line" >>"$RESULTS"
kctl delete namespace "$NS" --wait=false >/dev/null
