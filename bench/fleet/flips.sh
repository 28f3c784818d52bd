#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Health flips on a fleet that scripts/fleet/fleet.sh publishes with
# bench/fleet/fleet-flips.yaml (docs/fleet.md "What works"):
#
#   flips.sh NODES
#
# Reads every slice of the driver, again and again, and checks that the
# tainted devices are exactly those the config's flips make: fleet-node-1's
# gpu-0 and gpu-3 of every node matching fleet-node-7* (a node section's
# glob), a minute after the publisher started; then, fleet-node-1's flip
# over a minute later, the glob's alone. Run it within that first minute
# or two of `fleet.sh publish`. Any other device tainted on the way fails
# at once, naming it. Exits non-zero when a step is not reached within
# FLIP_TIMEOUT seconds (default 180) of the one before.
set -euo pipefail
PROG=flips
# shellcheck source=lib.bash source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${FLIP_TIMEOUT:=180}"
nodes=${1:?usage: flips.sh NODES}
[[ $nodes =~ ^[1-9][0-9]*$ ]] || die "NODES: \"$nodes\" is not a positive integer"
((nodes > 1)) || die "NODES: $nodes: the config's flips need fleet-node-1"

# The devices each step may taint, one "node/device" a line, sorted.
glob=$(for ((i = 0; i < nodes; i++)); do
    if [[ fleet-node-$i == fleet-node-7* ]]; then echo "fleet-node-$i/gpu-3"; fi
done | sort)
both=$(printf '%s\n%s\n' fleet-node-1/gpu-0 "$glob" | sed '/^$/d' | sort)

# Every tainted device of the driver's slices, "node/device" a line, sorted.
tainted() {
    kctl get resourceslices -o json | jq -r --arg d "$DRIVER" \
        '.items[] | select(.spec.driver == $d) | .spec.nodeName as $n
         | .spec.devices[]? | select((.taints // []) | length > 0) | "\($n)/\(.name)"' | sort
}

# await WANT ALLOWED WHAT: until the tainted set is WANT, each read within
# ALLOWED (a device outside it fails at once).
await() {
    local want=$1 allowed=$2 what=$3 now extra deadline=$((SECONDS + FLIP_TIMEOUT))
    while :; do
        now=$(tainted)
        extra=$(comm -23 <(grep . <<<"$now") <(grep . <<<"$allowed"))
        [[ -z $extra ]] || die "tainted, and no flip of the config makes it: $(head -5 <<<"$extra" | tr '\n' ' ')"
        [[ $now == "$want" ]] && break
        ((SECONDS < deadline)) ||
            die "$what: not reached after $FLIP_TIMEOUT s ($(grep -c . <<<"$now") devices tainted)"
        sleep 2
    done
    echo "$what: $(grep -c . <<<"$want") devices tainted, as the flips say"
}

await "$both" "$both" "fleet-node-1/gpu-0 and gpu-3 of fleet-node-7*"
await "$glob" "$both" "fleet-node-1/gpu-0 healthy again, gpu-3 of fleet-node-7* still tainted"
