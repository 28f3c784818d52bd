# conformance/node: the node suite, which needs no cluster.  Its bats files in
# tests/ run with `make test`; lib/runtime.bash runs containers with podman so
# that the tests can check what a CDI spec injects (skips with the reason on
# machines without rootful podman, runc and busybox-static).
BATS_SUITES += conformance/node/tests
LINT_SHELL += conformance/node/lib/runtime.bash
LINT_SHELL += conformance/node/lib/node_env.bash
