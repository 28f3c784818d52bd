#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# scripts/real-node/: what can be checked without starting a node. The
# feature gates and API versions it turns on must be exactly those of the
# kind config of the same minor, read here with a YAML parser of its own.

bats_load_library bats-support
bats_load_library bats-assert

setup() {
    REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
}

# expected MINOR: the two flag lines, from kind/cluster-1.MINOR.yaml.
expected() {
    python3 - "$REPO/kind/cluster-1.$1.yaml" <<'EOF'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
gates = doc.get("featureGates") or {}
rc = doc.get("runtimeConfig") or {}
print("--feature-gates=" + ",".join(f"{k}={str(v).lower()}" for k, v in gates.items()))
print("--runtime-config=" + ",".join(f"{k}={v}" for k, v in rc.items()))
EOF
}

@test "real-node: every minor's gates and API versions are its kind config's" {
    local f minor n=0
    for f in "$REPO"/kind/cluster-1.*.yaml; do
        minor=${f##*/cluster-1.}
        minor=${minor%.yaml}
        run bash "$REPO/scripts/real-node/node.sh" gates "$minor"
        assert_success
        assert_output "$(expected "$minor")"
        n=$((n + 1))
    done
    ((n >= 5)) # 1.34 to 1.38 at least
}

@test "real-node: a minor without a kind config is refused, naming it" {
    run bash "$REPO/scripts/real-node/node.sh" gates 99
    assert_failure
    assert_output --partial "no kind/cluster-1.99.yaml"
}

@test "real-node: up refuses a version that is not v1.MINOR.PATCH before doing anything" {
    run bash "$REPO/scripts/real-node/node.sh" up 1.35
    assert_failure
    assert_output --partial "'1.35' is not v1.MINOR.PATCH"
}

@test "real-node: control-plane refuses a version that is not v1.MINOR.PATCH before doing anything" {
    run bash "$REPO/scripts/real-node/node.sh" control-plane 1.37
    assert_failure
    assert_output --partial "'1.37' is not v1.MINOR.PATCH"
}

@test "real-node: unknown commands get the usage" {
    run bash "$REPO/scripts/real-node/node.sh" frobnicate
    assert_failure
    assert_output --partial "usage: node.sh up [VERSION] | control-plane [VERSION] | down | env | gates MINOR"
    run bash "$REPO/scripts/real-node/drivers.sh" frobnicate
    assert_failure
    assert_output --partial "usage: drivers.sh fakehw [NAME] | test-driver | stop"
}
