#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# NVIDIA's quickstart specs as a check (docs/nvidia.md#the-quickstart-specs):
# applies each spec of a checkout of kubernetes-sigs/dra-driver-nvidia-gpu's
# demo/specs/quickstart to the cluster of the current kubeconfig, as written
# but for the container image (rewrite.py: the test image, sh for bash, the
# nvidia-smi -L listing for a command the image cannot run), waits until
# every pod of the spec runs, checks that each container's `nvidia-smi -L`
# lists exactly the devices its claims were given (as many, MIG or whole
# GPU, the same UUIDs, MIG devices under their parent GPU), prints one table
# row per container, and deletes the spec again.  It needs a driver named
# gpu.nvidia.com with NVIDIA's DeviceClasses: NVIDIA's own driver, or
# fakehw-dra's nvidia personality.
#
#   conformance/quickstart/run.sh SPECS_DIR [SPEC...]
#
# SPECS_DIR is demo/specs/quickstart (its v1/ is used when there is one);
# SPECs are files there (default: gpu-test1..6 and gpu-test-mps).
# Environment:
#   KUBECTL                    kubectl to run (default kubectl)
#   QUICKSTART_IMAGE           the containers' image (default $CONFORMANCE_IMAGE, else busybox:1.36)
#   QUICKSTART_SHELL           what runs the containers' bash -c (default sh)
#   QUICKSTART_DRIVER          the driver whose devices are checked (default gpu.nvidia.com)
#   QUICKSTART_TIMEOUT         seconds a spec's pods may take to run, and its delete (default 180)
#   QUICKSTART_EXPECT_PENDING  SPEC=TEXT,... specs whose pods must stay pending with TEXT in
#                              the scheduler's message (default gpu-test6=index: it selects on
#                              an attribute index, which NVIDIA's driver does not publish)
#   QUICKSTART_KEEP            true: leave each spec's objects in the cluster
# Exit status: 0 when every row is ok, 1 when one is not, 2 for bad usage
# or a spec that cannot be checked (nothing is applied then).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KUBECTL=${KUBECTL:-kubectl}
image=${QUICKSTART_IMAGE:-${CONFORMANCE_IMAGE:-busybox:1.36}}
shell=${QUICKSTART_SHELL:-sh}
driver=${QUICKSTART_DRIVER:-gpu.nvidia.com}
timeout=${QUICKSTART_TIMEOUT:-180}
expect_pending=${QUICKSTART_EXPECT_PENDING-gpu-test6=index}
keep=${QUICKSTART_KEEP:-false}
DEFAULT_SPECS=(gpu-test1 gpu-test2 gpu-test3 gpu-test4 gpu-test5 gpu-test6 gpu-test-mps)

die() {
    printf 'quickstart: %s\n' "$*" >&2
    exit 2
}

