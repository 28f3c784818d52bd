#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# scripts/matrix_table.py: the scenario x version matrix of
# docs/compatibility.md from the cluster suite's TAP reports.

bats_load_library bats-support
bats_load_library bats-assert

setup() {
    REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
    T=$BATS_TEST_TMPDIR
    # What bats --formatter tap --timing writes.
    printf '%s\n' '1..3' 'ok 1 claim from a template in 812ms' \
        'ok 2 device metadata in 15ms # skip needs Kubernetes 1.36 or newer; the server is v1.35.4' \
        'not ok 3 driver restart in 60210ms' '# (in test file conformance/cluster/90-driver-restart.bats, line 12)' >"$T/a.tap"
    printf '%s\n' '1..3' 'ok 1 claim from a template in 640ms' 'ok 2 device metadata in 900ms' \
        'ok 3 driver restart in 24000ms' >"$T/b.tap"
}

@test "matrix: one row per scenario, one column per version, totals, skip reasons below" {
    run python3 "$REPO/scripts/matrix_table.py" v1.35.4="$T/a.tap" v1.36.3="$T/b.tap"
    assert_success
    assert_line "| scenario | v1.35.4 | v1.36.3 |"
    assert_line "| claim from a template | ok | ok |"
    assert_line "| device metadata | skip | ok |"
    assert_line "| driver restart | **FAIL** | ok |"
    assert_line "| **total** | 1 ok, 1 skip, 1 fail | 3 ok, 0 skip, 0 fail |"
    assert_line "- device metadata (v1.35.4): needs Kubernetes 1.36 or newer; the server is v1.35.4"
}

@test "matrix: a scenario missing from one run is 'not run' there" {
    printf '%s\n' '1..1' 'ok 1 only here in 3ms' >"$T/c.tap"
    run python3 "$REPO/scripts/matrix_table.py" v1.34.4="$T/c.tap" v1.36.3="$T/b.tap"
    assert_success
    assert_line "| only here | ok | not run |"
    assert_line "| driver restart | not run | ok |"
}

@test "matrix: a report cut short or without a plan is an error, not a shorter column" {
    head -n 2 "$T/a.tap" >"$T/short.tap"
    run python3 "$REPO/scripts/matrix_table.py" v1.35.4="$T/short.tap"
    assert_failure
    assert_output "matrix_table: $T/short.tap: 1 results for a plan of 3: the run was cut short"
    : >"$T/empty.tap"
    run python3 "$REPO/scripts/matrix_table.py" v1.35.4="$T/empty.tap"
    assert_failure
    assert_output --partial "no TAP plan line"
    run python3 "$REPO/scripts/matrix_table.py" v1.35.4="$T/missing.tap"
    assert_failure
    assert_output "matrix_table: $T/missing.tap: No such file or directory"
    run python3 "$REPO/scripts/matrix_table.py" "$T/a.tap"
    assert_failure
    assert_output --partial "expected VERSION=TAPFILE"
}

@test "matrix --doc: replaces only what lies between the markers" {
    printf '%s\n' '# Title' 'before' '<!-- conformance-matrix:begin -->' 'old table' \
        '<!-- conformance-matrix:end -->' 'after' >"$T/doc.md"
    run python3 "$REPO/scripts/matrix_table.py" --doc "$T/doc.md" v1.36.3="$T/b.tap"
    assert_success
    run cat "$T/doc.md"
    assert_line "before"
    assert_line "after"
    assert_line "| device metadata | ok |"
    refute_line "old table"
    # Idempotent: a second run gives the same file.
    cp "$T/doc.md" "$T/first.md"
    python3 "$REPO/scripts/matrix_table.py" --doc "$T/doc.md" v1.36.3="$T/b.tap"
    run cmp "$T/first.md" "$T/doc.md"
    assert_success
}

@test "matrix --doc: a document without the markers is left alone" {
    printf '%s\n' '# Title' 'no markers' >"$T/doc.md"
    cp "$T/doc.md" "$T/orig.md"
    run python3 "$REPO/scripts/matrix_table.py" --doc "$T/doc.md" v1.36.3="$T/b.tap"
    assert_failure
    assert_output --partial "needs exactly one <!-- conformance-matrix:begin -->"
    run cmp "$T/orig.md" "$T/doc.md"
    assert_success
}
