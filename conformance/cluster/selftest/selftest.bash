# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Common setup of the self-tests, which check the cluster suite's own logic
# with no cluster: a fresh copy of the fake cluster (fixtures/cluster), the
# fake kubectl (bin/kubectl) first on PATH, every CONFORMANCE_* variable of
# the caller's environment cleared, and the suite's helpers loaded.

SELFTEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SUITE_DIR=$(cd "$SELFTEST_DIR/.." && pwd)

selftest_setup() {
    local var
    for var in $(compgen -v CONFORMANCE_); do
        unset "$var"
    done
    unset TEST_NAMESPACE TEST_TAGS KUBERNETES_SERVICE_HOST
    export FAKE_CLUSTER=$BATS_TEST_TMPDIR/cluster
    cp -r "$SELFTEST_DIR/fixtures/cluster" "$FAKE_CLUSTER"
    # The preflight wants a kubeconfig file; the fake kubectl reads none.
    export KUBECONFIG=$FAKE_CLUSTER/kubeconfig
    : >"$KUBECONFIG"
    PATH=$SELFTEST_DIR/bin:$PATH
    export CONFORMANCE_POLL_INTERVAL=1
    # The fake kubectl answers every read itself (calls.log records them);
    # api_proxy.bats turns the proxy on.
    export CONFORMANCE_API_PROXY=false
    bats_load_library bats-support
    bats_load_library bats-assert
    # After bats-support: the suite's fail() reads stdin the same way.
    # shellcheck source=SCRIPTDIR/../lib/helpers.bash
    source "$SUITE_DIR/lib/helpers.bash"
}

# The kubectl calls the fake cluster has seen, one per line.
kubectl_calls() {
    cat "$FAKE_CLUSTER/calls.log" 2>/dev/null || true
}
