#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# docs/compatibility.md and the scenarios agree: every scenario declares what
# it needs in a "# requires:" line that matches the require_* calls it makes,
# and the per-release tables are what those lines, the kind configs and the
# suite's release defaults give (compat_check.py).

load selftest

setup() {
    selftest_setup
    REPO=$(cd "$SUITE_DIR/../.." && pwd)
    # A copy of what the check reads, for the tests that break it.
    COPY=$BATS_TEST_TMPDIR/repo
    mkdir -p "$COPY/conformance/cluster/lib" "$COPY/docs"
    cp "$SUITE_DIR"/[0-9]*.bats "$COPY/conformance/cluster/"
    cp "$SUITE_DIR/lib/features.bash" "$COPY/conformance/cluster/lib/"
    cp -r "$REPO/kind" "$COPY/kind"
    cp "$REPO/docs/compatibility.md" "$COPY/docs/"
}

compat_check() {
    python3 "$SELFTEST_DIR/compat_check.py" "$@"
}

@test "compat: the tables of docs/compatibility.md are what the scenarios, kind configs and defaults give" {
    run compat_check "$REPO"
    assert_success
    assert_output ""
    # One table per release 1.34-1.38.
    run grep -c '^## Kubernetes 1\.3[4-8]$' "$REPO/docs/compatibility.md"
    assert_output 5
}

@test "compat: a scenario without a requires line, or one that says less than it checks, fails" {
    sed -i '0,/^# requires: gate=DRAExtendedResource$/{//d}' "$COPY/conformance/cluster/92-extended-resources.bats"
    sed -i 's|^# requires: gate=DRAAdminAccess$|# requires: none|' "$COPY/conformance/cluster/80-admin-access.bats"
    run compat_check "$COPY"
    assert_failure
    assert_line --regexp '^conformance/cluster/92-extended-resources.bats:[0-9]+: test "extended resources: a pod asking for one gets one device, which the container sees" needs one "# requires:" line above it, has 0$'
    assert_line --partial "80-admin-access.bats"
    assert_line --partial "\"# requires:\" says [], the test checks ['gate=DRAAdminAccess']"
}

@test "compat: the tables follow the kind config and the suite's release defaults" {
    # Without the gate in the 1.35 kind config, extended resources skip there.
    sed -i '/^  DRAExtendedResource: true/d' "$COPY/kind/cluster-1.35.yaml"
    run compat_check "$COPY"
    assert_failure
    assert_line "docs/compatibility.md:$(grep -n '^| requirement |' "$COPY/docs/compatibility.md" | sed -n 2p | cut -d: -f1): 1.35: missing or different row: | \`gate=DRAExtendedResource\` | 92-extended-resources.bats (5) | skips: feature gate DRAExtendedResource is off |"
    # A release default the detection changes shows up in every table.
    cp "$REPO/kind/cluster-1.35.yaml" "$COPY/kind/"
    sed -i 's|\[DRAExtendedResource\]=36|[DRAExtendedResource]=37|' "$COPY/conformance/cluster/lib/features.bash"
    run compat_check "$COPY"
    assert_failure
    assert_line --partial "1.36: missing or different row: | \`gate=DRAExtendedResource\` | 92-extended-resources.bats (5) | skips: feature gate DRAExtendedResource is off |"
}

@test "compat: an unknown requirement key is refused" {
    sed -i 's|^# requires: none$|# requires: kernel=6|' "$COPY/conformance/cluster/10-templates.bats"
    run compat_check "$COPY"
    assert_failure
    assert_line --partial 'unknown requirement "kernel=6"'
}
