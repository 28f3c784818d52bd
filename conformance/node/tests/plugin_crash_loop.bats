#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Crash loop: the plugin is killed with SIGKILL at random points while one
# kubelet-like client prepares and unprepares claims back to back, then
# started again.  After every restart, every claim whose last answer was
# "prepared" must still be prepared with the same CDI ids, and nothing may be
# orphaned: no CDI spec, metadata directory or checkpoint entry without a
# prepared claim.  A claim whose call was cut by the kill is retried first,
# as the kubelet does (or unprepared: its pod went away).
#
# CRASH_CYCLES (default 15) sets the number of kills; `make soak` runs this
# with SOAK_CYCLES (default 300) and writes the figures to CRASH_REPORT.
# shellcheck disable=SC2016,SC2154 # jq filters; $output, $status come from run

load ../lib/node_suite

setup() {
    node_setup
    JOURNAL=$PLUGIN_DIR/checkpoint.journal
}

CLAIMS=(c1 c2 c3 c4 c5 c6)

# checkpoint_uids: the uids the checkpoint holds (snapshot + journal).
checkpoint_uids() {
    {
        jq -c .claims "$CHECKPOINT"
        [[ ! -s $JOURNAL ]] || cut -d' ' -f2- "$JOURNAL"
    } | jq -rs 'reduce .[1:][] as $c (.[0];
        if $c.op == "prepared" then .[$c.uid] = $c.record else del(.[$c.uid]) end) | keys[]'
}

# call OP NAME: one kubelet call for claim NAME; updates STATE and IDS.
# Returns 3 when the plugin did not answer (killed mid-call).
call() {
    local op=$1 name=$2 out rc=0
    out=$(ks "$op" --timeout 10 --endpoint "$DRA_SOCK" "$(ref "$name")" 2>&1) || rc=$?
    if ((rc == 0)); then
        if [[ $op == prepare ]]; then
            STATE[$name]=prepared
            IDS[$name]=$(sort <<<"$out")
        else
            STATE[$name]=unprepared
            IDS[$name]=''
        fi
        return 0
    fi
    # No answer, or a claim error: the kubelet would call again.
    STATE[$name]=unknown-$op
    return "$rc"
}

