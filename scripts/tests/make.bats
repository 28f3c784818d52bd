#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The Makefile's own targets for a new user: make help shows the variables'
# values, make unit shows a test program's log output only when it fails,
# make install puts the programs and their man pages under DESTDIR/PREFIX.

load helpers

setup() {
    in_repo
}

# mk ARGS...: make on this build (the one FAKEHW_BIN names).
mk() {
    make -s --no-print-directory BUILD="$(dirname "$BIN")" "$@"
}

@test "make help shows the values of IMAGE and K8S_VERSION, not their names" {
    run mk help IMAGE=registry.example.com/fakehw-dra:v9
    assert_success
    assert_line --regexp '^  image +build the container image registry.example.com/fakehw-dra:v9 '
    assert_line --regexp '^  kind-up .*K8S_VERSION=v1\.[0-9]+\.[0-9]+\)$'
    # shellcheck disable=SC2016 # a literal make reference
    refute_output --partial '$('
}

@test "make unit shows a test program's stderr only when it fails" {
    local t=$BATS_TEST_TMPDIR
    printf '#!/bin/sh\necho "[ RUN      ] t"\necho "E1122 log line of a passing test" >&2\necho "[  PASSED  ] 1 test(s)." >&2\n' >"$t/test_pass"
    printf '#!/bin/sh\necho "[  FAILED  ] 1 test(s)."\necho "E1122 log line of a failing test" >&2\nexit 1\n' >"$t/test_fail"
    chmod +x "$t/test_pass" "$t/test_fail"
    run mk unit UNIT_TESTS="$t/test_pass" UNIT_LOGS="$t/logs"
    assert_success
    assert_output "== $t/test_pass
[ RUN      ] t
[  PASSED  ] 1 test(s)."
    assert_equal "$(cat "$t/logs/test_pass.stderr")" "E1122 log line of a passing test
[  PASSED  ] 1 test(s)."
    run mk unit UNIT_TESTS="$t/test_pass $t/test_fail" UNIT_LOGS="$t/logs"
    assert_failure
    assert_line "== $t/test_fail failed; its stderr:"
    assert_line "E1122 log line of a failing test"
    refute_line "E1122 log line of a passing test"
}

@test "make install puts the programs and their man pages under DESTDIR/PREFIX; uninstall removes them" {
    command -v help2man >/dev/null || fail "help2man not installed (make deps)"
    local dest=$BATS_TEST_TMPDIR/dest p
    run mk install PREFIX=/opt/fakehw DESTDIR="$dest"
    assert_success
    for p in fakehw fakehw-kubelet-plugin fakegpu-smi fakehw-podresources; do
        [[ -x $dest/opt/fakehw/bin/$p ]] || fail "no $dest/opt/fakehw/bin/$p"
        run "$dest/opt/fakehw/bin/$p" --help
        assert_success
        assert_line --partial "Usage: $p"
        run cat "$dest/opt/fakehw/share/man/man1/$p.1"
        assert_success
        assert_line --partial ".TH ${p^^} \"1\""
        assert_line --partial "$p \\- "
    done
    run cat "$dest/opt/fakehw/share/man/man1/fakehw-kubelet-plugin.1"
    assert_output --partial 'fakehw\-root'
    run mk uninstall PREFIX=/opt/fakehw DESTDIR="$dest"
    assert_success
    run find "$dest" -type f
    assert_output ""
    [[ ! -e $dest/opt/fakehw/share/doc/fakehw-dra ]] || fail "uninstall left the document directory"
}

@test "make install: the man pages list --version, name documents that are installed, one paragraph per fakehw command" {
    command -v help2man >/dev/null || fail "help2man not installed (make deps)"
    local dest=$BATS_TEST_TMPDIR/dest p page doc release
    release=$(sed -n 's/^#define FAKEHW_DRA_VERSION "\(.*\)"$/\1/p' common/version.h)
    run mk install PREFIX=/opt/fakehw DESTDIR="$dest"
    assert_success
    for p in fakehw fakehw-kubelet-plugin fakegpu-smi fakehw-podresources; do
        page=$dest/opt/fakehw/share/man/man1/$p.1
        run grep -x -A1 '.TP' "$page"
        assert_line '\fB\-\-version\fR'
        run grep -c "^.TH ${p^^} \"1\" \".*\" \"$p $release\"" "$page"
        assert_output 1
        # SEE ALSO names the other programs and a document that is there.
        run sed -n '/^.SH "SEE ALSO"/,$p' "$page"
        run grep -c '^\.BR [a-z-]* (1)' <<<"$output"
        assert_output 3
        run sed -n '/^.SH "SEE ALSO"/,$p' "$page"
        doc=$(grep -o '/opt/fakehw/share/doc/fakehw-dra/[a-z-]*\.md' <<<"$output" | head -n 1)
        [[ -n $doc && -f $dest$doc ]] || fail "$p.1 names '$doc', which make install did not install: $output"
        run grep -c 'docs/' "$page"
        [[ $output == 0 || $p == fakehw ]] || fail "$p.1 points at docs/ of the sources"
    done
    # Each fakehw command is a paragraph of its own: the command as the tag,
    # its description under it.
    run grep -x -A1 '.TP' "$dest/opt/fakehw/share/man/man1/fakehw.1"
    assert_line 'fakehw flip \fB\-\-mount\fR DIR DEVICE|all healthy|unhealthy [\-\-reason TEXT]'
    assert_line 'fakehw check \fB\-\-config\fR FILE [\-\-node NAME]'
    assert_line 'fakehw profiles'
}

