#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# What a container's GPU lister says (lib/smi.bash) against the fake
# cluster: the MIG devices nvidia-smi -L lists under their GPUs, the check
# that a container has exactly its partition, and CONFORMANCE_SMI's default.

# Tests set suite parameters as globals that the sourced helpers read.
# shellcheck disable=SC2034
load selftest

setup() {
    selftest_setup
    mkdir -p "$FAKE_CLUSTER/smi"
    printf '%s\n' 'GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-b2)' \
        '  MIG 3g.40gb     Device  0: (UUID: MIG-d4)' >"$FAKE_CLUSTER/smi/a-ctr.txt"
    printf '%s\n' 'GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-b2)' \
        '  MIG 3g.40gb     Device  0: (UUID: MIG-d0)' \
        'GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-b3)' \
        '  MIG 1g.10gb     Device  0: (UUID: MIG-s0)' >"$FAKE_CLUSTER/smi/b-ctr.txt"
    printf '%s\n' 'GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-b2)' >"$FAKE_CLUSTER/smi/c-ctr.txt"
    CONFORMANCE_SMI=/usr/bin/fakegpu-smi
}

@test "smi: the MIG devices a container lists, each under its GPU" {
    run container_mig_devices ns b ctr
    assert_output "$(printf 'GPU-b2 MIG-d0 3g.40gb\nGPU-b3 MIG-s0 1g.10gb')"
    run container_mig_devices ns c ctr
    assert_success
    assert_output ""
    run kubectl_calls
    assert_line "exec -n ns b -c ctr -- /usr/bin/fakegpu-smi -L"
    CONFORMANCE_SMI=nvidia-smi run container_mig_devices ns a ctr
    assert_output "GPU-b2 MIG-d4 3g.40gb"
    run kubectl_calls
    assert_line "exec -n ns a -c ctr -- nvidia-smi -L"
}

@test "smi: a container has exactly one partition of the profile, under the GPU, with the UUID when given" {
    run assert_container_has_mig ns a ctr GPU-b2 3g.40gb
    assert_success
    assert_output MIG-d4
    run assert_container_has_mig ns a ctr GPU-b2 3g.40gb MIG-d4
    assert_output MIG-d4
    run assert_container_has_mig ns a ctr GPU-b2 3g.40gb MIG-d0
    assert_failure
    assert_output --partial "lists [GPU-b2 MIG-d4 3g.40gb]; want one MIG device 3g.40gb MIG-d0 under GPU GPU-b2"
    run assert_container_has_mig ns a ctr GPU-b3 3g.40gb
    assert_failure
    run assert_container_has_mig ns a ctr GPU-b2 1g.10gb
    assert_failure
    run assert_container_has_mig ns b ctr GPU-b2 3g.40gb
    assert_failure
    assert_output --partial "lists [GPU-b2 MIG-d0 3g.40gb; GPU-b3 MIG-s0 1g.10gb]"
    run assert_container_has_mig ns c ctr GPU-b2 3g.40gb
    assert_failure
    assert_output --partial "lists []"
}

@test "smi: CONFORMANCE_SMI is fakegpu-smi for the fake driver, none for another, as set when set" {
    unset CONFORMANCE_SMI CONFORMANCE_DRIVER CONFORMANCE_FAKE_DRIVER CONFORMANCE_MIG_DEVICE_CLASS CONFORMANCE_DEVICE_CLASS
    params_defaults
    params_resolve_fake ''
    assert_equal "$CONFORMANCE_SMI" /usr/bin/fakegpu-smi
    assert_equal "$CONFORMANCE_MIG_DEVICE_CLASS" gpu.fakehw.example.com
    unset CONFORMANCE_SMI CONFORMANCE_DRIVER CONFORMANCE_FAKE_DRIVER CONFORMANCE_MIG_DEVICE_CLASS CONFORMANCE_DEVICE_CLASS
    CONFORMANCE_DRIVER=gpu.example.com
    params_defaults
    params_resolve_fake ''
    assert_equal "$CONFORMANCE_SMI" ""
    assert_equal "$CONFORMANCE_MIG_DEVICE_CLASS" gpu.example.com
    run has_smi
    assert_failure
    unset CONFORMANCE_SMI CONFORMANCE_FAKE_DRIVER CONFORMANCE_MIG_DEVICE_CLASS
    CONFORMANCE_DRIVER=gpu.nvidia.com CONFORMANCE_DEVICE_CLASS=gpu.nvidia.com
    CONFORMANCE_MIG_DEVICE_CLASS=mig.nvidia.com CONFORMANCE_SMI=nvidia-smi
    params_defaults
    params_resolve_fake ''
    assert_equal "$CONFORMANCE_SMI" nvidia-smi
    assert_equal "$CONFORMANCE_MIG_DEVICE_CLASS" mig.nvidia.com
    run params_validate
    assert_success
    CONFORMANCE_SMI='nvidia-smi -L' CONFORMANCE_MIG_DEVICE_CLASS=MIG run params_validate
    assert_failure
    assert_output --partial "CONFORMANCE_MIG_DEVICE_CLASS=MIG is not a DeviceClass name"
    assert_output --partial "CONFORMANCE_SMI=nvidia-smi\\ -L is not one command"
}
