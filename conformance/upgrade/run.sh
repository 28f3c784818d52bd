#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The cluster-side half of an upgrade test, for any cluster and any driver:
# place workloads that hold claims before the upgrade, check after each step
# that nothing they hold was disturbed, and log, while the upgrade runs,
# whether they had their devices.  How the cluster is upgraded is the
# caller's business (scripts/upgrade-test.sh does it for kind).
#
#   run.sh create           place the hold workloads (hold.bash), write
#                           $UPGRADE_STATE_DIR/plan.tsv and hold.json
#   run.sh check STEP       the checks (checks.bats) against hold.json:
#                           TAP and JUnit as $UPGRADE_REPORT_DIR/upgrade-STEP.*
#   run.sh watch            one availability sample every
#                           UPGRADE_WATCH_INTERVAL seconds (default 2) into
#                           $UPGRADE_STATE_DIR/availability.log, until killed
#   run.sh gaps             that log summed up as JSON: seconds without
#                           devices (gaps), seconds the API did not answer
#   run.sh release          delete the hold workloads; wait until their pods
#                           and claims are gone
#
#   UPGRADE_STATE_DIR   default conformance/reports/upgrade/state
#   UPGRADE_REPORT_DIR  default conformance/reports/upgrade
# The cluster suite's CONFORMANCE_* parameters apply (docs/conformance.md).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
: "${UPGRADE_REPORT_DIR:=$repo/conformance/reports/upgrade}"
: "${UPGRADE_STATE_DIR:=$UPGRADE_REPORT_DIR/state}"
: "${UPGRADE_WATCH_INTERVAL:=2}"
export UPGRADE_STATE_DIR UPGRADE_REPORT_DIR

die() {
    printf 'upgrade: %s\n' "$*" >&2
    exit 2
}

# shellcheck source=SCRIPTDIR/hold.bash
source "$here/hold.bash"

preflight() {
    suite_preflight >/dev/null || die "the cluster suite's preflight failed (above)"
}

case ${1:-} in
create)
    preflight
    hold_create "$UPGRADE_STATE_DIR" || die "placing the hold workloads failed (above)"
    jq -r '"held: \(.pods | length) pods, \(.claims | length) claims on \(.nodes | length) nodes"' "$UPGRADE_STATE_DIR/hold.json"
    grep '^skip' "$UPGRADE_STATE_DIR/plan.tsv" | cut -f2- | sed 's/\t/: /; s/^/not held: /' || true
    ;;
check)
    step=${2:?usage: run.sh check STEP}
    [[ $step =~ ^[a-z0-9][-a-z0-9.]*$ ]] || die "STEP \"$step\": use lower-case letters, digits, '.' and '-'"
    [[ -f $UPGRADE_STATE_DIR/hold.json ]] || die "no $UPGRADE_STATE_DIR/hold.json: run.sh create first"
    mkdir -p "$UPGRADE_REPORT_DIR"
    # shellcheck source=SCRIPTDIR/../cluster/lib/junit.bash
    source "$here/../cluster/lib/junit.bash"
    tap=$UPGRADE_REPORT_DIR/upgrade-$step.tap
    rc=0
    bats --formatter tap --timing "$here" | tee "$tap" || rc=$?
    tap_to_junit "upgrade-$step" <"$tap" >"$UPGRADE_REPORT_DIR/upgrade-$step-junit.xml" || true
    exit "$rc"
    ;;
watch)
    [[ -f $UPGRADE_STATE_DIR/hold.json ]] || die "no $UPGRADE_STATE_DIR/hold.json: run.sh create first"
    [[ $UPGRADE_WATCH_INTERVAL =~ ^[1-9][0-9]*$ ]] || die "UPGRADE_WATCH_INTERVAL=$UPGRADE_WATCH_INTERVAL is not a whole number of seconds"
    params_resolve_fake ""
    baseline=$(<"$UPGRADE_STATE_DIR/hold.json")
    while :; do
        printf '%s %s\n' "$(date +%s)" "$(hold_sample "$baseline")" >>"$UPGRADE_STATE_DIR/availability.log"
        sleep "$UPGRADE_WATCH_INTERVAL"
    done
    ;;
gaps)
    log=$UPGRADE_STATE_DIR/availability.log
    [[ -f $log ]] || die "no $log: run.sh watch during the upgrade"
    availability_summary <"$log"
    ;;
release)
    preflight
    hold_release || die "releasing the hold workloads failed (above)"
    ;;
*)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
