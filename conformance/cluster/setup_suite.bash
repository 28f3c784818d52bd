# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# bats runs setup_suite once before the first test of the cluster suite:
# fail fast with a clear message when the cluster, the DRA API, the driver's
# DeviceClass or its ResourceSlices are not there, or when the test image
# cannot run on the nodes, then decide which feature gates are on
# (lib/features.bash) and export the answers to every test.

CONFORMANCE_SUITE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

setup_suite() {
    # bats 1.8.2 leaves IFS="," in the process that runs setup_suite when
    # --filter-tags is given; word splitting below needs the default.
    local IFS=$' \t\n'
    # shellcheck source=SCRIPTDIR/lib/helpers.bash
    source "$CONFORMANCE_SUITE_DIR/lib/helpers.bash"
    # The reason for a failure goes to the TAP stream too ("# " lines):
    # bats shows setup_suite's stderr only with some formatters.
    local errors=${BATS_SUITE_TMPDIR:-${BATS_RUN_TMPDIR:-/tmp}}/preflight.err
    if ! suite_preflight 2>"$errors" >&3; then
        sed 's/^/# setup: /' "$errors" >&3
        cat "$errors" >&2
        return 1
    fi
    sed 's/^/# /' "$errors" >&3
}

# After the last test: the namespaces the tests released finalize in the
# background; wait for them, so a run leaves nothing behind.  A namespace
# still terminating after CONFORMANCE_TIMEOUT is reported, not failed: its
# pods and claims were already gone when its test ended.
teardown_suite() {
    local IFS=$' \t\n' left
    [[ -n ${CONFORMANCE_RUN_ID:-} ]] || return 0
    if ! left=$(wait_for "the namespaces of this run to finalize" "$CONFORMANCE_TIMEOUT" run_namespaces_gone 2>&1); then
        printf '# note: %s\n' "${left//$'\n'/ }" >&3
    fi
    return 0
}
