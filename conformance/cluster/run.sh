#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the cluster conformance suite against the cluster of the current
# kubeconfig: TAP on stdout as the tests go, the same TAP and a JUnit report
# in the report directory.  `make conformance` calls this; it works on its own
# too.  Parameters are environment variables (docs/conformance.md):
#
#   CONFORMANCE_FILTER      which tests: a regular expression on test names, or
#                           tags:EXPR[;EXPR...] with bats tag expressions
#                           (EXPR = tag[,tag...], "!" negates, "," is AND,
#                           ";" is OR), e.g. tags:fake-only  tags:generic,!serial
#   CONFORMANCE_JOBS        parallel tests (bats --jobs, needs GNU parallel); default 1
#   CONFORMANCE_REPORT_DIR  where cluster.tap, cluster-junit.xml, cluster-report.json
#                           and summary.md go; default conformance/reports of this repository
#   CONFORMANCE_JUNIT       the JUnit file; default $CONFORMANCE_REPORT_DIR/cluster-junit.xml
#   CONFORMANCE_DRIVER_VERSION  the tested driver's version, for the report (optional)
#   CONFORMANCE_BATS_ARGS   more bats options, split on spaces (e.g. --trace)
#   CONFORMANCE_DRY_RUN     1: print the bats command line and exit
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=SCRIPTDIR/lib/junit.bash
source "$here/lib/junit.bash"
# shellcheck source=SCRIPTDIR/lib/report.bash
source "$here/lib/report.bash"

die() {
    printf 'conformance: %s\n' "$*" >&2
    exit 2
}

filter=${CONFORMANCE_FILTER:-}
jobs=${CONFORMANCE_JOBS:-1}
report_dir=${CONFORMANCE_REPORT_DIR:-$repo/conformance/reports}
junit=${CONFORMANCE_JUNIT:-$report_dir/cluster-junit.xml}

[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "CONFORMANCE_JOBS=$jobs is not a positive whole number"

args=(--formatter tap --timing)
if ((jobs > 1)); then
    args+=(--jobs "$jobs")
fi

# FILTER: "tags:" (or "tag:") selects by tags, anything else is a name regex.
case $filter in
"") ;;
tags:* | tag:*)
    expressions=${filter#*:}
    [[ -n $expressions ]] || die "CONFORMANCE_FILTER=$filter names no tags"
    IFS=';' read -ra exprs <<<"$expressions"
    for expr in "${exprs[@]}"; do
        expr=${expr// /}
        [[ $expr =~ ^!?[-_:[:alnum:]]+(,!?[-_:[:alnum:]]+)*$ ]] ||
            die "CONFORMANCE_FILTER: \"$expr\" is not a tag expression (tag[,tag...], ! to negate)"
        args+=(--filter-tags "$expr")
    done
    ;;
*)
    # bash's own regex engine is what bats matches names with.
    re_rc=0
    [[ "" =~ $filter ]] || re_rc=$?
    ((re_rc != 2)) || die "CONFORMANCE_FILTER: \"$filter\" is not a valid regular expression"
    args+=(--filter "$filter")
    ;;
esac

if [[ -n ${CONFORMANCE_BATS_ARGS:-} ]]; then
    read -ra extra <<<"$CONFORMANCE_BATS_ARGS"
    args+=("${extra[@]}")
fi
# suite_files: the scenario files in the order bats should start them.  With
# JOBS > 1 bats runs JOBS files at a time, in the order given: the files
# with no serial scenario first, then those with one, those that change
# every node (all-nodes) last.  So shared scenarios run beside shared ones
# and serial ones beside serial ones of other nodes, instead of each
# waiting for the other's node locks (lib/scenario.bash).
suite_files() {
    local f rank
    for f in "$here"/*.bats; do
        rank=0
        if grep -Eq '^# bats test_tags=.*\ball-nodes\b' "$f"; then
            rank=2
        elif grep -Eq '^# bats test_tags=.*\bserial\b' "$f"; then
            rank=1
        fi
        printf '%s\t%s\n' "$rank" "$f"
    done | LC_ALL=C sort -k1,1n -k2,2 | cut -f2-
}

if ((jobs > 1)); then
    mapfile -t files < <(suite_files)
    args+=("${files[@]}")
else
    args+=("$here")
fi

if [[ ${CONFORMANCE_DRY_RUN:-} == 1 ]]; then
    printf '%q ' bats "${args[@]}"
    printf '\n'
    printf 'tap: %s\njunit: %s\n' "$report_dir/cluster.tap" "$junit"
    printf 'report: %s\nsummary: %s\n' "$report_dir/cluster-report.json" "$report_dir/summary.md"
    exit 0
fi

command -v bats >/dev/null || die "bats is not installed (Debian: apt-get install bats)"
# --filter-tags and the tag comments need bats 1.8.
bats_version=$(bats --version | awk '{print $2}')
IFS=. read -r bats_major bats_minor _ <<<"$bats_version"
if ! [[ $bats_major =~ ^[0-9]+$ && $bats_minor =~ ^[0-9]+$ ]] || ((bats_major == 1 && bats_minor < 8 || bats_major < 1)); then
    die "bats 1.8 or newer is needed (found ${bats_version:-unknown})"
fi
if ((jobs > 1)); then
    command -v parallel >/dev/null || die "CONFORMANCE_JOBS=$jobs needs GNU parallel (Debian: apt-get install parallel)"
fi
mkdir -p "$report_dir" "$(dirname "$junit")" || die "cannot create $report_dir"

# drop_setup_warning: TAP from stdin to stdout, line by line, without the
# warning bats adds when setup_suite failed ("Executed 1 instead of expected N
# tests"): the preflight's own message already says why nothing ran.
drop_setup_warning() {
    local line setup_failed=0
    while IFS= read -r line || [[ -n $line ]]; do
        [[ $line != "not ok 1 setup_suite" ]] || setup_failed=1
        if ((setup_failed)) && [[ $line =~ ^#\ bats\ warning:\ Executed\ [0-9]+\ instead\ of\ expected\ [0-9]+\ tests$ ]]; then
            continue
        fi
        printf '%s\n' "$line"
    done
}

tap=$report_dir/cluster.tap
report=$report_dir/cluster-report.json
summary=$report_dir/summary.md
kit_version=${CONFORMANCE_KIT_VERSION:-$(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)}
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
started_ms=$(($(date +%s%N) / 1000000))
# Each scenario's start and node-lock wait, for the report.
export CONFORMANCE_TIMING_FILE=$report_dir/timing.tsv
: >"$CONFORMANCE_TIMING_FILE"
set +e
bats "${args[@]}" | drop_setup_warning | tee "$tap"
rc=${PIPESTATUS[0]}
set -e
tap_to_junit "fakehw-dra cluster conformance" <"$tap" >"$junit.tmp" && mv "$junit.tmp" "$junit"
printf '# TAP: %s\n# JUnit: %s\n' "$tap" "$junit"
if command -v jq >/dev/null; then
    tap_to_report "$here/profiles.tsv" "$kit_version" "${CONFORMANCE_DRIVER_VERSION:-}" "$started" \
        "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$CONFORMANCE_TIMING_FILE" "$started_ms" <"$tap" >"$report.tmp" &&
        mv "$report.tmp" "$report"
    report_summary <"$report" >"$summary.tmp" && mv "$summary.tmp" "$summary"
    printf '# report: %s\n# summary: %s\n' "$report" "$summary"
    sed 's/^/# /' "$summary"
else
    printf '# no report: jq is not installed\n'
fi
exit "$rc"
