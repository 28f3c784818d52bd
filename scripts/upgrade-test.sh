#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A cluster upgrade as a test: a kind cluster at FROM with the driver and
# long-running pods holding claims of every kind (conformance/upgrade), then
# the control plane and each node upgraded in place to TO (kind-upgrade.bash),
# with the checks after each step and a log of whether the held pods had
# their devices all along.  Between the control plane and the nodes the
# cluster suite runs on the skewed cluster (TO control plane, FROM kubelets);
# at the end, after the held workloads are released, on the upgraded one.
#
#   upgrade-test.sh FROM TO       e.g. upgrade-test.sh v1.36.3 v1.37.2
#
#   FROM_IMAGE, TO_IMAGE   node images (default fakehw-dra/kind-node:<version>,
#                          from make node-image)
#   SKEW_FILTER            CONFORMANCE_FILTER of the suite on the skewed
#                          cluster (default: all of it; "-" skips the run)
#   FINAL_FILTER           the same for the upgraded cluster
#   JOBS                   parallel scenarios in the suite runs (default 2)
#   UPGRADE_REPORT_DIR     reports (default conformance/reports/upgrade-FROM-TO)
#   UPGRADE_CACHE          the TO programs and images, per node image (default
#                          ~/.cache/fakehw-dra/upgrade)
#   CONFORMANCE_IMAGE      the suite's test image, loaded into the nodes
# Every variable of kind-up (KIND_CLUSTER_NAME, IMAGE, SKIP_IMAGE_BUILD, ...)
# and of the suite passes through.  Exit status 1 if any check or scenario
# failed; the cluster is left for a look.
set -euo pipefail
# shellcheck source=common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source=kind-upgrade.bash source-path=SCRIPTDIR
source "$REPO_ROOT/scripts/kind-upgrade.bash"

from=${1:-${FROM:-}} to=${2:-${TO:-}}
[[ -n $from && -n $to ]] || die "usage: upgrade-test.sh FROM TO (e.g. v1.36.3 v1.37.2)"
version_re='^v1\.([0-9]+)\.([0-9]+)(-(alpha|beta|rc)\.[0-9]+)?$'
[[ $from =~ $version_re ]] || die "FROM=$from: expected v1.MINOR.PATCH[-beta.N]"
from_minor=${BASH_REMATCH[1]}
[[ $to =~ $version_re ]] || die "TO=$to: expected v1.MINOR.PATCH[-beta.N]"
to_minor=${BASH_REMATCH[1]}
((to_minor == from_minor || to_minor == from_minor + 1)) ||
    die "FROM=$from TO=$to: kubeadm upgrades one minor at a time (TO must be 1.$from_minor or 1.$((from_minor + 1)))"
from_image=${FROM_IMAGE:-fakehw-dra/kind-node:$from}
to_image=${TO_IMAGE:-fakehw-dra/kind-node:$to}
cluster=${KIND_CLUSTER_NAME:-fakehw-dra}
jobs=${JOBS:-2}
dir=${UPGRADE_REPORT_DIR:-$REPO_ROOT/conformance/reports/upgrade-$from-$to}
require_tools docker kind jq
docker image inspect "$from_image" >/dev/null 2>&1 ||
    die "node image $from_image is not in the engine's store: make node-image K8S_VERSION=$from (docs/install.md)"
rm -rf "$dir"
mkdir -p "$dir"

steps=$dir/steps.tsv
printf 'step\tseconds\tstatus\tsecondsWithoutDevices\tapiUnreachableSeconds\n' >"$steps"
failed=0
# record STEP SECONDS STATUS [GAPS_JSON]
record() {
    local without=- down=-
    if [[ -n ${4:-} ]]; then
        without=$(jq -r .secondsWithoutDevices "$4")
        down=$(jq -r .apiUnreachableSeconds "$4")
    fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$without" "$down" >>"$steps"
    [[ $3 == ok || $3 == skipped ]] || failed=1
    log "step $1: $3 in ${2}s"
}

# The TO release's programs and images; its kubectl is the one every step
# uses (within one minor of both control planes).
# Kept per image, so the next run of the same TO reuses them.
to_id=$(docker image inspect -f '{{.Id}}' "$to_image" 2>/dev/null) ||
    die "node image $to_image is not in the engine's store: make node-image K8S_VERSION=$to (docs/install.md)"
