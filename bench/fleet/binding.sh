#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Binding conditions on a fleet that scripts/fleet/fleet.sh brought up with
# bench/fleet/fleet-binding.yaml (docs/fleet.md "The binder"):
#
#   binding.sh
#
# Two pods, each with a claim for a GB200 (the attachable devices of that
# config), pinned to a node; the real scheduler allocates the device with
# its binding conditions and waits, the publisher's binder attaches it in
# the node's inventory and sets the claim's conditions, and KWOK runs the
# pod once it is bound:
#  - fleet-node-1 (an attach of 1 s): the pod is bound no earlier than the
#    claim's <driver>/attached condition;
#  - fleet-node-2 (its first attach fails): the binder reports
#    <driver>/attach-failed, the scheduler gives the allocation up and
#    tries again, and the second attach succeeds.
# Exits non-zero when a pod is not Running within BIND_TIMEOUT seconds
# (default 120) or a check fails.
set -euo pipefail
PROG=binding
# shellcheck source=lib.bash source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
: "${BIND_TIMEOUT:=120}"
LOGS=${LOGS:-$REAL_NODE_STATE/logs}
NS=fleet-binding

# claim_and_pod NAME NODE: a claim for one GB200 and a pod on NODE using it.
claim_and_pod() {
    {
        cat <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: $1, namespace: $NS}
spec:
YAML
        gpu_claim_spec 2 "selectors:" \
            "- cel: {expression: 'device.attributes[\"$DRIVER\"].productName == \"NVIDIA GB200\"'}"
        cat <<YAML
---
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS}
spec:
  nodeSelector: {kubernetes.io/hostname: $2}
  containers:
  - {name: c, image: fake, resources: {claims: [{name: gpu}]}}
  resourceClaims:
  - {name: gpu, resourceClaimName: $1}
YAML
    } | kctl apply -f - >/dev/null
}

running() { [[ $(kctl get pod -n "$NS" "$1" -o jsonpath='{.status.phase}') == Running ]]; }

wait_running() { # wait_running NAME
    local s
    for ((s = 0; s < BIND_TIMEOUT * 5; s++)); do
        running "$1" && return 0
        sleep 0.2
    done
    kctl describe pod -n "$NS" "$1" >&2 || true
    die "pod $1 is not Running after $BIND_TIMEOUT s"
}

# condition_time NAME TYPE: lastTransitionTime of the claim's condition TYPE
# when it is True.
condition_time() {
    kctl get resourceclaim -n "$NS" "$1" -o json | jq -r --arg t "$2" \
        '[.status.devices[]?.conditions[]? | select(.type == $t and .status == "True")
          | .lastTransitionTime][0] // empty'
}

bound_time() { # when the pod was bound (PodScheduled True)
    kctl get pod -n "$NS" "$1" -o json | jq -r \
        '.status.conditions[]? | select(.type == "PodScheduled" and .status == "True") | .lastTransitionTime'
}

fresh_namespace "$NS"
claim_and_pod attach-me fleet-node-1
claim_and_pod fail-once fleet-node-2

wait_running attach-me
attached=$(condition_time attach-me "$DRIVER/attached")
bound=$(bound_time attach-me)
[[ -n $attached ]] || die "claim attach-me has no $DRIVER/attached condition"
# RFC 3339 UTC compares as text.
[[ ! $bound < $attached ]] || die "pod attach-me was bound at $bound, before its device was attached at $attached"
echo "attach-me: $DRIVER/attached at $attached, bound at $bound, Running"

wait_running fail-once
[[ -n $(condition_time fail-once "$DRIVER/attached") ]] ||
    die "claim fail-once has no $DRIVER/attached condition after the retry"
if [[ -r $LOGS/fleet-publisher.log ]]; then
    grep -q "claim $NS/fail-once: $DRIVER/attach-failed" "$LOGS/fleet-publisher.log" ||
        die "the publisher's log has no attach-failed for claim fail-once"
fi
echo "fail-once: $DRIVER/attach-failed, then $DRIVER/attached on the retry, Running"
kctl delete namespace "$NS" --wait=false >/dev/null