# work_until_killed: prepare/unprepare random claims until a call gets no
# answer; a background killer sends SIGKILL after a random delay.
work_until_killed() {
    local delay name rc=0
    delay=$(awk -v r="$RANDOM" 'BEGIN { printf "%.3f", 0.05 + (r % 600) / 1000 }')
    (
        sleep "$delay"
        kill -KILL "$PLUGIN_PID" 2>/dev/null
    ) 3>&- &
    local killer=$!
    while _ne_alive "$PLUGIN_PID"; do
        name=${CLAIMS[RANDOM % ${#CLAIMS[@]}]}
        if [[ ${STATE[$name]} == prepared ]]; then
            call unprepare "$name" || rc=$?
        else
            call prepare "$name" || rc=$?
        fi
        ((rc != 3)) || break
        rc=0
    done
    wait "$killer" || true
    plugin_stop KILL 5 || true
    KILLS=$((KILLS + 1))
}

# settle: after a restart, finishes the calls the kill cut (until answered).
# A prepare cut short is retried, or given up with an unprepare half the
# time (the pod went away meanwhile), as the kubelet does.
settle() {
    local name op
    for name in "${CLAIMS[@]}"; do
        [[ ${STATE[$name]} == unknown-* ]] || continue
        op=${STATE[$name]#unknown-}
        ((RANDOM % 2)) || op=unprepare
        for _ in 1 2 3 4 5; do
            call "$op" "$name" && break
            sleep 0.2
        done
        [[ ${STATE[$name]} != unknown-* ]] || fail "claim $name: $op still fails after a restart"
    done
}

# unwanted_leftovers: does a CDI spec, metadata directory or checkpoint
# entry of a claim the model has unprepared remain?
unwanted_leftovers() {
    local name f wanted_dirs=" " want=() got
    for name in "${CLAIMS[@]}"; do
        [[ ${STATE[$name]} == prepared ]] || continue
        wanted_dirs+="${NODE_NS}_$name "
        want+=("${CLAIM_UIDS[$name]}")
    done
    local wanted=" ${want[*]} "
    for f in "$CDI_ROOT"/*.json; do
        [[ -e $f && $f =~ ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}) ]] || continue
        [[ $wanted == *" ${BASH_REMATCH[1]} "* ]] || return 0
    done
    for f in "$PLUGIN_DIR"/dra-device-metadata/*; do
        [[ ! -e $f || $wanted_dirs == *" ${f##*/} "* ]] || return 0
    done
    got=$(checkpoint_uids | sort | paste -sd' ')
    [[ $got != "$(printf '%s\n' "${want[@]}" | sed '/^$/d' | sort | paste -sd' ')" ]]
}

# check_cycle: the model against the plugin's answers and files.
check_cycle() {
    local name uid out want_uids=() f problems=0
    # An unprepare's metadata specs and directory and its journal line
    # follow its answer (by 50 and 20 ms): they get a few seconds to go.
    local until=$((SECONDS + 3))
    while unwanted_leftovers && ((SECONDS < until)); do sleep 0.05; done
    for name in "${CLAIMS[@]}"; do
        uid=${CLAIM_UIDS[$name]}
        if [[ ${STATE[$name]} == prepared ]]; then
            want_uids+=("$uid")
            # Files first: a call to prepare would write them again.
            [[ -s $CDI_ROOT/k8s.$DRIVER-gpu_$uid.json ]] || {
                echo "cycle $CYCLE: claim $name: its CDI spec is missing" >&2
                LOST=$((LOST + 1)) problems=1
            }
        fi
    done
    local wanted=" ${want_uids[*]} "
    for f in "$CDI_ROOT"/*.json; do
        [[ -e $f ]] || continue
        [[ $f =~ ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}) ]] || continue
        [[ $wanted == *" ${BASH_REMATCH[1]} "* ]] || {
            echo "cycle $CYCLE: orphan CDI spec $f" >&2
            ORPHANS=$((ORPHANS + 1)) problems=1
        }
    done
    local wanted_dirs=" "
    for name in "${CLAIMS[@]}"; do
        [[ ${STATE[$name]} != prepared ]] || wanted_dirs+="${NODE_NS}_$name "
    done
    for f in "$PLUGIN_DIR"/dra-device-metadata/*; do
        [[ -e $f ]] || continue
        [[ $wanted_dirs == *" ${f##*/} "* ]] || {
            echo "cycle $CYCLE: orphan metadata directory $f" >&2
            ORPHANS=$((ORPHANS + 1)) problems=1
        }
    done
    local got want
    got=$(checkpoint_uids | sort | paste -sd' ')
    # Then the kubelet's view: the same answer as when it was prepared.
    for name in "${CLAIMS[@]}"; do
        [[ ${STATE[$name]} == prepared ]] || continue
        out=$(ks prepare --timeout 10 --endpoint "$DRA_SOCK" "$(ref "$name")" 2>&1 | sort) || true
        if [[ $out != "${IDS[$name]}" ]]; then
            echo "cycle $CYCLE: claim $name lost: prepared as '${IDS[$name]}', now '$out'" >&2
            LOST=$((LOST + 1)) problems=1
        fi
    done
    want=$(printf '%s\n' "${want_uids[@]}" | sed '/^$/d' | sort | paste -sd' ')
    if [[ $got != "$want" ]]; then
        echo "cycle $CYCLE: checkpoint holds [$got], want [$want]" >&2
        ORPHANS=$((ORPHANS + 1)) problems=1
    fi
    return "$problems"
}

@test "crash loop: SIGKILL at random points of prepare/unprepare; prepared claims survive, nothing is orphaned [fake-driver]" {
    local cycles=${CRASH_CYCLES:-15} name start
    node_up 4
    local devs
    mapfile -t devs < <(pool_devices 4)
    local i=0
    for name in "${CLAIMS[@]}"; do
        claim_new "$name" "${devs[i % 4]}"
        i=$((i + 1))
    done
    declare -gA STATE=() IDS=()
    for name in "${CLAIMS[@]}"; do STATE[$name]=unprepared; done
    KILLS=0 LOST=0 ORPHANS=0 CYCLE=0
    start=$(date +%s)
    for ((CYCLE = 1; CYCLE <= cycles; CYCLE++)); do
        work_until_killed
        plugin_start
        kubelet_register
        wait_pool_published 4 20
        settle
        check_cycle || true
    done
    local took=$(($(date +%s) - start)) prepared=0
    for name in "${CLAIMS[@]}"; do [[ ${STATE[$name]} != prepared ]] || prepared=$((prepared + 1)); done
    local report="cycles=$cycles kills=$KILLS lost_claims=$LOST orphans=$ORPHANS prepared_at_end=$prepared wall_seconds=$took"
    echo "# $report" >&3
    [[ -z ${CRASH_REPORT-} ]] || echo "$report" >"$CRASH_REPORT"
    assert_equal "$LOST" 0
    assert_equal "$ORPHANS" 0
    assert_equal "$KILLS" "$cycles"
}
