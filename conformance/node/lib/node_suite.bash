# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# The frame the node suite's plugin_*.bats files (and bench/node/'s) share:
# bats 1.5 (run -N), bats-support and bats-assert, the node environment
# (node_env.bash), and a node set up before each test and torn down after
# it.  A test file loads it first (`load ../lib/node_suite`), then any other
# library of lib/; a file that needs more around each test defines its own
# setup() or teardown(), which call node_setup or node_teardown.
bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert
# shellcheck source-path=SCRIPTDIR source=node_env.bash
source "${BASH_SOURCE[0]%/*}/node_env.bash"

setup() {
    node_setup
}

teardown() {
    node_teardown
}
