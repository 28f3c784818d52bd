#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The README's tour is what scripts/demo.sh prints today (claim UIDs, times,
# temp directories and klog headers normalised), and the checker notices a
# change.

bats_load_library bats-support
bats_load_library bats-assert

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

setup() {
    ((EUID == 0)) || skip "the tour needs root (FUSE, device nodes, podman)"
    # The README shows the container step; where no runtime works the demo
    # skips it, and the comparison would fail for that reason alone.
    # shellcheck source=conformance/node/lib/runtime.bash
    source "$REPO/conformance/node/lib/runtime.bash"
    local reason
    if reason=$(runtime_unavailable_reason); then
        [[ ${FAKEHW_REQUIRE_RUNTIME-} != 1 ]] || fail "container runtime unavailable (FAKEHW_REQUIRE_RUNTIME=1): $reason"
        skip "the README's tour runs a container: $reason"
    fi
}

@test "the README's tour is the output of scripts/demo.sh" {
    run "$REPO/scripts/readme-tour.sh" check
    assert_success
    refute_output --partial "differs"
}

@test "readme-tour.sh check fails with a diff when the README's tour is stale" {
    local copy=$BATS_TEST_TMPDIR/repo
    mkdir -p "$copy/scripts"
    cp "$REPO/scripts/demo.sh" "$REPO/scripts/readme-tour.sh" "$copy/scripts/"
    ln -s "$REPO/conformance" "$copy/conformance"
    sed 's/^GPU 1: NVIDIA H100/GPU 1: NVIDIA A100/; s/"NVIDIA L4","23034Mi"/"NVIDIA L4","24Gi"/' "$REPO/README.md" >"$copy/README.md"
    FAKEHW_BIN=${FAKEHW_BIN:-$REPO/build/bin} run "$copy/scripts/readme-tour.sh" check
    assert_failure
    assert_output --partial "the README's tour differs from what scripts/demo.sh prints now; run make readme-tour"
    assert_output --partial '-["gpu-2","NVIDIA L4","24Gi"]'
}