usage() {
    sed -n '3,/^# or a spec/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

kc() {
    "$KUBECTL" "$@"
}

# The spec files to check, one per line, from the command line.
spec_files() {
    local dir=$1 spec
    shift
    [[ -d $dir/v1 ]] && dir=$dir/v1
    (($# > 0)) || set -- "${DEFAULT_SPECS[@]}"
    for spec; do
        [[ $spec == /* || -f $spec ]] || spec=$dir/${spec%.yaml}.yaml
        [[ -f $spec ]] ||
            die "$spec: no such spec (SPECS_DIR is demo/specs/quickstart of a checkout of kubernetes-sigs/dra-driver-nvidia-gpu)"
        printf '%s\n' "$spec"
    done
}

# The TEXT QUICKSTART_EXPECT_PENDING gives spec $1, or nothing.
pending_text() {
    local item items=()
    IFS=',' read -ra items <<<"$expect_pending"
    for item in "${items[@]}"; do
        [[ ${item%%=*} == "$1" ]] && printf '%s' "${item#*=}"
    done
    return 0
}

ROWS=()
FAILED=0

# row SPEC POD CONTAINER CLAIMED SEEN RESULT
row() {
    ROWS+=("$(printf '%-14s %-24s %-10s %-12s %-12s %s' "$@")")
    [[ $6 == ok* ]] || FAILED=1
}

# running PODS_JSON: how many of the pods run with every container started.
running() {
    jq '[.items[] | select(.status.phase == "Running" and
        ((.status.containerStatuses // []) | length > 0 and all(.state.running != null)))] | length' <<<"$1"
}

# why_pending NS PODS_JSON: the scheduler's messages for pods that do not run.
why_pending() {
    {
        jq -r '.items[].status.conditions[]? | select(.type == "PodScheduled" and .status != "True") | .message // empty' <<<"$2"
        kc get events -n "$1" -o json 2>/dev/null |
            jq -r '.items[]? | select(.reason == "FailedScheduling") | .message' 2>/dev/null || true
    } | sort -u | paste -sd'|' -
}

# wait_pods NS WANT [TEXT]: the pods of NS as JSON once WANT of them run,
# once the scheduler's message has TEXT (a spec expected to stay pending),
# or at the deadline.
wait_pods() {
    local pods deadline=$((SECONDS + timeout))
    while :; do
        pods=$(kc get pods -n "$1" -o json)
        (($(running "$pods") >= $2 || SECONDS >= deadline)) && break
        [[ -n ${3-} && $(why_pending "$1" "$pods") == *"$3"* ]] && break
        sleep 2
    done
    printf '%s' "$pods"
}

# The jq program: a container's claimed devices ($claims, $slices, $driver)
# as [{name, type, uuid, parent}].
# shellcheck disable=SC2016 # jq variables
CLAIMED='
  . as $pod
  | [($pod.spec.containers[] | select(.name == $ctr) | .resources.claims // [])[] as $ref
     | (($pod.spec.resourceClaims[]? | select(.name == $ref.name) | .resourceClaimName)
        // ($pod.status.resourceClaimStatuses[]? | select(.name == $ref.name) | .resourceClaimName)) as $claim
     | $claims.items[] | select(.metadata.name == $claim)
     | .status.allocation.devices.results[]?
     | select(.driver == $driver)
     | select($ref.request == null or .request == $ref.request or (.request | startswith($ref.request + "/")))
     | . as $r
     | ([$slices.items[] | select(.spec.driver == $driver and .spec.pool.name == $r.pool)
         | .spec.devices[]? | select(.name == $r.device)] | first // {}) as $d
     | {name: $r.device, type: ($d.attributes.type.string // "?"),
        uuid: $d.attributes.uuid.string, parent: $d.attributes.parentUUID.string}]'

# seen_devices: nvidia-smi -L on stdin as {gpus: [whole GPU UUIDs], migs: [{uuid, parent}]}.
seen_devices() {
    awk '
        /^GPU [0-9]+: .*\(UUID: GPU-[^)]*\)/ { match($0, /GPU-[^)]*/); gpu = substr($0, RSTART, RLENGTH); gpus[++n] = gpu; next }
        /^[[:space:]]+MIG .*\(UUID: MIG-[^)]*\)/ { match($0, /MIG-[^)]*/); printf "mig %s %s\n", substr($0, RSTART, RLENGTH), gpu; hasmig[gpu] = 1 }
        END { for (i = 1; i <= n; i++) if (!hasmig[gpus[i]]) printf "gpu %s\n", gpus[i] }' |
        jq -Rn '[inputs | split(" ")] | {gpus: [.[] | select(.[0] == "gpu") | .[1]] | sort,
            migs: [.[] | select(.[0] == "mig") | {uuid: .[1], parent: .[2]}]}'
}

# verdict CLAIMED_JSON SEEN_JSON: "ok" or what differs.
# shellcheck disable=SC2016 # jq variables
verdict() {
    jq -rn --argjson c "$1" --argjson s "$2" '
        ([$c[] | select(.type == "gpu")]) as $cg | ([$c[] | select(.type == "mig")]) as $cm
        | if ($c | map(select(.type != "gpu" and .type != "mig")) | length) > 0 then
            "FAIL: devices of unknown type: \([$c[] | select(.type != "gpu" and .type != "mig") | .name] | join(","))"
          elif ($cg | length) != ($s.gpus | length) or ($cm | length) != ($s.migs | length) then
            "FAIL: \($cg | length) GPU, \($cm | length) MIG claimed; nvidia-smi -L lists \($s.gpus | length) GPU, \($s.migs | length) MIG"
          elif ($cg | map(.uuid) | sort) != $s.gpus then
            "FAIL: other GPUs: claimed \($cg | map(.uuid) | join(",")), listed \($s.gpus | join(","))"
          elif ($cm | map(.parent) | sort) != ($s.migs | map(.parent) | sort) then
            "FAIL: MIG devices of other GPUs: claimed under \($cm | map(.parent) | join(",")), listed under \($s.migs | map(.parent) | join(","))"
          elif ([$cm[] | select(.uuid != null) | .uuid] - ($s.migs | map(.uuid))) != [] then
            "FAIL: other MIG devices: claimed \($cm | map(.uuid // "?") | join(",")), listed \($s.migs | map(.uuid) | join(","))"
          else "ok" end'
}

# seen_kinds SEEN_JSON: seen_devices' answer as a list of {type}, for kinds.
seen_kinds() {
    jq -c '[(.gpus[] | {type: "gpu"}), (.migs[] | {type: "mig"})]' <<<"$1"
}

# kinds JSON: "2 GPU" / "1 MIG" / "1 GPU 1 MIG" / "none".
kinds() {
    jq -r '(map(select(.type == "gpu")) | length) as $g | (map(select(.type == "mig")) | length) as $m
        | [if $g > 0 then "\($g) GPU" else empty end, if $m > 0 then "\($m) MIG" else empty end]
        | if length == 0 then "none" else join(" ") end' <<<"$1"
}

