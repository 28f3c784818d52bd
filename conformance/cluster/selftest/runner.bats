#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# run.sh (what `make conformance` runs): FILTER syntax, options and the JUnit
# report, and two complete runs of the real suite against the fake cluster
# where every selected scenario is skipped for a reason the fake cluster gives.

# Tests set suite parameters as globals that the sourced helpers read.
# shellcheck disable=SC2016,SC2030,SC2031,SC2034,SC2154
load selftest

setup() {
    selftest_setup
    # shellcheck source=SCRIPTDIR/../lib/junit.bash
    source "$SUITE_DIR/lib/junit.bash"
}

dry_run() {
    CONFORMANCE_DRY_RUN=1 "$SUITE_DIR/run.sh"
}

@test "run.sh: no filter runs everything, with TAP and timing" {
    run dry_run
    assert_success
    assert_line --index 0 "bats --formatter tap --timing $SUITE_DIR "
    assert_line "junit: $(cd "$SUITE_DIR/../.." && pwd)/conformance/reports/cluster-junit.xml"
}

@test "run.sh: FILTER is a name regex, or tags: with bats tag expressions" {
    CONFORMANCE_FILTER='shared claims|templates' run dry_run
    assert_line --index 0 "bats --formatter tap --timing --filter shared\\ claims\\|templates $SUITE_DIR "
    CONFORMANCE_FILTER='tags:fake-only' run dry_run
    assert_line --index 0 "bats --formatter tap --timing --filter-tags fake-only $SUITE_DIR "
    CONFORMANCE_FILTER='tag:generic,!serial;health' run dry_run
    assert_line --index 0 "bats --formatter tap --timing --filter-tags generic\\,\\!serial --filter-tags health $SUITE_DIR "
}

@test "run.sh: bad FILTER, JOBS and the report paths" {
    CONFORMANCE_FILTER='tags:' run dry_run
    assert_failure
    assert_output --partial "names no tags"
    CONFORMANCE_FILTER='tags:health;bad tag?' run dry_run
    assert_failure
    assert_output --partial '"badtag?" is not a tag expression'
    CONFORMANCE_FILTER='shared(' run dry_run
    assert_failure
    assert_output --partial "is not a valid regular expression"
    CONFORMANCE_JOBS=0 run dry_run
    assert_failure
    assert_output --partial "CONFORMANCE_JOBS=0 is not a positive whole number"
    CONFORMANCE_JOBS=4 CONFORMANCE_REPORT_DIR=/tmp/out CONFORMANCE_BATS_ARGS='--trace --no-tempdir-cleanup' run dry_run
    assert_line --index 0 --regexp "^bats --formatter tap --timing --jobs 4 --trace --no-tempdir-cleanup $SUITE_DIR/[0-9]"
    assert_line "tap: /tmp/out/cluster.tap"
    assert_line "junit: /tmp/out/cluster-junit.xml"
    assert_line "report: /tmp/out/cluster-report.json"
    assert_line "summary: /tmp/out/summary.md"
}

@test "run.sh: with JOBS > 1 the files without serial scenarios come first, all-nodes ones last" {
    CONFORMANCE_JOBS=2 run dry_run
    assert_success
    local -a order
    read -ra order <<<"${lines[0]}"
    local f rank last=0 n=0
    for f in "${order[@]}"; do
        [[ $f == *.bats ]] || continue
        n=$((n + 1))
        rank=0
        if grep -Eq '^# bats test_tags=.*\ball-nodes\b' "$f"; then
            rank=2
        elif grep -Eq '^# bats test_tags=.*\bserial\b' "$f"; then
            rank=1
        fi
        ((rank >= last)) || fail "$(basename "$f") (rank $rank) comes after a file of rank $last: ${lines[0]}"
        last=$rank
    done
    assert_equal "$n" "$(find "$SUITE_DIR" -maxdepth 1 -name '*.bats' | wc -l)"
    assert_equal "$last" 2
    [[ ${lines[0]} == *" $SUITE_DIR/10-templates.bats "* ]] || fail "10-templates.bats is not passed: ${lines[0]}"
    [[ ${lines[0]} == *" $SUITE_DIR/91-driver-rolling-update.bats " ]] || fail "the all-nodes file is not last: ${lines[0]}"
}

