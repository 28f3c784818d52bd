#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The run's report (lib/report.bash): scenarios, verdicts per profile and for
# the run, the summary, and profiles.tsv covering every scenario area.

# shellcheck disable=SC2034
load selftest

setup() {
    selftest_setup
    # shellcheck source=SCRIPTDIR/../lib/report.bash
    source "$SUITE_DIR/lib/report.bash"
}

report() {
    tap_to_report "$SUITE_DIR/profiles.tsv" v0-test 1.2.3 2026-01-01T00:00:00Z 2026-01-01T00:10:00Z
}

@test "report: scenarios, times, skip reasons, and a verdict per profile" {
    cat >"$BATS_TEST_TMPDIR/run.tap" <<'TAP'
1..6
# server v1.37.2; resource.k8s.io/v1 served
# driver gpu.example.com, class gpu.example.com, fake driver: false
ok 1 templates: each pod gets its own device in 2345ms
ok 2 shared claims: two pods share in 1000ms
not ok 3 shared claims: the claim outlives its pods in 61000ms
# (in test file conformance/cluster/20-shared-claims.bats, line 20)
ok 4 all mode: every device in 5ms # skip needs feature gate X, which is off here
ok 5 health: a flip in 7ms # skip fake-driver check; the driver under test is not the fake driver
ok 6 health: another in 3ms # skip fake-driver check; the driver under test is not the fake driver
TAP
    report <"$BATS_TEST_TMPDIR/run.tap" >"$BATS_TEST_TMPDIR/r.json"
    run jq -r '.kind, .cluster.version, .driver.name, .driver.version, .driver.fakeDriver, .verdict,
        (.totals | "\(.scenarios) \(.ok) \(.skipped) \(.failed) \(.seconds)")' "$BATS_TEST_TMPDIR/r.json"
    assert_output "$(printf '%s\n' DRAConformanceReport v1.37.2 gpu.example.com 1.2.3 false failed '6 2 3 1 64.36')"
    run jq -r '.profiles[] | "\(.name) \(.verdict) \(.ok) \(.skipped) \(.failed)"' "$BATS_TEST_TMPDIR/r.json"
    assert_line "core passed 1 0 0"
    assert_line "sharing failed 1 0 1"
    assert_line "all-mode not-applicable 0 1 0"
    assert_line "health not-applicable 0 2 0"
    assert_line "device-taints not-run 0 0 0"
    refute_line --partial "other"
    run jq -c '.profiles[] | select(.name == "health") | .notApplicableBecause' "$BATS_TEST_TMPDIR/r.json"
    assert_output '["fake-driver check; the driver under test is not the fake driver"]'
    run jq -c '.scenarios[2]' "$BATS_TEST_TMPDIR/r.json"
    assert_output '{"name":"shared claims: the claim outlives its pods","area":"shared claims","profile":"sharing","result":"fail","reason":null,"seconds":61}'

    run report_summary <"$BATS_TEST_TMPDIR/r.json"
    assert_line --index 0 "### DRA conformance: gpu.example.com 1.2.3 on Kubernetes v1.37.2"
    assert_line "Verdict: **failed** (2 passed, 3 skipped, 1 failed in 64 s; fakehw-dra conformance kit v0-test, 2026-01-01T00:10:00Z)"
    assert_line "| sharing | failed | 1 | 0 | 1 |"
}

@test "report: the run passes with core passed and nothing failed; setup failure fails it; no core is incomplete" {
    printf '%s\n' "1..2" "ok 1 templates: a in 1ms" "ok 2 all mode: b in 1ms # skip off" | report >"$BATS_TEST_TMPDIR/a.json"
    run jq -r .verdict "$BATS_TEST_TMPDIR/a.json"
    assert_output passed
    printf '%s\n' "1..1" "ok 1 all mode: b in 1ms" | report >"$BATS_TEST_TMPDIR/b.json"
    run jq -r '.verdict, .cluster.version' "$BATS_TEST_TMPDIR/b.json"
    assert_output "$(printf '%s\n' incomplete unknown)"
    printf '%s\n' "1..24" "not ok 1 setup_suite" "# DeviceClass x not found" | report >"$BATS_TEST_TMPDIR/c.json"
    run jq -r '.verdict, .totals.scenarios' "$BATS_TEST_TMPDIR/c.json"
    assert_output "$(printf '%s\n' failed 0)"
    # A scenario whose area no profile names is counted under "other".
    printf '%s\n' "1..1" "ok 1 templates: a in 1ms" "ok 2 brand new: x in 2ms" | report >"$BATS_TEST_TMPDIR/d.json"
    run jq -r '.profiles[] | select(.name == "other") | "\(.verdict) \(.ok)"' "$BATS_TEST_TMPDIR/d.json"
    assert_output "passed 1"
}

@test "profiles.tsv: every scenario area of the suite belongs to exactly one profile" {
    local areas area n
    areas=$(sed -n 's/^@test "\([^:]*\): .*/\1/p' "$SUITE_DIR"/*.bats | sort -u)
    [[ -n $areas ]]
    while IFS= read -r area; do
        n=$(grep -v '^#' "$SUITE_DIR/profiles.tsv" | cut -f2 | tr ',' '\n' | grep -cxF "$area" || true)
        [[ $n == 1 ]] || { echo "area \"$area\" is in $n profiles of profiles.tsv"; return 1; }
    done <<<"$areas"
    # Three columns, unique profile names.
    run awk -F'\t' '!/^#/ && NF != 3 { print "line " NR ": " NF " columns" }' "$SUITE_DIR/profiles.tsv"
    assert_output ""
    run bash -c "grep -v '^#' '$SUITE_DIR/profiles.tsv' | cut -f1 | sort | uniq -d"
    assert_output ""
}
