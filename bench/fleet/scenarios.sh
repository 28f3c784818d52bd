#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The scale scenarios on a fleet that scripts/fleet/fleet.sh brought up with
# NODES nodes (docs/fleet.md "The cluster suite on a fleet"):
#
#   scenarios.sh NODES
#
# In turn, each on the config it needs (fleet.sh publish swaps it):
#  1. bench/fleet/fleet-8gpu.yaml: the cluster suite's allocation
#     scenarios (templates, shared claims, exact count, All, selectors,
#     constraints, extended resources, taint rules, prioritized list,
#     binding conditions), checked through the API server alone;
#  2. bench/fleet/fleet-scenarios.yaml: partitions, shares, optional node
#     operations;
#  3. bench/fleet/fleet-binding.yaml: binding.sh (the fleet's binder);
#  4. bench/fleet/fleet-flips.yaml: flips.sh NODES;
# then the fleet is published again with FLEET_CONFIG (default
# fleet-8gpu.yaml). Every step runs whatever the one before gave; the
# cluster suite's reports go to REPORT_DIR/allocation and
# REPORT_DIR/partitions (default conformance/reports/fleet). Exits
# non-zero, naming the steps, when one failed.
set -euo pipefail
PROG=scenarios
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.bash source-path=SCRIPTDIR
source "$HERE/lib.bash"
nodes=${1:-}
[[ $nodes =~ ^[1-9][0-9]*$ ]] || die "usage: scenarios.sh NODES (NODES: the fleet's nodes, at least 3)"
((nodes >= 3)) || die "NODES: $nodes: the scenarios' configs need fleet-node-0 .. fleet-node-2"
[[ -r $REAL_NODE_STATE/admin.kubeconfig ]] ||
    die "no $REAL_NODE_STATE/admin.kubeconfig: bring a fleet up first (make fleet NODES=$nodes)"
have=$(kctl get nodes -l type=kwok --no-headers | wc -l)
((have == nodes)) || die "the fleet has $have KWOK nodes, not $nodes"
: "${REPORT_DIR:=$REPO/conformance/reports/fleet}"
: "${FLEET_CONFIG:=$HERE/fleet-8gpu.yaml}"

publish() { "$REPO/scripts/fleet/fleet.sh" publish "$nodes" "$1"; }

# suite NAME FILTER [VAR=VALUE...]: the cluster suite, API checks only.
suite() {
    local name=$1 filter=$2
    shift 2
    env KUBECONFIG="$REAL_NODE_STATE/admin.kubeconfig" PATH="$REAL_NODE_STATE/bin:$PATH" \
        CONFORMANCE_FAKE_DRIVER=false CONFORMANCE_IMAGE_CHECK=false \
        CONFORMANCE_DRIVER_NAMESPACE=default CONFORMANCE_FILTER="$filter" \
        CONFORMANCE_REPORT_DIR="$REPORT_DIR/$name" "$@" "$REPO/conformance/cluster/run.sh"
}

failed=()
step() { # step NAME COMMAND...: runs it, remembers a failure
    local t0=$SECONDS
    echo "$PROG: $1"
    if "${@:2}"; then
        echo "$PROG: $1: passed in $((SECONDS - t0)) s"
    else
        echo "$PROG: $1: FAILED after $((SECONDS - t0)) s"
        failed+=("$1")
    fi
}

step "publish fleet-8gpu.yaml" publish "$HERE/fleet-8gpu.yaml"
step "allocation scenarios" suite allocation \
    '^(templates|shared claims|exact count|all mode|selectors|constraints|extended resources|taint rules|prioritized|binding)' \
    CONFORMANCE_EXTENDED_RESOURCE_NAME="$DRIVER/gpu"
step "publish fleet-scenarios.yaml" publish "$HERE/fleet-scenarios.yaml"
step "partitions, shares, optional node operations" suite partitions '^(partitions|shares|optional node)'
step "publish fleet-binding.yaml" publish "$HERE/fleet-binding.yaml"
step "binding conditions (binding.sh)" "$HERE/binding.sh"
step "publish fleet-flips.yaml" publish "$HERE/fleet-flips.yaml"
step "flips (flips.sh)" "$HERE/flips.sh" "$nodes"
step "publish $(basename "$FLEET_CONFIG")" publish "$FLEET_CONFIG"
((${#failed[@]} == 0)) || die "failed: $(printf '%s; ' "${failed[@]}")"
echo "$PROG: every step passed on $nodes nodes"
