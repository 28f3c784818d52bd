# SPDX-License-Identifier: Apache-2.0
# Shared by the scripts/ suites: the bats libraries, where the repository
# and this build's programs are, and a setup step for the suites that run
# make.
# shellcheck shell=bash
# The variables set here are read by the .bats files that load this one.
# shellcheck disable=SC2034

bats_load_library bats-support
bats_load_library bats-assert

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
BIN=${FAKEHW_BIN:-$REPO/build/bin}

# outside_make_jobs: a make started by `make test` must not join its job
# server.
outside_make_jobs() {
    unset MAKEFLAGS MFLAGS MAKELEVEL
}

# in_repo: the test runs at the top of the repository, outside make's jobs.
in_repo() {
    cd "$REPO" || return 1
    outside_make_jobs
}
