# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# The Go toolchain the scripts build with, wherever it is already: the
# node-image scripts (lib.sh) and scripts/install-go-tools.sh (which
# fetches the pinned one when there is none).  Sourced, never run.  The
# sourcing script sets GO_MIN_MINOR, the oldest Go 1.x it takes.

# Where install-go-tools.sh puts the pinned toolchain it fetches.
GO_TOOLCHAIN_DIR=${GO_TOOLCHAIN_DIR:-/usr/local/lib/fakehw-dra-go}

# go_ok GO: GO runs and is 1.$GO_MIN_MINOR or newer.
go_ok() {
    local v
    v=$("$1" env GOVERSION 2>/dev/null) || return 1
    [[ $v =~ ^go1\.([0-9]+) ]] && ((BASH_REMATCH[1] >= GO_MIN_MINOR))
}

# local_go: prints the first usable go of PATH, /usr/local/go and
# $GO_TOOLCHAIN_DIR, or fails.
local_go() {
    local g
    for g in "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go "$GO_TOOLCHAIN_DIR/go/bin/go"; do
        if [[ -n $g && -x $g ]] && go_ok "$g"; then
            echo "$g"
            return 0
        fi
    done
    return 1
}
