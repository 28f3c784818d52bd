# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# kubectl access and the queries the scenarios make: waiting, pods, claims,
# ResourceSlices, events.  Everything reads `kubectl -o json` through jq, so
# the field paths below are the resource.k8s.io/v1 and core/v1 wire names.

# kubectl with the suite's context and a bound on every request; the plain
# reads go through the preflight's kubectl proxy when it runs
# (lib/api_proxy.bash).
kc() {
    if [[ -n ${CONFORMANCE_API_SOCKET:-} ]] && api_read_plan "$@"; then
        api_get
        return
    fi
    local args=(--request-timeout=30s)
    [[ -n ${CONFORMANCE_KUBE_CONTEXT:-} ]] && args+=(--context "$CONFORMANCE_KUBE_CONTEXT")
    "${CONFORMANCE_KUBECTL:-kubectl}" "${args[@]}" "$@"
}

# Prints a message on stderr and fails: the one way helpers report a failed
# expectation, so the test output says what was expected and what was seen.
# With no arguments the message comes from stdin (as bats-support's fail).
fail() {
    if (($# == 0)); then
        cat >&2
    else
        printf '%s\n' "$*" >&2
    fi
    return 1
}

# wait_for DESCRIPTION TIMEOUT COMMAND...: runs COMMAND every
# CONFORMANCE_POLL_INTERVAL seconds until it succeeds.  On timeout, fails with
# DESCRIPTION and the last output of COMMAND.
wait_for() {
    local what=$1 timeout=$2 out
    shift 2
    local deadline=$((SECONDS + timeout))
    while :; do
        if out=$("$@" 2>&1); then
            [[ -n $out ]] && printf '%s\n' "$out"
            return 0
        fi
        if ((SECONDS >= deadline)); then
            fail "timed out after ${timeout}s waiting for: $what" $'\n'"last check ($*) said: ${out:-<nothing>}"
            return 1
        fi
        sleep "${CONFORMANCE_POLL_INTERVAL:-2}"
    done
}

# holds_for DESCRIPTION SECONDS COMMAND...: COMMAND must keep succeeding for
# SECONDS (a pod stays Pending, a claim stays unallocated).
holds_for() {
    local what=$1 seconds=$2 out
    shift 2
    local deadline=$((SECONDS + seconds))
    while :; do
        if ! out=$("$@" 2>&1); then
            fail "expected for ${seconds}s: $what" $'\n'"but the check ($*) failed: ${out:-<nothing>}"
            return 1
        fi
        ((SECONDS >= deadline)) && return 0
        sleep "${CONFORMANCE_POLL_INTERVAL:-2}"
    done
}

# object_holds GETTER NS NAME COND REPORT: succeeds when the jq condition COND
# holds on the JSON that GETTER NS NAME prints; else prints the jq filter
# REPORT over that JSON and fails.
object_holds() {
    local json
    json=$("$1" "$2" "$3") || return 1
    jq -e "$4" <<<"$json" >/dev/null && return 0
    jq -r "$5" <<<"$json"
    return 1
}

# --- pods -------------------------------------------------------------------

pod_json() {
    kc get pod -n "$1" "$2" -o json
}

# pod_jq NS NAME JQ_ARGS...: jq with JQ_ARGS over the pod's JSON (fails when
# the pod cannot be read).
pod_jq() {
    local json
    json=$(pod_json "$1" "$2") || return 1
    jq "${@:3}" <<<"$json"
}

# Succeeds when the pod is Ready.
pod_is_ready() {
    object_holds pod_json "$1" "$2" \
        '[.status.conditions[]? | select(.type == "Ready" and .status == "True")] | length == 1' \
        '"pod \(.metadata.name): phase \(.status.phase // "?"), " +
            ([.status.conditions[]? | "\(.type)=\(.status)\(if .message then " (\(.message))" else "" end)"] | join(", "))'
}

wait_pod_ready() {
    wait_for "pod $1/$2 to become Ready" "${3:-$CONFORMANCE_TIMEOUT}" pod_is_ready "$1" "$2" >/dev/null
}

# Succeeds while the pod has not been scheduled (no node, phase Pending).
pod_is_unscheduled() {
    object_holds pod_json "$1" "$2" '(.spec.nodeName // "") == "" and .status.phase == "Pending"' \
        '"pod \(.metadata.name) is on node \(.spec.nodeName // "-") in phase \(.status.phase)"'
}

pod_node() {
    pod_jq "$1" "$2" -j '.spec.nodeName // ""'
}

pod_uid() {
    pod_jq "$1" "$2" -j '.metadata.uid'
}

# The name of the ResourceClaim behind pod claim $3 (pod.spec.resourceClaims[].name):
# for a template, the generated name from pod.status.resourceClaimStatuses.
pod_claim_name() {
    # shellcheck disable=SC2016 # a jq filter
    pod_jq "$1" "$2" -er --arg n "$3" '
        ([.spec.resourceClaims[]? | select(.name == $n) | .resourceClaimName // empty] +
         [.status.resourceClaimStatuses[]? | select(.name == $n) | .resourceClaimName // empty])[0]'
}

delete_pod() {
    kc delete pod -n "$1" "$2" --wait=false >/dev/null
}

# Succeeds once the object is gone.
is_gone() {
    local out
    if out=$(kc get "$@" -o name 2>&1); then
        printf '%s still exists\n' "$out"
        return 1
    fi
    [[ $out == *NotFound* || $out == *"not found"* ]] || {
        printf '%s\n' "$out"
        return 1
    }
}

wait_gone() {
    wait_for "$* to be deleted" "$CONFORMANCE_TIMEOUT" is_gone "$@" >/dev/null
}

# Restart count of container $3.
container_restarts() {
    kc get pod -n "$1" "$2" -o json |
        jq -er --arg c "$3" '.status.containerStatuses[] | select(.name == $c) | .restartCount'
}

# --- claims -----------------------------------------------------------------

claim_json() {
    kc get resourceclaim -n "$1" "$2" -o json
}

# Allocation results of the claim for the driver under test, one line each:
# "<pool>\t<device>\t<request>\t<adminAccess>".
claim_results() {
    local json
    json=$(claim_json "$1" "$2") || return 1
    jq -r --arg d "$CONFORMANCE_DRIVER" '.status.allocation.devices.results[]? | select(.driver == $d) |
        "\(.pool)\t\(.device)\t\(.request)\t\(.adminAccess // false)"' <<<"$json"
}

# Succeeds when the claim is allocated; prints its results.
claim_is_allocated() {
    local json
    json=$(claim_json "$1" "$2") || return 1
    if jq -e '.status.allocation != null' <<<"$json" >/dev/null; then
        claim_results "$1" "$2"
        return 0
    fi
    printf 'claim %s/%s is not allocated\n' "$1" "$2"
    return 1
}

# allocation_time NS CLAIM: the claim's status.allocation.allocationTimestamp
# in Unix seconds; fails while the claim is not allocated.
allocation_time() {
    local json ts
    json=$(claim_json "$1" "$2") || return 1
    ts=$(jq -r '.status.allocation.allocationTimestamp // ""' <<<"$json") || return 1
    [[ -n $ts ]] || {
        echo "claim $2 has no allocation with an allocationTimestamp"
        return 1
    }
    date -u -d "$ts" +%s
}

# allocated_after NS CLAIM T: the claim is allocated at a time after T (Unix
# seconds); prints that time.
allocated_after() {
    local t
    t=$(allocation_time "$1" "$2") || {
        echo "$t"
        return 1
    }
    ((t > $3)) || {
        echo "claim $2 is still allocated at $t, not after $3"
        return 1
    }
    echo "$t"
}

# pod_unbound NS POD: the pod has no node yet.
pod_unbound() {
    local node
    node=$(pod_json "$1" "$2" | jq -r '.spec.nodeName // ""') || return 1
    [[ -z $node ]] || {
        echo "pod $2 is bound to node $node"
        return 1
    }
}

wait_claim_allocated() {
    wait_for "claim $1/$2 to be allocated" "${3:-$CONFORMANCE_TIMEOUT}" claim_is_allocated "$1" "$2" >/dev/null
}

claim_is_unallocated() {
    local json
    json=$(claim_json "$1" "$2") || return 1
    jq -e '.status.allocation == null' <<<"$json" >/dev/null || {
        printf 'claim %s/%s is allocated: %s\n' "$1" "$2" "$(jq -c '.status.allocation.devices.results' <<<"$json")"
        return 1
    }
}

# Succeeds when nothing reserves the claim and it carries no allocation.
claim_is_released() {
    object_holds claim_json "$1" "$2" '(.status.reservedFor // []) == [] and .status.allocation == null' \
        '"claim \(.metadata.name): reservedFor \([.status.reservedFor[]?.name]), allocated \(.status.allocation != null)"'
}

# UIDs of the consumers that reserve the claim, sorted, one per line.
claim_reserved_uids() {
    claim_json "$1" "$2" | jq -r '[.status.reservedFor[]?.uid] | sort[]'
}

# --- ResourceSlices -----------------------------------------------------------

# The driver's slices of the current pool generations (older generations are
# obsolete and ignored by the scheduler too), as one JSON array.
driver_slices() {
    local json
    json=$(kc get resourceslices --field-selector "spec.driver=$CONFORMANCE_DRIVER" -o json) || return 1
    current_slices <<<"$json"
}

# Filter: a ResourceSliceList on stdin -> array of the slices of the driver under
# test that belong to the highest generation of their pool.
current_slices() {
    jq -c --arg d "$CONFORMANCE_DRIVER" '
        [.items[]? | select(.spec.driver == $d)]
        | group_by(.spec.pool.name)
        | map((map(.spec.pool.generation) | max) as $g | map(select(.spec.pool.generation == $g)))
        | add // []'
}

# "<node>\t<device count>" for every node with local devices of the driver,
# most devices first, then by name.  Reads driver_slices output on stdin.
node_device_counts() {
    jq -r '[.[] | select(.spec.nodeName != null) | {node: .spec.nodeName, n: (.spec.devices // [] | length)}]
        | group_by(.node) | map({node: .[0].node, n: (map(.n) | add)})
        | sort_by(-.n, .node)[] | "\(.node)\t\(.n)"'
}

# Device names on node $1, sorted.  Reads driver_slices output on stdin.
node_devices() {
    jq -r --arg n "$1" '[.[] | select(.spec.nodeName == $n) | .spec.devices[]?.name] | sort[]'
}

# "<pool>\t<device>" of every device on node $1, sorted.  Reads
# driver_slices output on stdin.
node_pool_devices() {
    jq -r --arg n "$1" '[.[] | select(.spec.nodeName == $n) | .spec.pool.name as $p | .spec.devices[]? | "\($p)\t\(.name)"] | sort[]'
}

# The pool that holds the devices of node $1.  Reads driver_slices output.
node_pool() {
    jq -er --arg n "$1" '[.[] | select(.spec.nodeName == $n) | .spec.pool.name] | unique
        | if length == 1 then .[0] else error("node \($n) has \(length) pools: \(.)") end'
}

# The JSON of device $2 in pool $1.  Reads driver_slices output on stdin.
slice_device() {
    jq -ec --arg p "$1" --arg dev "$2" '[.[] | select(.spec.pool.name == $p) | .spec.devices[]? | select(.name == $dev)][0]
        // error("no device \($dev) in pool \($p)")'
}

# jq definition: lookup(m; name) is the entry for attribute or capacity name
# in map m, or null.  Names without a domain belong to the driver ($d), which
# may also publish them fully qualified, so both spellings are looked up.
# shellcheck disable=SC2016 # jq variables, not shell ones
JQ_LOOKUP='def lookup(m; $n): ($n | if contains("/") then [., (if startswith($d + "/") then ltrimstr($d + "/") else empty end)]
    else [., "\($d)/\(.)"] end) as $names | [$names[] as $k | m[$k] // empty][0];'

# The value of attribute $1 of a device JSON on stdin, whatever its type, as text.
device_attribute() {
    jq -er --arg a "$1" --arg d "$CONFORMANCE_DRIVER" "$JQ_LOOKUP"'
        lookup(.attributes; $a) | if . == null then error("device has no attribute \($a)")
        else (.string // .version // .int // .bool) | tostring end'
}

# The type of attribute $1 (string, int, bool, version) of a device on stdin.
device_attribute_type() {
    jq -er --arg a "$1" --arg d "$CONFORMANCE_DRIVER" "$JQ_LOOKUP"'
        lookup(.attributes; $a) | if . == null then error("device has no attribute \($a)") else keys[0] end'
}

# The quantity of capacity $1 of a device JSON on stdin.
device_capacity() {
    jq -er --arg a "$1" --arg d "$CONFORMANCE_DRIVER" "$JQ_LOOKUP"'
        lookup(.capacity; $a) | if . == null then error("device has no capacity \($a)") else .value end'
}

# How many (node, value) groups of at least two devices agree on attribute
# $1: 0 means no node can satisfy a two-device matchAttribute on it.  Reads
# driver_slices output on stdin.
count_agreeing_groups() {
    jq -r --arg a "$1" --arg d "$CONFORMANCE_DRIVER" "$JQ_LOOKUP"'
        [.[] | select(.spec.nodeName != null) | .spec.nodeName as $n | .spec.devices[]? |
         {n: $n, v: (lookup(.attributes; $a) | tostring)} | select(.v != "null")]
        | group_by([.n, .v]) | map(select(length >= 2)) | length'
}

# "true" when every device has attribute $1 and no two share a value (so a
# two-device matchAttribute on it cannot be satisfied).  Reads driver_slices
# output on stdin.
attribute_unique() {
    jq -r --arg a "$1" --arg d "$CONFORMANCE_DRIVER" "$JQ_LOOKUP"'
        [.[] | .spec.devices[]? | lookup(.attributes; $a)] as $v
        | ($v | length) > 1 and ($v | all(. != null)) and ($v | unique | length) == ($v | length)'
}

# attribute_pair_nodes ATTR possible|impossible: the nodes, sorted, where two
# devices of the driver share a value of attribute ATTR (possible), or where
# there are at least two devices, all with ATTR and no two alike, so that a
# two-device matchAttribute on ATTR cannot be met (impossible).  Reads
# driver_slices output on stdin.
attribute_pair_nodes() {
    jq -r --arg a "$1" --arg want "$2" --arg d "$CONFORMANCE_DRIVER" "$JQ_LOOKUP"'
        [.[] | select(.spec.nodeName != null) | .spec.nodeName as $n | .spec.devices[]?
         | {n: $n, v: (lookup(.attributes; $a) | if . == null then null else tostring end)}]
        | group_by(.n) | map({n: .[0].n, vs: map(.v)})
        | map(select(if $want == "possible" then [.vs[] | select(. != null)] | group_by(.) | any(length >= 2)
                     else (.vs | length) >= 2 and all(.vs[]; . != null) and (.vs | unique | length) == (.vs | length) end))
        | .[].n'
}

# The taints of device $2 in pool $1 as compact JSON ([] when none).
# Reads driver_slices output on stdin.
device_taints() {
    jq -c --arg p "$1" --arg dev "$2" '[.[] | select(.spec.pool.name == $p) | .spec.devices[]? | select(.name == $dev) | .taints[]?]'
}

# --- extended resources ------------------------------------------------------------

# The extended resource name of DeviceClass $1: CONFORMANCE_EXTENDED_RESOURCE_NAME
# when set, else the class's spec.extendedResourceName (empty when it has none:
# an API server without DRAExtendedResource drops the field).
class_extended_resource_name() {
    if [[ -n ${CONFORMANCE_EXTENDED_RESOURCE_NAME:-} ]]; then
        printf '%s\n' "$CONFORMANCE_EXTENDED_RESOURCE_NAME"
        return 0
    fi
    local json
    json=$(kc get deviceclass "$1" -o json) || return 1
    jq -r '.spec.extendedResourceName // ""' <<<"$json"
}

# The claim the scheduler made for pod $1/$2's extended resources
# (status.extendedResourceClaimStatus.resourceClaimName).
pod_extended_claim() {
    pod_jq "$1" "$2" -er '.status.extendedResourceClaimStatus.resourceClaimName // error("pod \(.metadata.name) has no extendedResourceClaimStatus")'
}

# The request of that claim serving container $3 of pod $1/$2.
pod_extended_request() {
    # shellcheck disable=SC2016 # a jq filter
    pod_jq "$1" "$2" -er --arg c "$3" '[.status.extendedResourceClaimStatus.requestMappings[]? | select(.containerName == $c) | .requestName]
        | if length == 1 then .[0] else error("container \($c): \(length) request mappings") end'
}

# --- nodes --------------------------------------------------------------------

# schedulable_nodes [TOLERATED_KEY]: the nodes a plain test pod can land
# on (one that tolerates taints of TOLERATED_KEY, with it): Ready, not
# cordoned, no NoSchedule or NoExecute taint (but of that key).  One name
# per line.  Reads `kubectl get nodes -o json`.
# shellcheck disable=SC2120 # the rolling-update scenario passes the key
schedulable_nodes() {
    jq -r --arg tolerated "${1:-}" '.items[] | select((.spec.unschedulable // false) | not)
        | select([.spec.taints[]? | select((.effect == "NoSchedule" or .effect == "NoExecute") and .key != $tolerated)]
            | length == 0)
        | select([.status.conditions[]? | select(.type == "Ready" and .status == "True")] | length == 1)
        | .metadata.name'
}

# node_candidates [FILTER]: the nodes the per-node scenarios may use, best
# first: schedulable nodes with devices of the driver, most devices first
# (ties: by name), "<node>\t<device count>" each.  FILTER, a jq condition on
# one device of a slice, keeps the nodes with at least one device it holds
# for (has("bindingConditions"): an attachable device).
# One jq over the slices, the schedulable nodes a set: on a fleet of
# thousands of nodes a process per node cost seconds a scenario.
node_candidates() {
    local filter=${1:-true} slices nodes
    slices=$(driver_slices) || return 1
    nodes=$(kc get nodes -o json | schedulable_nodes | jq -Rsc 'split("\n") | map(select(length > 0))') ||
        return 1
    # shellcheck disable=SC2016 # jq variables, not shell ones
    jq -r --argjson schedulable "$nodes" '($schedulable | map({(.): true}) | add // {}) as $ok
        | ([.[] | .spec.devices = [.spec.devices[]? | select('"$filter"')]
            | select(.spec.devices | length > 0) | .spec.nodeName | strings]
           | map({(.): true}) | add // {}) as $held
        | [.[] | select(.spec.nodeName != null) | {node: .spec.nodeName, n: (.spec.devices // [] | length)}]
        | group_by(.node) | map({node: .[0].node, n: (map(.n) | add)})
        | sort_by(-.n, .node)[] | select($ok[.node] and $held[.node]) | "\(.node)\t\(.n)"' <<<"$slices"
}

# The node the per-node scenarios use when any will do: the first of
# node_candidates [FILTER].  Prints "<node>\t<device count>".
pick_node() {
    local candidates
    candidates=$(node_candidates "$@") || return 1
    if [[ -n $candidates ]]; then
        head -n 1 <<<"$candidates"
        return 0
    fi
    local counts nodes
    counts=$(driver_slices | node_device_counts) || true
    nodes=$(kc get nodes -o json | schedulable_nodes | paste -sd' ' -) || true
    fail "no schedulable node has devices of driver $CONFORMANCE_DRIVER${1:+ for which $1 holds}" \
        $'\n'"nodes with devices: ${counts:-none}"$'\n'"schedulable nodes: ${nodes:-none}"
}

# --- events -------------------------------------------------------------------

# Succeeds when pod $2 has a FailedScheduling event whose message matches
# CONFORMANCE_UNSCHEDULABLE_REGEX; prints the message.
pod_has_unschedulable_event() {
    local json msg
    json=$(kc get events -n "$1" --field-selector "involvedObject.kind=Pod,involvedObject.name=$2,reason=FailedScheduling" -o json) ||
        return 1
    msg=$(jq -r '[.items[] | .message] | last // ""' <<<"$json")
    if [[ -n $msg && $msg =~ $CONFORMANCE_UNSCHEDULABLE_REGEX ]]; then
        printf '%s\n' "$msg"
        return 0
    fi
    printf 'no FailedScheduling event for pod %s matching /%s/ yet (last: %s)\n' \
        "$2" "$CONFORMANCE_UNSCHEDULABLE_REGEX" "${msg:-none}"
    return 1
}

# The pod must stay unscheduled for CONFORMANCE_PENDING_SECONDS and the
# scheduler must say why.  Prints the scheduler's message.
assert_pod_stays_pending() {
    local ns=$1 pod=$2
    wait_for "a FailedScheduling event for pod $ns/$pod" "$CONFORMANCE_TIMEOUT" \
        pod_has_unschedulable_event "$ns" "$pod" || return 1
    holds_for "pod $ns/$pod stays unscheduled" "$CONFORMANCE_PENDING_SECONDS" \
        pod_is_unscheduled "$ns" "$pod" || return 1
}
