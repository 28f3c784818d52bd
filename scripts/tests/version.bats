#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# --version of every program make install installs: one line
# "<program> <release> (git <commit>)", the release of common/version.h
# (also the Helm chart's version) and the commit of the generated header.

load helpers

setup() {
    outside_make_jobs
    RELEASE=$(sed -n 's/^#define FAKEHW_DRA_VERSION "\(.*\)"$/\1/p' "$REPO/common/version.h")
    [[ $RELEASE =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "no release number in common/version.h: '$RELEASE'"
    read -r -a PROGRAMS < <(sed -n 's/^INSTALL_PROGRAMS := //p' "$REPO/Makefile")
    ((${#PROGRAMS[@]} >= 4)) || fail "no INSTALL_PROGRAMS in the Makefile"
}

# header_commit FILE: the commit a generated fakehw_git.h holds.
header_commit() {
    sed -n 's/^#define FAKEHW_GIT_COMMIT "\(.*\)"$/\1/p' "$1" | grep .
}

@test "every installed program prints '<name> <release> (git <commit>)' and exits 0" {
    local commit p
    commit=$(header_commit "$(dirname "$BIN")/gen/fakehw_git.h")
    for p in "${PROGRAMS[@]}"; do
        run "$BIN/$p" --version
        assert_success
        assert_output "$p $RELEASE (git $commit)"
        run "$BIN/$p" --help
        assert_success
        assert_line --regexp '^  --version +print the version and exit$'
    done
}

@test "--version takes no value" {
    run "$BIN/fakegpu-smi" --version=1
    assert_failure 2
    assert_output --partial "flag --version takes no value"
}

@test "the commit comes from git describe, or FAKEHW_GIT_COMMIT, cleaned; unchanged text keeps the file" {
    local build=$BATS_TEST_TMPDIR/build header
    header=$build/gen/fakehw_git.h
    if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
        run make -s -C "$REPO" BUILD="$build" "$header"
        assert_success
        assert_equal "$(header_commit "$header")" "$(git -C "$REPO" describe --always --dirty)"
    fi
    run make -s -C "$REPO" BUILD="$build" "$header" FAKEHW_GIT_COMMIT="v1.2-3-gabc\"; x'\\y"
    assert_success
    assert_equal "$(header_commit "$header")" "v1.2-3-gabcxy"
    touch -d '2000-01-01' "$header"
    run make -s -C "$REPO" BUILD="$build" "$header" FAKEHW_GIT_COMMIT=v1.2-3-gabcxy
    assert_success
    assert_equal "$(stat -c %Y "$header")" "$(date -d 2000-01-01 +%s)"
    run make -s -C "$REPO" BUILD="$build" "$header" FAKEHW_GIT_COMMIT="'"
    assert_success
    assert_equal "$(header_commit "$header")" unknown
}

@test "the Helm chart's version is the release" {
    run sed -n 's/^version: //p' "$REPO/manifests/helm/fakehw-dra/Chart.yaml"
    assert_output "$RELEASE"
}