# Checks that the file is well-formed XML and prints testcase results.
junit_summary() {
    python3 - "$1" <<'PY'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
print("suites", root.get("tests"), root.get("failures"), root.get("skipped"))
for tc in root.iter("testcase"):
    state = "passed"
    if tc.find("failure") is not None:
        state = "failed: " + tc.find("failure").get("message")
    elif tc.find("skipped") is not None:
        state = "skipped: " + tc.find("skipped").get("message")
    print(f'{tc.get("classname")} | {tc.get("name")} | {tc.get("time")} | {state}')
PY
}

@test "junit: passes, failures with their details, skips with reasons, odd characters" {
    cat >"$BATS_TEST_TMPDIR/run.tap" <<'TAP'
1..4
# server v1.35.6; resource.k8s.io/v1 served
ok 1 templates: each pod gets its own device in 2345ms
not ok 2 shared claims: <two> & "containers" in 61000ms
# (in test file conformance/cluster/20-shared-claims.bats, line 20)
#   `wait_pod_ready "$ns" pod-a' failed
# timed out after 120s waiting for: pod x/pod-a to become Ready
# ==== diagnostics
ok 3 health: taint in 5ms # skip needs feature gate DRADeviceTaints, which is off here (off by default)
ok 4 selectors: by attribute # skip
TAP
    tap_to_junit "fakehw-dra cluster conformance" <"$BATS_TEST_TMPDIR/run.tap" >"$BATS_TEST_TMPDIR/junit.xml"
    run junit_summary "$BATS_TEST_TMPDIR/junit.xml"
    assert_success
    assert_line "suites 4 1 2"
    assert_line "fakehw-dra cluster conformance.templates | templates: each pod gets its own device | 2.345 | passed"
    assert_line 'fakehw-dra cluster conformance.shared claims | shared claims: <two> & "containers" | 61.000 | failed: timed out after 120s waiting for: pod x/pod-a to become Ready'
    assert_line "fakehw-dra cluster conformance.health | health: taint | 0.005 | skipped: needs feature gate DRADeviceTaints, which is off here (off by default)"
    assert_line "fakehw-dra cluster conformance.selectors | selectors: by attribute | 0.000 | skipped: skipped"
    run grep -c "==== diagnostics" "$BATS_TEST_TMPDIR/junit.xml"
    assert_output 1
    run grep -c "<system-out>server v1.35.6" "$BATS_TEST_TMPDIR/junit.xml"
    assert_output 1
}

@test "junit: a failed setup_suite is a failed test case with the reason" {
    printf '%s\n' "1..24" "# setup: DeviceClass gpu.example.com not found" "not ok 1 setup_suite" \
        "# (from function \`setup_suite' in test file setup_suite.bash, line 18)" "#   \`return 1' failed" \
        "# DeviceClass gpu.example.com not found" >"$BATS_TEST_TMPDIR/run.tap"
    tap_to_junit suite <"$BATS_TEST_TMPDIR/run.tap" >"$BATS_TEST_TMPDIR/junit.xml"
    run junit_summary "$BATS_TEST_TMPDIR/junit.xml"
    assert_line "suites 1 1 0"
    assert_line "suite | setup_suite | 0.000 | failed: DeviceClass gpu.example.com not found"
}

# Runs the real suite through run.sh against the fake cluster.
run_suite() {
    CONFORMANCE_REPORT_DIR=$BATS_TEST_TMPDIR/reports "$SUITE_DIR/run.sh"
}

# run_all_skipped FILTER N REASON M: run.sh with CONFORMANCE_FILTER=FILTER
# passes with N scenarios, M of them skipped for REASON (a grep pattern).
run_all_skipped() {
    CONFORMANCE_FILTER=$1 run run_suite
    assert_success
    assert_line "1..$2"
    assert_equal "$(grep -c "# skip $3" "$BATS_TEST_TMPDIR/reports/cluster.tap")" "$4"
}

# The JUnit report of the last run_suite counts "TESTS FAILURES SKIPPED".
assert_report_suites() {
    run junit_summary "$BATS_TEST_TMPDIR/reports/cluster-junit.xml"
    assert_line "suites $1"
}

