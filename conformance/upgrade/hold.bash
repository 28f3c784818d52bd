# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# The workloads an upgrade must not disturb: long-running pods holding claims
# of every kind the cluster suite knows (a generated claim, a shared claim,
# All mode, admin access, a partition, a memory share, a device with binding
# conditions), and the state they are judged by.  hold_create places them,
# hold_state describes them as JSON, hold_compare says what changed between
# two such descriptions, hold_release removes them.  The cluster suite's
# library does the work (templates, waits, slices); nothing here knows how
# the cluster gets upgraded.

UPGRADE_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/../cluster/lib/helpers.bash
source "$UPGRADE_LIB/../cluster/lib/helpers.bash"

# The two namespaces: admin access needs a label the others must not have.
: "${UPGRADE_HOLD_NAMESPACE:=fakehw-upgrade-hold}"
: "${UPGRADE_ADMIN_NAMESPACE:=fakehw-upgrade-admin}"
HOLD_LABEL=conformance.fakehw.example.com/upgrade-hold

# hold_plan SLICES NODES: which device each hold item takes, as TSV lines
# "item node uuid extra" (extra: the selector value for "all", the memory
# for "share"; "-" for none, since read collapses empty tab-separated
# fields), or "skip item reason" when the inventory has no room for it.
# SLICES is driver_slices output; NODES the schedulable, untainted nodes,
# one per line.  Template, shared and attach go to the node with the most
# plain devices, All mode and admin access to another one, where All takes
# every device of one value of the selector attribute and leaves the rest
# for new claims; partitions and shares may be on tainted nodes (the pods
# tolerate the partitions taint).  Devices of a slice that skips node
# operations (virtual ones, never prepared) are not held.
hold_plan() {
    jq -r --arg d "$CONFORMANCE_DRIVER" --arg sel "$CONFORMANCE_SELECTOR_ATTRIBUTE" \
        --argjson ok "$(jq -Rn '[inputs | select(length > 0)]' <<<"$2")" "$JQ_LOOKUP"'
        def val($a): lookup(.attributes; $a) | if . == null then "" else (.string // .version // .int // .bool) | tostring end;
        def skip($item; $why): ["skip", $item, $why];
        [.[] | select(.spec.nodeName != null) | .spec.nodeName as $n | (.spec.skipNodeOperations // false) as $virtual
         | .spec.devices[]?
         | {node: $n, uuid: val("uuid"), value: val($sel), profile: val("profile"),
            memory: (.capacity.memory.requestPolicy.default // "1Gi"),
            kind: (if ((.bindingConditions // []) | length) > 0 then "attach"
                   elif ((.consumesCounters // []) | length) > 0 then (if val("profile") != "" then "partition" else "other" end)
                   elif (.allowMultipleAllocations // false) then (if .capacity.memory.requestPolicy != null then "shared" else "other" end)
                   elif (.bindsToNode // false) or $virtual then "other" else "plain" end)}] as $devs
        | [$devs[] | select(.kind == "plain" and .uuid != "" and (.node as $n | $ok | index($n)))]
          | group_by(.node) | sort_by(-length, .[0].node) as $by_node
        | ($by_node[0] // []) as $a
        | (if ($a | length) >= 1 then ["template", $a[0].node, $a[0].uuid, ""]
           else skip("template"; "no schedulable node has a device without counters, sharing or binding conditions") end),
          (if ($a | length) >= 2 then ["shared", $a[1].node, $a[1].uuid, ""]
           else skip("shared"; "no schedulable node has two devices without counters, sharing or binding conditions") end),
          ([$by_node[1:][] | . as $g | group_by(.value) | map(select(.[0].value != "" and length < ($g | length)))
            | .[0] // empty | {node: .[0].node, value: .[0].value}][0] as $all
           | if $all then ["all", $all.node, "", $all.value], ["admin", $all.node, "", ""]
             else skip("all"; "no second schedulable node whose devices differ in \($sel)"),
                  skip("admin"; "it shares the node of the All-mode claim, which was skipped") end),
          ([$devs[] | select(.kind == "attach")][0] as $x
           | if $x then ["attach", $x.node, $x.uuid, ""] else skip("attach"; "no device has bindingConditions") end),
          ([$devs[] | select(.kind == "partition")] | sort_by(.profile, .uuid) | .[0] as $x
           | if $x then ["partition", $x.node, $x.uuid, ""] else skip("partition"; "no partition (a device with counters and a profile)") end),
          ([$devs[] | select(.kind == "shared")][0] as $x
           | if $x then ["share", $x.node, $x.uuid, $x.memory] else skip("share"; "no device is shared by memory capacity") end)
        | map(if . == "" then "-" else . end) | @tsv' <<<"$1"
}

# free_device_in SLICES TAKEN NODE: the uuid of a device on NODE that no
# claim holds (TAKEN: a JSON array of "pool/device"), a plain one if there
# is one, else one shared by capacity (always allocatable once more); empty
# if there is none.  Devices with counters or binding conditions and
# virtual ones are never chosen.
free_device_in() {
    jq -r --arg n "$3" --arg d "$CONFORMANCE_DRIVER" --argjson taken "$2" "$JQ_LOOKUP"'
        [.[] | select(.spec.nodeName == $n and ((.spec.skipNodeOperations // false) | not))
         | .spec.pool.name as $p | .spec.devices[]?
         | select(((.bindingConditions // []) | length) == 0 and ((.consumesCounters // []) | length) == 0)
         | "\($p)/\(.name)" as $key
         | select((.allowMultipleAllocations // false) or ($taken | index($key) | not))
         | {uuid: (lookup(.attributes; "uuid") | .string // empty), shared: (.allowMultipleAllocations // false)}]
        | sort_by(.shared) | .[0] // empty | .uuid' <<<"$1"
}

# hold_namespace NAME [admin]: the namespace, labelled as a hold namespace
# (and for admin access).
hold_namespace() {
    kc get namespace "$1" >/dev/null 2>&1 && {
        fail "namespace $1 exists already: release the previous hold first (run.sh release)"
        return 1
    }
    create_from namespace NAME="$1" RUN_ID=upgrade || return 1
    kc label namespace "$1" "$HOLD_LABEL=true" >/dev/null || return 1
    if [[ ${2:-} == admin ]]; then
        kc label namespace "$1" resource.kubernetes.io/admin-access=true >/dev/null || return 1
    fi
}

# hold_create STATE_DIR: places the workloads hold_plan finds room for, waits
# until every pod runs, and writes STATE_DIR/plan.tsv and STATE_DIR/hold.json.
hold_create() {
    local dir=$1 slices nodes plan item node uuid extra ns=$UPGRADE_HOLD_NAMESPACE
    mkdir -p "$dir" || return 1
    slices=$(driver_slices) || return 1
    nodes=$(kc get nodes -o json | schedulable_nodes) || return 1
    plan=$(hold_plan "$slices" "$nodes") || return 1
    printf '%s\n' "$plan" >"$dir/plan.tsv"
    hold_namespace "$ns" || return 1
    hold_namespace "$UPGRADE_ADMIN_NAMESPACE" admin || return 1
    # TEST_NAMESPACE is where the templates put the objects.
    # shellcheck disable=SC2034
    local held=() TEST_NAMESPACE=$ns
    while IFS=$'\t' read -r item node uuid extra; do
        local by_uuid="" pin
        [[ $uuid == - ]] && uuid=
        [[ $extra == - ]] && extra=
        [[ -n $uuid ]] && by_uuid=$(cel_attribute_equals "$CONFORMANCE_UNIQUE_ATTRIBUTE" string "$uuid")
        pin=$(pin_to "$node")
        case $item in
        skip)
            printf 'hold: no %s claim: %s\n' "$node" "$uuid" >&2
            continue
            ;;
        template)
            create_from claim-template-selector TEMPLATE=held CEL="$by_uuid" || return 1
            create_from pod POD=template CLAIM_SOURCE=resourceClaimTemplateName CLAIM=held AFFINITY="$pin" || return 1
            held+=("$ns/template")
            ;;
        shared)
            create_from claim-selector CLAIM=shared CEL="$by_uuid" || return 1
            create_from pod-two-containers POD=shared-a CLAIM_SOURCE=resourceClaimName CLAIM=shared || return 1
            create_from pod POD=shared-b CLAIM_SOURCE=resourceClaimName CLAIM=shared || return 1
            held+=("$ns/shared-a" "$ns/shared-b")
            ;;
        all)
            create_from claim-all-selector CLAIM=all \
                CEL="$(cel_attribute_equals "$CONFORMANCE_SELECTOR_ATTRIBUTE" string "$extra")" || return 1
            create_from pod POD=all CLAIM_SOURCE=resourceClaimName CLAIM=all AFFINITY="$pin" || return 1
            held+=("$ns/all")
            ;;
        admin)
            TEST_NAMESPACE=$UPGRADE_ADMIN_NAMESPACE create_from claim-admin-all CLAIM=admin || return 1
            TEST_NAMESPACE=$UPGRADE_ADMIN_NAMESPACE create_from pod POD=admin CLAIM_SOURCE=resourceClaimName \
                CLAIM=admin AFFINITY="$pin" || return 1
            held+=("$UPGRADE_ADMIN_NAMESPACE/admin")
            ;;
        attach)
            create_from claim-selector CLAIM=attach CEL="$by_uuid" || return 1
            create_from pod POD=attach CLAIM_SOURCE=resourceClaimName CLAIM=attach AFFINITY="$pin" || return 1
            held+=("$ns/attach")
            ;;
        partition)
            create_from claim-selector CLAIM=partition CEL="$by_uuid" || return 1
            create_from pod-tolerating POD=partition CLAIM_SOURCE=resourceClaimName CLAIM=partition AFFINITY="$pin" || return 1
            held+=("$ns/partition")
            ;;
        share)
            create_from claim-share CLAIM=share CEL="$by_uuid" MEMORY="$extra" || return 1
            create_from pod-tolerating POD=share CLAIM_SOURCE=resourceClaimName CLAIM=share AFFINITY="$pin" || return 1
            held+=("$ns/share")
            ;;
        *)
            fail "hold_plan gave an unknown item $item"
            return 1
            ;;
        esac
    done <<<"$plan"
    ((${#held[@]} > 0)) || {
        fail "the inventory has room for no hold workload (see $dir/plan.tsv)"
        return 1
    }
    local p
    for p in "${held[@]}"; do
        wait_pod_ready "${p%%/*}" "${p#*/}" || return 1
    done
    hold_state >"$dir/hold.json.tmp" && mv "$dir/hold.json.tmp" "$dir/hold.json"
}

# hold_namespaces: the hold namespaces that exist, one per line.
hold_namespaces() {
    local json
    json=$(kc get namespaces -l "$HOLD_LABEL=true" -o json) || return 1
    jq -r '.items[].metadata.name' <<<"$json"
}

# hold_state: the held pods, their claims and the driver's devices per node,
# as one JSON object:
#   pods:   "ns/name" -> {uid, node, ready, containers: name -> {id, restarts}}
#   claims: "ns/name" -> {uid, allocated, results: ["driver/pool/device[#shareID]"],
#                         reservedFor: [uid]}
#   nodes:  node -> ["pool/device", ...] of the driver's current slices
# With the fake driver, also uuids: "ns/pod/container" -> [GPU UUIDs it
# lists], unless the argument is "quick" (cheap enough to run every few
# seconds during an upgrade).
hold_state() {
    local ns pods='[]' claims='[]' json slices uuids='{}' namespaces
    # A failed query is no answer, not "no namespaces": right after an API
    # server restart, requests are refused until its authorizer has synced.
    namespaces=$(hold_namespaces) || return 1
    for ns in $namespaces; do
        json=$(kc get pods -n "$ns" -o json) || return 1
        pods=$(jq -c --argjson acc "$pods" '$acc + .items' <<<"$json") || return 1
        json=$(kc get resourceclaims -n "$ns" -o json) || return 1
        claims=$(jq -c --argjson acc "$claims" '$acc + .items' <<<"$json") || return 1
    done
    slices=$(driver_slices) || return 1
    if [[ ${1:-} != quick ]] && is_fake_driver; then
        local key p c
        while read -r key; do
            IFS=/ read -r ns p c <<<"$key"
            json=$(container_gpu_uuids "$ns" "$p" "$c" | jq -Rn '[inputs]') || return 1
            uuids=$(jq -c --arg k "$key" --argjson v "$json" '. + {($k): $v}' <<<"$uuids")
        done < <(jq -r '.[] | select(.status.phase == "Running") | "\(.metadata.namespace)/\(.metadata.name)/\(.spec.containers[].name)"' <<<"$pods")
    fi
    jq -n --argjson pods "$pods" --argjson claims "$claims" --argjson slices "$slices" --argjson uuids "$uuids" '{
        pods: ($pods | map({key: "\(.metadata.namespace)/\(.metadata.name)", value: {
            uid: .metadata.uid, node: .spec.nodeName,
            ready: any(.status.conditions[]?; .type == "Ready" and .status == "True"),
            containers: ([.status.containerStatuses[]? | {key: .name, value: {id: .containerID, restarts: .restartCount}}] | from_entries)}})
            | from_entries),
        claims: ($claims | map({key: "\(.metadata.namespace)/\(.metadata.name)", value: {
            uid: .metadata.uid, allocated: (.status.allocation != null),
            results: ([.status.allocation.devices.results[]? | "\(.driver)/\(.pool)/\(.device)\(if .shareID then "#" + .shareID else "" end)"] | sort),
            reservedFor: ([.status.reservedFor[]?.uid] | sort)}}) | from_entries),
        nodes: ($slices | map(select(.spec.nodeName != null) | .spec.nodeName as $n | .spec.pool.name as $p
            | .spec.devices[]? | {node: $n, dev: "\($p)/\(.name)"}) | group_by(.node)
            | map({key: .[0].node, value: (map(.dev) | sort)}) | from_entries),
        uuids: $uuids}'
}

# hold_compare BEFORE AFTER [ASPECT]: prints every difference that matters
# between two hold_state objects and fails if there is one.  ASPECT limits
# it to pods, claims, nodes or uuids (default: all of them).
hold_compare() {
    local out
    out=$(jq -rn --argjson a "$1" --argjson b "$2" --arg aspect "${3:-all}" '
        def want($x): $aspect == "all" or $aspect == $x;
        (if want("pods") then
            ($a.pods | to_entries[] | .key as $k | .value as $was | $b.pods[$k] as $now
             | if $now == null then "pod \($k) is gone"
               elif $now.uid != $was.uid then "pod \($k) was replaced (uid \($was.uid) -> \($now.uid))"
               elif ($now.ready | not) then "pod \($k) is not Ready"
               else ($was.containers | to_entries[] | .key as $c | $now.containers[$c] as $n
                     | if $n == null then "pod \($k) container \($c) has no status"
                       elif $n.id != .value.id then "pod \($k) container \($c) was replaced (\(.value.id) -> \($n.id))"
                       elif $n.restarts != .value.restarts then "pod \($k) container \($c) restarted (\(.value.restarts) -> \($n.restarts))"
                       else empty end)
               end)
         else empty end),
        (if want("claims") then
            ($a.claims | to_entries[] | .key as $k | .value as $was | $b.claims[$k] as $now
             | if $now == null then "claim \($k) is gone"
               elif $now.uid != $was.uid then "claim \($k) was replaced"
               elif ($now.allocated | not) then "claim \($k) is no longer allocated"
               elif $now.results != $was.results then "claim \($k) devices changed: \($was.results | join(" ")) -> \($now.results | join(" "))"
               elif $now.reservedFor != $was.reservedFor then "claim \($k) reservedFor changed: \($was.reservedFor | join(" ")) -> \($now.reservedFor | join(" "))"
               else empty end)
         else empty end),
        (if want("nodes") then
            ($a.nodes | to_entries[] | .key as $n | .value as $was | ($b.nodes[$n] // []) as $now
             | if $now == [] then "node \($n) publishes no device of the driver"
               elif $now != $was then "node \($n) devices changed: missing [\(($was - $now) | join(" "))], new [\(($now - $was) | join(" "))]"
               else empty end)
         else empty end),
        (if want("uuids") then
            ($a.uuids | to_entries[] | .key as $k | $b.uuids[$k] as $now
             | if $now == null then "container \($k) could not be asked for its GPUs"
               elif $now != .value then "container \($k) sees [\($now | join(" "))], it saw [\(.value | join(" "))]"
               else empty end)
         else empty end)') || return 1
    [[ -z $out ]] || {
        printf '%s\n' "$out"
        return 1
    }
}

# hold_release: deletes the hold namespaces and waits until their pods and
# claims are gone (the claims deallocated, the devices unprepared).
hold_release() {
    local ns rc=0
    for ns in $(hold_namespaces); do
        release_namespace "$ns" || rc=1
    done
    return $rc
}

# hold_sample BASELINE: one line for the availability log: "ok", or "gap"
# and what is missing, or "unreachable" when the API server does not answer
# or refuses (nothing can be told then).
# A held pod counts as having its devices while it is Ready in the same
# containers and its claims stay allocated and reserved for it.
hold_sample() {
    local now diff
    if ! now=$(hold_state quick 2>/dev/null); then
        echo unreachable
        return 0
    fi
    if diff=$(hold_compare "$1" "$now" pods) && diff=$(hold_compare "$1" "$now" claims); then
        echo ok
    else
        printf 'gap %s\n' "$(paste -sd';' <<<"$diff")"
    fi
}


# availability_summary < LOG: the hold_sample log ("<epoch> ok|gap ...|
# unreachable") as JSON: how long it ran, how many seconds the held pods
# were without their devices (a gap lasts from its sample to the next one),
# the longest gap, how long the API server did not answer (when nothing can
# be told) and the first few gaps as they were seen.
availability_summary() {
    awk '
        { t[NR] = $1; s[NR] = $2; line[NR] = $0 }
        END {
            gap = 0; longest = 0; run = 0; down = 0; shown = 0
            for (i = 1; i <= NR; i++) {
                d = (i < NR) ? t[i + 1] - t[i] : 0
                if (s[i] == "gap") {
                    gap += d; run += d; if (run > longest) longest = run
                    if (shown < 5) { sub(/^[0-9]+ gap /, "", line[i]); printf "G\t%s\t%s\n", t[i], line[i]; shown++ }
                } else {
                    run = 0
                    if (s[i] == "unreachable") down += d
                }
            }
            printf "S\t%d\t%d\t%d\t%d\t%d\t%d\n", NR, (NR ? t[NR] - t[1] : 0), gap, longest, down, (NR ? t[1] : 0)
        }' | jq -Rn '[inputs | split("\t")] as $rows
        | ($rows | map(select(.[0] == "S"))[0]) as $s
        | {samples: ($s[1] | tonumber), seconds: ($s[2] | tonumber), secondsWithoutDevices: ($s[3] | tonumber),
           longestGapSeconds: ($s[4] | tonumber), apiUnreachableSeconds: ($s[5] | tonumber),
           gaps: [$rows[] | select(.[0] == "G") | {at: (.[1] | tonumber), what: .[2]}]}'
}