to_id=${to_id#sha256:}
art=${UPGRADE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fakehw-dra/upgrade}/$to-${to_id:0:12}
if [[ -f $art/version && -f $art/images.tar ]]; then
    log "=== the $to programs and images of $to_image, from $art"
else
    log "=== the $to programs and images from $to_image into $art"
    rm -rf "$art"
    upgrade_artifacts "$to_image" "$art"
fi
[[ $(<"$art/version") == "$to" ]] || die "$to_image holds Kubernetes $(<"$art/version"), not $to"
export PATH=$art/bin:$PATH
mkdir -p "$art/bin" && ln -sf ../kubectl "$art/bin/kubectl"
export CONFORMANCE_KUBECTL=${CONFORMANCE_KUBECTL:-$art/kubectl}

upgrade_run() { "$REPO_ROOT/conformance/upgrade/run.sh" "$@"; }
suite_run() { # NAME FILTER
    local start=$SECONDS status=ok
    if [[ $2 == - ]]; then
        record "$1" 0 skipped
        return 0
    fi
    CONFORMANCE_JOBS=$jobs CONFORMANCE_FILTER=$2 CONFORMANCE_REPORT_DIR=$dir/$1 \
        "$REPO_ROOT/conformance/cluster/run.sh" >"$dir/$1.log" 2>&1 || status=failed
    record "$1" $((SECONDS - start)) "$status"
    grep -E '^(not ok|ok [0-9]+ .* # skip)' "$dir/$1.log" | sed 's/^/  /' >&2 || true
}
watch_pid=
watch_start() { # STATE_DIR
    # run.sh itself in the background (not a function), so that $! is the
    # process the kill below stops.
    UPGRADE_STATE_DIR=$1 "$REPO_ROOT/conformance/upgrade/run.sh" watch &
    watch_pid=$!
}
watch_stop() { # STATE_DIR -> gaps.json
    if [[ -n $watch_pid ]]; then
        kill "$watch_pid" 2>/dev/null || true
        wait "$watch_pid" 2>/dev/null || true
    fi
    watch_pid=
    UPGRADE_STATE_DIR=$1 upgrade_run gaps >"$1/gaps.json"
}
trap '[[ -z $watch_pid ]] || kill "$watch_pid" 2>/dev/null || true' EXIT
check() { # STEP STATE_DIR [NODES]
    local start=$SECONDS status=ok
    UPGRADE_NODES=${3:-} UPGRADE_STATE_DIR=$2 UPGRADE_REPORT_DIR=$dir upgrade_run check "$1" >"$dir/check-$1.log" 2>&1 ||
        status=failed
    grep -E '^(ok|not ok)' "$dir/check-$1.log" | sed 's/^/  /' >&2 || true
    record "check-$1" $((SECONDS - start)) "$status"
}

log "=== a fresh $from cluster ($from_image)"
"$REPO_ROOT/scripts/kind-down.sh" >&2 || die "kind-down failed"
start=$SECONDS
K8S_VERSION=$from KIND_NODE_IMAGE=$from_image "$REPO_ROOT/scripts/kind-up.sh" >&2 || die "kind-up $from failed"
record "kind-up-$from" $((SECONDS - start)) ok
if [[ -n ${CONFORMANCE_IMAGE:-} ]] && docker image inspect "$CONFORMANCE_IMAGE" >/dev/null 2>&1; then
    kind load docker-image "$CONFORMANCE_IMAGE" --name "$cluster" >&2 || die "kind load docker-image $CONFORMANCE_IMAGE failed"
fi
mapfile -t nodes < <(kind get nodes --name "$cluster" | sort)
control_plane=$cluster-control-plane
printf '%s\n' "${nodes[@]}" | grep -qxF "$control_plane" || die "cluster $cluster has no node $control_plane"

log "=== the $to images into every node (what a pre-pull does)"
start=$SECONDS
for n in "${nodes[@]}"; do node_import_images "$n" "$art"; done
record pre-pull $((SECONDS - start)) ok

log "=== held workloads on $from"
state1=$dir/state-control-plane
start=$SECONDS
UPGRADE_STATE_DIR=$state1 upgrade_run create >&2 || die "placing the held workloads failed"
record hold-control-plane $((SECONDS - start)) ok
watch_start "$state1"

log "=== control plane $control_plane to $to"
start=$SECONDS
upgrade_control_plane "$control_plane" "$art" "$to"
cp_seconds=$((SECONDS - start))
check control-plane "$state1"
watch_stop "$state1"
record control-plane "$cp_seconds" ok "$state1/gaps.json"

log "=== the suite on the skewed cluster ($to control plane, $from kubelets)"
start=$SECONDS
status=ok
UPGRADE_STATE_DIR=$state1 upgrade_run release >&2 || status=failed
record release-control-plane $((SECONDS - start)) "$status"
suite_run suite-skew "${SKEW_FILTER:-}"

log "=== held workloads again, prepared by the $from kubelets"
state2=$dir/state-nodes
start=$SECONDS
UPGRADE_STATE_DIR=$state2 upgrade_run create >&2 || die "placing the held workloads again failed"
record hold-nodes $((SECONDS - start)) ok
watch_start "$state2"
for n in "${nodes[@]}"; do
    [[ $n != "$control_plane" ]] || continue
    log "=== node $n to $to"
    start=$SECONDS
    upgrade_node "$n" "$art" "$to"
    record "node-${n#"$cluster"-}" $((SECONDS - start)) ok
    check "node-${n#"$cluster"-}" "$state2" "$n"
done
watch_stop "$state2"
start=$SECONDS
status=ok
UPGRADE_STATE_DIR=$state2 upgrade_run release >&2 || status=failed
record release-upgraded "$((SECONDS - start))" "$status" "$state2/gaps.json"

log "=== the suite on the upgraded cluster ($to)"
suite_run suite-upgraded "${FINAL_FILTER:-}"

jq -Rn --arg from "$from" --arg to "$to" '[inputs | split("\t")] | .[0] as $h
    | {from: $from, to: $to, steps: [.[1:][] | [$h, .] | transpose | map({(.[0]): .[1]}) | add]}' \
    <"$steps" >"$dir/upgrade-report.json"
column -t -s$'\t' "$steps" >&2
log "reports in $dir"
exit "$failed"
