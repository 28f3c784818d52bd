#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The nvidia personality in a real container (podman with the claim's CDI
# spec): workloads written for NVIDIA's driver call nvidia-smi, which is
# fakegpu-smi mounted under that name.  Skips without a usable runtime
# (conformance/node/lib/runtime.bash), fails then with FAKEHW_REQUIRE_RUNTIME=1.
# shellcheck disable=SC2154 # $output comes from run

export NODE_DRIVER_NAME=gpu.nvidia.com
load ../../conformance/node/lib/node_suite
load ../../conformance/node/lib/partitions
load ../../conformance/node/lib/runtime

setup_file() {
    runtime_setup_file
}

setup() {
    node_setup
    runtime_require
    mig_config 0 1
    fakehw_start
    api_start
    plugin_start --personality nvidia
    kubelet_register
    # The H100's two instances and the T4.
    wait_pool_published 3
}

teardown() {
    runtime_cleanup
    node_teardown
}

@test "nvidia: nvidia-smi -L in the container lists the claim's MIG device under its GPU [runtime]" {
    claim_new c1 gpu-0-mig-3g40gb-9-4
    run -0 prepare_json "$(ref c1)"
    local -a ids
    mapfile -t ids < <(cdi_ids "$output")
    run -0 run_with_cdi "$CDI_ROOT" "${ids[@]}" -- nvidia-smi -L
    assert_line --regexp '^GPU 0: NVIDIA H100 80GB HBM3 \(UUID: GPU-[0-9a-f-]+\)$'
    assert_line --regexp '^  MIG 3g.40gb +Device +0: \(UUID: MIG-[0-9a-f-]+\)$'
    assert_equal "${#lines[@]}" 2
}
