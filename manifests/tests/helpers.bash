# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Shared setup of the manifests/ suites: where things are, the Python that
# runs check_manifests.py, and whether kubectl can render kustomizations.
# None of these tests needs a cluster.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
CHECK=$REPO/manifests/tests/check_manifests.py
# shellcheck disable=SC2034 # used by the .bats files
BIN=${FAKEHW_BIN:-$REPO/build/bin}
# shellcheck disable=SC2034 # used by the .bats files
DEFAULT_DRIVER=gpu.fakehw.example.com

bats_load_library bats-support
bats_load_library bats-assert

# The first python3 that has PyYAML and tomllib (3.11+), or a failure that
# says what to install: the checks are part of the tests, not optional.
python_for_checks() {
    local p
    for p in python3 /usr/bin/python3; do
        if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import yaml, tomllib' 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    echo "no python3 (3.11+) with PyYAML: install python3-yaml (make deps)" >&2
    return 1
}

check() {
    local py
    py=$(python_for_checks) || return 1
    "$py" "$CHECK" "$@"
}

# kubectl with kustomize v5 renders the kustomizations; without it the render
# tests skip (Debian 12 packages no kubectl with a recent kustomize).
require_kustomize() {
    command -v kubectl >/dev/null 2>&1 ||
        skip "kubectl not installed: cannot render the kustomizations (install kubectl 1.27+)"
    kubectl version --client 2>/dev/null | grep -q '^Kustomize Version: v[5-9]' ||
        skip "this kubectl has no kustomize v5 ($(kubectl version --client 2>&1 | head -n1)); install kubectl 1.27+"
}

# render DIR OUT: kubectl kustomize DIR into OUT, failing with kustomize's message.
render() {
    kubectl kustomize "$1" >"$2"
}

# Every overlay directory (with a kustomization.yaml) under manifests/overlays.
overlays() {
    local k
    for k in "$REPO"/manifests/overlays/*/kustomization.yaml; do
        [[ -f $k ]] && basename "$(dirname "$k")"
    done
}

# The driver name an overlay sets (its fakehw-dra-driver-name ConfigMap).
overlay_driver() {
    sed -n 's/^ *driverName: *//p' "$REPO/manifests/overlays/$1/driver-name.yaml"
}
