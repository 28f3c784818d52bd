#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The CDI specs the plugin writes, given to a real container runtime (podman
# with runc, lib/runtime.bash): the runtime must accept them, and with the
# fake driver the container must see exactly the allocated GPUs.  Skips with
# the harness's reason where no runtime is usable (FAKEHW_REQUIRE_RUNTIME=1
# makes that a failure).
# shellcheck disable=SC2016,SC2154 # jq filters and eval'd checks; $output, $status come from run

load ../lib/node_suite
load ../lib/runtime

setup_file() {
    runtime_setup_file
}

setup() {
    node_setup
    runtime_require
}

@test "runtime: a container given the claim's CDI devices starts [runtime]" {
    node_up
    local -a devs
    mapfile -t devs < <(pool_devices 2)
    claim_new c1 "${devs[@]}"
    run -0 prepare_json "$(ref c1)"
    local -a ids
    mapfile -t ids < <(cdi_ids "$output")
    ((${#ids[@]} > 0)) || fail "the prepare answer has no CDI id"
    run run_with_cdi "$CDI_ROOT" "${ids[@]}" -- /bin/sh -c 'echo started'
    assert_success
    assert_output started
}

@test "runtime: fakegpu-smi -L in the container lists exactly the allocated GPUs [runtime,fakegpu-smi]" {
    node_up
    claim_new c1 gpu-3 gpu-1
    run -0 prepare_json "$(ref c1)"
    local -a ids
    mapfile -t ids < <(cdi_ids "$output")
    run --separate-stderr run_with_cdi "$CDI_ROOT" "${ids[@]}" -- /usr/bin/fakegpu-smi -L
    assert_success
    # fakegpu-smi numbers the visible GPUs in index order.
    assert_output "GPU 0: NVIDIA A100-SXM4-80GB (UUID: $(device_attr gpu-1 uuid))
GPU 1: NVIDIA A100-SXM4-80GB (UUID: $(device_attr gpu-3 uuid))"
    assert_equal "$stderr" ""
    # The claim's env, device nodes and device metadata came with it.
    run run_with_cdi "$CDI_ROOT" "${ids[@]}" -- /bin/sh -c '
        echo "uid=$DRA_CLAIM_UID"
        ls /dev | grep fakegpu
        cat "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/c1/gpu/$DRA_RESOURCE_DRIVER_NAME-metadata.json"'
    assert_success
    assert_line "uid=$CLAIM_UID"
    assert_line fakegpu1
    assert_line fakegpu3
    refute_line fakegpu0
    assert_output --partial "\"uid\": \"$CLAIM_UID\""
}