@test "run.sh: a whole run against the fake cluster skips what the cluster lacks (Kubernetes 1.35)" {
    CONFORMANCE_FILTER='device metadata' run run_suite
    assert_success
    assert_line --partial "# param CONFORMANCE_DRIVER=gpu.fakehw.example.com"
    assert_line --regexp '^ok 1 device metadata: .* # skip needs Kubernetes 1.36 or newer; the server is v1.35.6$'
    assert_line --regexp '^ok 2 device metadata: .* # skip needs Kubernetes 1.36 or newer; the server is v1.35.6$'
    assert_report_suites "2 0 2"
    run grep -c '^ok ' "$BATS_TEST_TMPDIR/reports/cluster.tap"
    assert_output 2
    # The report: the server and driver of the preflight, a verdict per profile.
    run jq -r '.cluster.version, .driver.name, .verdict,
        (.profiles[] | select(.name == "device-metadata") | "\(.verdict) \(.skipped)")' \
        "$BATS_TEST_TMPDIR/reports/cluster-report.json"
    assert_output "$(printf '%s\n' v1.35.6 gpu.fakehw.example.com incomplete 'not-applicable 2')"
    run cat "$BATS_TEST_TMPDIR/reports/summary.md"
    assert_line "| device-metadata | not-applicable | 0 | 2 | 0 |"
    # Each test made its own namespace and removed it.
    run grep -c '^delete namespace dra-conf-device-metadata-' "$FAKE_CLUSTER/calls.log"
    assert_output 2
}

@test "run.sh: fake-only scenarios are skipped for another driver" {
    rm "$FAKE_CLUSTER/driver-pods.json"
    jq '.items[].spec.driver |= (if . == "gpu.fakehw.example.com" then "gpu.example.com" else . end)' \
        "$FAKE_CLUSTER/slices.json" >"$FAKE_CLUSTER/s" && mv "$FAKE_CLUSTER/s" "$FAKE_CLUSTER/slices.json"
    echo gpu.example.com >>"$FAKE_CLUSTER/deviceclasses.txt"
    # Every scenario tagged fake-only runs, and every one skips.
    local tagged
    tagged=$(cat "$SUITE_DIR"/*.bats | grep -c '^# bats test_tags=.*fake-only')
    ((tagged >= 14)) || fail "only $tagged fake-only scenarios tagged"
    CONFORMANCE_DRIVER=gpu.example.com CONFORMANCE_FILTER='tags:fake-only' run run_suite
    assert_success
    assert_line "1..$tagged"
    assert_equal "$(grep -c '# skip fake-driver check; the driver under test (gpu.example.com) is not the fake driver' \
        "$BATS_TEST_TMPDIR/reports/cluster.tap")" "$tagged"
    # Skipped before any namespace was made: the two creations are the
    # preflight's probe namespace and its test-image pods, one per node with
    # devices.
    run grep -c '^create -f -$' "$FAKE_CLUSTER/calls.log"
    assert_output 2
    run grep -c 'conformance.fakehw.example.com/image-check: "true"' "$FAKE_CLUSTER/created-1.yaml"
    assert_output 3
}

@test "run.sh: on a 1.35 cluster without the gates, the 1.37 scenarios skip with the reason, in the JUnit report" {
    run_all_skipped tags:extended-resources 5 \
        'needs feature gate DRAExtendedResource, which is off here (dry-run probe: DeviceClass extendedResourceName dropped)$' 4
    # The seed scenario needs the nvidia-compat overlay first.
    assert_line --regexp "^ok [0-9]+ extended resources: the seed's .* # skip needs the nvidia-compat overlay \(driver gpu.nvidia.com\)"
    assert_report_suites "5 0 5"

    run_all_skipped tags:device-taint-rules 6 \
        'needs the DeviceTaintRule API .*: no resource.k8s.io version serves devicetaintrules' 5
    assert_line --regexp '^ok [0-9]+ taint rules: the driver.s own health taint .* # skip the driver taints unhealthy devices NoSchedule'
    assert_report_suites "6 0 6"
}

@test "run.sh: a failing precondition fails the run and the report says why" {
    CONFORMANCE_DEVICE_CLASS=gpu.example.com run run_suite
    assert_failure
    assert_line --partial "# setup: DeviceClass gpu.example.com not found"
    assert_line "not ok 1 setup_suite"
    refute_output --partial "bats warning"
    run junit_summary "$BATS_TEST_TMPDIR/reports/cluster-junit.xml"
    assert_line --partial "setup_suite | 0.000 | failed: DeviceClass gpu.example.com not found"
}

@test "run.sh: no kubeconfig is named, with make kind-up, and no bats warning" {
    unset KUBECONFIG
    HOME=$BATS_TEST_TMPDIR/home run run_suite
    assert_failure
    assert_line --partial "# setup: no kubeconfig: $BATS_TEST_TMPDIR/home/.kube/config does not exist"
    assert_output --partial "make kind-up creates a kind cluster"
    assert_line "not ok 1 setup_suite"
    refute_output --partial "bats warning"
}
