# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# What the scripts that run on a fleet of scripts/fleet/fleet.sh share
# (sched.sh, binding.sh).  Sourced, never run; PROG names the script in
# die's message.
: "${REAL_NODE_STATE:=/var/lib/fakehw-fleet}"
: "${DRIVER:=gpu.fakehw.example.com}"

kctl() { "$REAL_NODE_STATE/bin/kubectl" --kubeconfig "$REAL_NODE_STATE/admin.kubeconfig" "$@"; }
die() { echo "$PROG: $*" >&2; exit 1; }

# fresh_namespace NS: NS, empty (a run before may have left it behind).
fresh_namespace() {
    kctl delete namespace "$1" --wait=true >/dev/null 2>&1 || true
    kctl create namespace "$1" >/dev/null
}

# gpu_claim_spec DEPTH [LINE...]: the spec of a claim for one device of
# $DRIVER's class (its request "gpu"), with LINEs (count, selectors,
# tolerations) under the request's `exactly`, indented by DEPTH spaces.
gpu_claim_spec() {
    local pad line
    pad=$(printf '%*s' "$1" '')
    shift
    # "${@/#/      }": each LINE six spaces in, under `exactly`'s keys.
    for line in "devices:" "  requests:" "  - name: gpu" "    exactly:" \
        "      deviceClassName: $DRIVER" "${@/#/      }"; do
        printf '%s%s\n' "$pad" "$line"
    done
}
