# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# The life of one test: its tags, its own namespace, the node lock that keeps
# exclusive scenarios alone, cleanup that runs even when the test fails, and
# the failure report a person reads first.

# --- tags -----------------------------------------------------------------------
# bats 1.8 filters on tags but does not tell a test its own tags, so they are
# read back from the test file: "# bats file_tags=" lines apply to every later
# test, a "# bats test_tags=" line to the next @test only.

# test_tags FILE DESCRIPTION: prints the tags of that test, one per line.
test_tags() {
    local file=$1 description=$2 line name found=''
    local -a file_tags=() next_tags=() tags=()
    local tag_re='^[[:space:]]*#[[:space:]]*bats[[:space:]]+(file_tags|test_tags)=(.*)$'
    # The pattern bats itself uses for a test line (bats-preprocess).
    local test_re='^[[:blank:]]*@test[[:blank:]]+(.*[^[:blank:]])[[:blank:]]+\{(.*)$'
    while IFS= read -r line || [[ -n $line ]]; do
        if [[ $line =~ $tag_re ]]; then
            local kind=${BASH_REMATCH[1]} list=${BASH_REMATCH[2]}
            IFS=, read -ra tags <<<"$list"
            tags=("${tags[@]// /}")
            if [[ $kind == file_tags ]]; then
                file_tags=("${tags[@]}")
            else
                next_tags=("${tags[@]}")
            fi
        elif [[ $line =~ $test_re ]]; then
            name=${BASH_REMATCH[1]}
            name=${name#[\'\"]}
            name=${name%[\'\"]}
            if [[ $name == "$description" ]]; then
                found=1
                break
            fi
            next_tags=()
        fi
    done <"$file"
    [[ -n $found ]] || {
        fail "test_tags: no test \"$description\" in $file"
        return 1
    }
    printf '%s\n' "${file_tags[@]}" "${next_tags[@]}" | grep -v '^$' | sort -u
}

# has_tag TAG: the current test carries TAG (TEST_TAGS is set by scenario_setup).
has_tag() {
    grep -qxF -- "$1" <<<"${TEST_TAGS:-}"
}

# --- the node lock ---------------------------------------------------------------
# Under `bats --jobs N` tests run at once.  Tests tagged "serial" need every
# device of a node (All mode, health flips, driver restart) and hold that
# node's lock exclusively; the rest share every node's lock, since the
# scheduler may place their pods anywhere.  A serial test that names its
# node first (use_test_node, take_node_lock NODE) locks that node alone, so
# serial tests of different nodes overlap; one that names none, or is
# tagged "all-nodes" (a rolling update of every driver pod), locks them
# all.  Locks are taken in node-name order, so holders never wait in a
# circle.  A test takes its lock when it first uses the nodes, not in
# setup: one that skips for a missing gate or parameter then never waits.
#
# The preflight writes the nodes with the driver's devices to
# <lock file>.nodes; without that list (or for a node not on it) one lock
# stands for every node.

lock_mode() {
    if has_tag serial; then echo exclusive; else echo shared; fi
}

node_lock_file() {
    echo "${CONFORMANCE_LOCK_FILE:-${BATS_RUN_TMPDIR:-/tmp}/conformance-node-devices.lock}"
}

# write_lock_nodes NODE...: the nodes that get a lock of their own.
write_lock_nodes() {
    printf '%s\n' "$@" | grep -v '^$' | LC_ALL=C sort -u >"$(node_lock_file).nodes"
}

# node_lock_files MODE [NODE]: the lock files MODE on NODE takes, in order.
node_lock_files() {
    local mode=$1 node=${2:-} file nodes n
    file=$(node_lock_file)
    nodes=$(cat "$file.nodes" 2>/dev/null) || nodes=
    if [[ -z $nodes ]]; then
        echo "$file"
    elif [[ $mode == exclusive && -n $node ]] && grep -qxF -- "$node" <<<"$nodes"; then
        echo "$file.node-$node"
    else
        while IFS= read -r n; do echo "$file.node-$n"; done <<<"$nodes"
    fi
}

# acquire_node_lock MODE [NODE [try]]: MODE (shared or exclusive) use of
# NODE's devices, or of every node's.  With "try", fails at once, quietly
# and holding nothing, when another test holds the lock.
acquire_node_lock() {
    local mode=$1 node=${2:-} try=${3:-} files f fd flag=-s what
    [[ $mode == exclusive ]] && flag=-x
    files=$(node_lock_files "$mode" "$node")
    local waited_from=$EPOCHREALTIME
    what="$mode use of the nodes' devices"
    [[ -n $node && $files == "$(node_lock_file).node-$node" ]] && what="$mode use of node $node's devices"
    CONFORMANCE_LOCK_FDS=
    while IFS= read -r f; do
        exec {fd}>>"$f" || {
            fail "cannot open the lock file $f"
            return 1
        }
        CONFORMANCE_LOCK_FDS+="$fd "
        if [[ $try == try ]]; then
            flock -n "$flag" "$fd" || {
                release_node_lock
                return 1
            }
            continue
        fi
        flock -w "$CONFORMANCE_LOCK_TIMEOUT" "$flag" "$fd" || {
            fail "waited ${CONFORMANCE_LOCK_TIMEOUT}s for $what (CONFORMANCE_LOCK_TIMEOUT)"
            return 1
        }
    done <<<"$files"
    SCENARIO_LOCK_WAIT_MS=$((${SCENARIO_LOCK_WAIT_MS:-0} + $(epoch_ms "$EPOCHREALTIME") - $(epoch_ms "$waited_from")))
}

# epoch_ms EPOCHREALTIME: that time in whole milliseconds.
epoch_ms() {
    local whole=${1%%[.,]*} frac=${1#*[.,]}000
    echo $((10#$whole * 1000 + 10#${frac:0:3}))
}

# record_scenario_timing: one line for the report (lib/report.bash) in
# CONFORMANCE_TIMING_FILE, when set: the scenario's start, in Unix
# milliseconds, and how long it waited for the node lock.
record_scenario_timing() {
    [[ -n ${CONFORMANCE_TIMING_FILE:-} && -n ${SCENARIO_STARTED_MS:-} ]] || return 0
    printf '%s\t%s\t%s\n' "${BATS_TEST_DESCRIPTION//$'\t'/ }" "$SCENARIO_STARTED_MS" "${SCENARIO_LOCK_WAIT_MS:-0}" \
        >>"$CONFORMANCE_TIMING_FILE"
}

# take_node_lock [NODE]: the lock in the current scenario's mode, once;
# nothing outside a scenario (preflight probes).  NODE narrows a serial
# scenario's lock to that node, unless it is tagged all-nodes.
take_node_lock() {
    [[ -n ${SCENARIO_LOCK_MODE:-} && -z ${CONFORMANCE_LOCK_FDS:-} ]] || return 0
    local node=${1:-}
    if [[ $SCENARIO_LOCK_MODE != exclusive ]] || has_tag all-nodes; then node=; fi
    acquire_node_lock "$SCENARIO_LOCK_MODE" "$node"
}

release_node_lock() {
    local fd
    for fd in ${CONFORMANCE_LOCK_FDS:-}; do
        flock -u "$fd" 2>/dev/null || true
        exec {fd}>&-
    done
    unset CONFORMANCE_LOCK_FDS
}

# --- namespace -------------------------------------------------------------------

# <prefix>-<file>-<test number>-<random>, at most 63 characters.
new_namespace_name() {
    local base rand
    base=$(basename "${BATS_TEST_FILENAME:-test}" .bats)
    base=${base#[0-9][0-9]-}
    base=$(tr -c 'a-z0-9\n' '-' <<<"${base,,}")
    rand=$(LC_ALL=C tr -dc 'a-z0-9' </dev/urandom | head -c 5)
    local name="$CONFORMANCE_NAMESPACE_PREFIX-${base:0:24}-${BATS_TEST_NUMBER:-0}"
    name=${name%-}
    printf '%s-%s\n' "${name:0:56}" "$rand"
}

create_namespace() {
    create_from namespace NAME="$1" RUN_ID="${CONFORMANCE_RUN_ID:-manual}"
}

# --- deferred cleanup ---------------------------------------------------------------

# defer COMMAND ARGS...: run at teardown, last registered first, also when
# the test failed.  For state outside the namespace (device health, driver pods).
defer() {
    printf '%q ' "$@" >>"$BATS_TEST_TMPDIR/deferred"
    printf '\n' >>"$BATS_TEST_TMPDIR/deferred"
}

# A cluster-scoped object the test created (a DeviceClass): deleted at teardown.
track_cluster_object() {
    printf '%s %s\n' "$1" "$2" >>"$BATS_TEST_TMPDIR/cluster-objects"
}

run_deferred() {
    local file=$BATS_TEST_TMPDIR/deferred line rc=0
    [[ -f $file ]] || return 0
    while IFS= read -r line; do
        [[ -n $line ]] || continue
        eval "$line" || {
            printf 'cleanup step failed: %s\n' "$line"
            rc=1
        }
    done < <(tac "$file")
    rm -f "$file"
    return "$rc"
}

delete_cluster_objects() {
    local file=$BATS_TEST_TMPDIR/cluster-objects kind name
    [[ -f $file ]] || return 0
    while read -r kind name; do
        kc delete "$kind" "$name" --ignore-not-found --wait=false >/dev/null || true
    done <"$file"
    rm -f "$file"
}

# namespace_released NS: no pod and no ResourceClaim is left in NS: every
# device the test used is unprepared and deallocated.
namespace_released() {
    local pods claims left
    pods=$(kc get pods -n "$1" -o json) || return 1
    claims=$(kc get resourceclaims -n "$1" -o json) || return 1
    left=$(jq -rn --argjson p "$pods" --argjson c "$claims" \
        '[($p.items[] | "Pod/\(.metadata.name)"), ($c.items[] | "ResourceClaim/\(.metadata.name)")] | join(" ")') || return 1
    [[ -z $left ]] || {
        printf 'still in namespace %s: %s\n' "$1" "$left"
        return 1
    }
}

# release_namespace NS: deletes NS and waits until its pods and claims are
# gone.  The rest of the namespace finalizes in the background (seconds of
# the namespace controller that hold no device); teardown_suite waits for it.
release_namespace() {
    kc delete pods,resourceclaims --all -n "$1" --wait=false >/dev/null 2>&1 || true
    kc delete namespace "$1" --wait=false >/dev/null 2>&1 || true
    wait_for "the pods and claims of namespace $1 to be gone" "$CONFORMANCE_TIMEOUT" \
        namespace_released "$1" >/dev/null
}

# run_namespaces_gone: no namespace of this run (CONFORMANCE_RUN_ID) is
# still terminating (one kept by CONFORMANCE_KEEP_NAMESPACES is not).
run_namespaces_gone() {
    local json left
    json=$(kc get namespaces -l "conformance.fakehw.example.com/run=$CONFORMANCE_RUN_ID" -o json) || return 1
    left=$(jq -r '[.items[] | select(.metadata.deletionTimestamp) | .metadata.name] | join(" ")' <<<"$json") || return 1
    [[ -z $left ]] || {
        printf 'still terminating: %s\n' "$left"
        return 1
    }
}

# --- setup / teardown ----------------------------------------------------------------

# Every test file's setup() calls this: skip fake-only tests for other
# drivers, take the node lock, create the test's namespace.
scenario_setup() {
    SCENARIO_STARTED_MS=$(epoch_ms "$EPOCHREALTIME")
    SCENARIO_LOCK_WAIT_MS=0
    TEST_TAGS=$(test_tags "$BATS_TEST_FILENAME" "$BATS_TEST_DESCRIPTION") || return 1
    export TEST_TAGS
    if has_tag fake-only; then
        require_fake_driver
    fi
    SCENARIO_LOCK_MODE=$(lock_mode)
    TEST_NAMESPACE=$(new_namespace_name)
    export TEST_NAMESPACE
    create_namespace "$TEST_NAMESPACE" || return 1
}

# Every test file's teardown() calls this.  A failed test first gets the
# diagnostics; then deferred steps, the namespace and cluster objects go, and
# the namespace's pods and claims must really disappear (the claims
# deallocated and their finalizers gone), or teardown fails and says so.  The namespace goes before
# the cluster objects: deleting a DeviceTaintRule first would let the
# scheduler allocate a pod the rule kept pending, and that allocation (a
# device with binding conditions waits in the scheduler's binding cycle)
# could still hold devices when the next scenario starts.
scenario_teardown() {
    local rc=0
    if [[ -z ${BATS_TEST_COMPLETED:-} && -n ${TEST_NAMESPACE:-} ]]; then
        print_diagnostics "$TEST_NAMESPACE" || true
    fi
    run_deferred || rc=1
    if [[ -n ${TEST_NAMESPACE:-} ]]; then
        if [[ -z ${BATS_TEST_COMPLETED:-} && $CONFORMANCE_KEEP_NAMESPACES == true ]]; then
            printf 'keeping namespace %s for inspection (CONFORMANCE_KEEP_NAMESPACES=true)\n' "$TEST_NAMESPACE"
        else
            release_namespace "$TEST_NAMESPACE" || rc=1
        fi
    fi
    delete_cluster_objects
    release_node_lock
    record_scenario_timing
    return "$rc"
}

# use_test_node [FILTER]: the test node for per-node scenarios: sets
# TEST_NODE, TEST_NODE_POOL and TEST_NODE_DEVICES (the device names, sorted,
# one per line).  FILTER narrows the nodes as in node_candidates.  A
# scenario that shares the nodes gets the first candidate; a serial one the
# first candidate no other test holds, so that serial scenarios of
# different nodes run at once, else it waits for the first.
use_test_node() {
    local filter=${1:-} picked='' slices
    if [[ ${SCENARIO_LOCK_MODE:-} == exclusive && -z ${CONFORMANCE_LOCK_FDS:-} ]] && ! has_tag all-nodes; then
        # Not in $(...): the locks must stay with this shell.
        lock_free_candidate "$filter" || return 1
        [[ -n $PICKED ]] || lock_first_candidate "$filter" || return 1
        picked=$PICKED
    else
        take_node_lock || return 1
        picked=$(pick_node "$filter") || return 1
    fi
    TEST_NODE=${picked%%$'\t'*}
    slices=$(driver_slices) || return 1
    # shellcheck disable=SC2034 # for the tests
    TEST_NODE_POOL=$(node_pool "$TEST_NODE" <<<"$slices") || return 1
    TEST_NODE_DEVICES=$(node_devices "$TEST_NODE" <<<"$slices") || return 1
    [[ -n $TEST_NODE_DEVICES ]] || {
        fail "node $TEST_NODE has no devices of $CONFORMANCE_DRIVER"
        return 1
    }
}

# lock_free_candidate FILTER: locks the first candidate node no other test
# holds and sets PICKED to its line; to nothing, holding nothing, when
# every candidate is held.  Under the lock the node must still be a candidate (a
# flip of another scenario may have changed it meanwhile).
lock_free_candidate() {
    local candidates node line
    PICKED=
    candidates=$(node_candidates "$1") || return 1
    while IFS= read -r line; do
        [[ -n $line ]] || continue
        node=${line%%$'\t'*}
        acquire_node_lock exclusive "$node" try || continue
        if node_candidates "$1" | grep -q "^$node"$'\t'; then
            PICKED=$line
            return 0
        fi
        release_node_lock
    done <<<"$candidates"
}

# lock_first_candidate FILTER: waits for the first candidate's lock, then
# picks again under it; no stable choice in three tries: every node's lock.
# Sets PICKED to the chosen node's line.
lock_first_candidate() {
    local picked again=''
    for _ in 1 2 3; do
        picked=$(pick_node "$1") || return 1
        take_node_lock "${picked%%$'\t'*}" || return 1
        again=$(pick_node "$1") || return 1
        [[ ${again%%$'\t'*} == "${picked%%$'\t'*}" ]] && break
        release_node_lock
        again=
    done
    if [[ -z $again ]]; then
        take_node_lock || return 1
        again=$(pick_node "$1") || return 1
    fi
    PICKED=$again
}

# The AFFINITY placeholder value that pins a pod to node $1.  Node affinity on
# the metadata.name field, not the hostname label, which may differ from the
# node name.
pin_to() {
    jq -cn --arg n "$1" '{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution:
        {nodeSelectorTerms: [{matchFields: [{key: "metadata.name", operator: "In", values: [$n]}]}]}}}'
}