# check_pods SPEC NS PODS_JSON: one row per container.
check_pods() {
    local spec=$1 ns=$2 pods=$3 pod ctr claimed seen result
    # In files: a cluster's slices outgrow one command-line argument.
    kc get resourceclaims -n "$ns" -o json >"$WORK/claims.json"
    kc get resourceslices -o json >"$WORK/slices.json"
    while read -r pod ctr; do
        claimed=$(jq -c --arg ctr "$ctr" --arg driver "$driver" --slurpfile claims "$WORK/claims.json" \
            --slurpfile slices "$WORK/slices.json" '$claims[0] as $claims | $slices[0] as $slices | '"$CLAIMED" \
            <<<"$(jq --arg p "$pod" '.items[] | select(.metadata.name == $p)' <<<"$pods")")
        seen=$(kc logs -n "$ns" "$pod" -c "$ctr" | seen_devices)
        result=$(verdict "$claimed" "$seen")
        [[ $result != ok ]] || result="ok: $(jq -r 'map(.name) | join(", ") | if . == "" then "no device" else . end' <<<"$claimed")"
        row "$spec" "$pod" "$ctr" "$(kinds "$claimed")" "$(kinds "$(seen_kinds "$seen")")" "$result"
    done < <(jq -r '.items[] | .metadata.name as $p | .spec.containers[] | "\($p) \(.name)"' <<<"$pods")
}

# check_spec FILE REWRITTEN_JSON: applies, waits, checks, deletes.
check_spec() {
    local spec want ns pods up expected why
    spec=$(basename "$1" .yaml)
    want=$(jq .pods <<<"$2")
    ns=$(jq -r '.namespaces | join(" ")' <<<"$2")
    jq .list <<<"$2" >"$WORK/$spec.json"
    jq -r '.notes[]' <<<"$2" | sed "s|^$1: |quickstart: $spec: |" >&2
    if ! kc apply -f "$WORK/$spec.json" >/dev/null 2>"$WORK/$spec.err"; then
        row "$spec" "-" "-" "$want pods" "-" "FAIL: kubectl apply: $(paste -sd' ' "$WORK/$spec.err")"
        return 0
    fi
    expected=$(pending_text "$spec")
    pods=$(wait_pods "$ns" "$want" "$expected")
    up=$(running "$pods")
    if ((up < want)); then
        why=$(why_pending "$ns" "$pods")
        if [[ -n $expected && $why == *"$expected"* ]]; then
            row "$spec" "-" "-" "$want pods" "$up running" "ok: pending as expected ($why)"
        else
            row "$spec" "-" "-" "$want pods" "$up running" "FAIL: $up of $want pods run after ${timeout}s: ${why:-no scheduler message}"
        fi
    elif [[ -n $expected ]]; then
        row "$spec" "-" "-" "$want pods" "$up running" "FAIL: its pods run, but QUICKSTART_EXPECT_PENDING says they stay pending ($expected)"
    else
        check_pods "$spec" "$ns" "$pods"
    fi
    [[ $keep == true ]] ||
        kc delete -f "$WORK/$spec.json" --ignore-not-found --wait=true --timeout="${timeout}s" >/dev/null
}

main() {
    [[ ${1-} == -h || ${1-} == --help ]] && {
        usage
        exit 0
    }
    (($# >= 1)) || die "usage: run.sh SPECS_DIR [SPEC...] (see --help)"
    [[ -d $1 ]] || die "$1: not a directory (SPECS_DIR is demo/specs/quickstart of a checkout of kubernetes-sigs/dra-driver-nvidia-gpu)"
    [[ $timeout =~ ^[1-9][0-9]*$ ]] || die "QUICKSTART_TIMEOUT=$timeout is not a positive whole number of seconds"
    [[ $keep == true || $keep == false ]] || die "QUICKSTART_KEEP=$keep is not true or false"
    local files file ns
    files=$(spec_files "$@")
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
    # Every spec is read and every namespace looked at before anything is applied.
    local -A rewritten
    while read -r file; do
        rewritten[$file]=$(python3 "$here/rewrite.py" "$file" "$image" "$shell") || exit 2
        for ns in $(jq -r '.namespaces[]' <<<"${rewritten[$file]}"); do
            ! kc get namespace "$ns" -o name >/dev/null 2>&1 ||
                die "namespace $ns of $file exists already: delete it first (kubectl delete namespace $ns)"
        done
    done <<<"$files"
    while read -r file; do
        check_spec "$file" "${rewritten[$file]}"
    done <<<"$files"
    printf '%-14s %-24s %-10s %-12s %-12s %s\n' SPEC POD CONTAINER CLAIMED SEEN RESULT
    printf '%s\n' "${ROWS[@]}"
    return "$FAILED"
}

main "$@"
