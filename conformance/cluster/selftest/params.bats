#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Parameters: defaults, validation messages, and the fake-driver decision
# with the defaults that follow from it.

# Tests set suite parameters as globals that the sourced helpers read.
# shellcheck disable=SC2016,SC2030,SC2031,SC2034,SC2154
load selftest

setup() { selftest_setup; }

@test "params: defaults are the fake driver's and pass validation" {
    assert_equal "$CONFORMANCE_DRIVER" gpu.fakehw.example.com
    assert_equal "$CONFORMANCE_DEVICE_CLASS" gpu.fakehw.example.com
    assert_equal "$CONFORMANCE_IMAGE" busybox:1.36
    assert_equal "$CONFORMANCE_TIMEOUT" 120
    run params_validate
    assert_success
    assert_output ""
}

@test "params: the device class follows the driver unless set" {
    unset CONFORMANCE_DEVICE_CLASS
    CONFORMANCE_DRIVER=gpu.nvidia.com
    params_defaults
    assert_equal "$CONFORMANCE_DEVICE_CLASS" gpu.nvidia.com
    CONFORMANCE_DEVICE_CLASS=mig.nvidia.com
    params_defaults
    assert_equal "$CONFORMANCE_DEVICE_CLASS" mig.nvidia.com
}

@test "params: every bad value is reported with its variable" {
    CONFORMANCE_DRIVER=Not_A_Driver
    CONFORMANCE_TIMEOUT=10s
    CONFORMANCE_PENDING_SECONDS=0
    CONFORMANCE_FAKE_DRIVER=yes
    CONFORMANCE_NAMESPACE_PREFIX=this-prefix-is-far-too-long-for-names
    CONFORMANCE_SELECTOR_ATTRIBUTE='bad name'
    CONFORMANCE_EXPECTED_ATTRIBUTES='uuid 9lives'
    CONFORMANCE_FEATURES='DRAAdminAccess=on'
    CONFORMANCE_FAKEHW_MOUNT=relative/path
    CONFORMANCE_FAKEHW_EXEC='/no/such/node-exec --flag'
    CONFORMANCE_BINDING_TIMEOUT_SECONDS=10m
    run params_validate
    assert_failure
    assert_line --partial "CONFORMANCE_DRIVER=Not_A_Driver is not a DRA driver name"
    assert_line --partial "CONFORMANCE_TIMEOUT=10s is not a whole number"
    assert_line --partial "CONFORMANCE_PENDING_SECONDS=0 is not a whole number"
    assert_line --partial "CONFORMANCE_FAKE_DRIVER=yes must be true, false or auto"
    assert_line --partial "CONFORMANCE_NAMESPACE_PREFIX="
    assert_line --partial "CONFORMANCE_SELECTOR_ATTRIBUTE=bad\\ name is not an attribute name"
    assert_line --partial 'holds "9lives", which is not an attribute name'
    assert_line --partial 'holds "DRAAdminAccess=on"; write Gate=true or Gate=false'
    assert_line --partial "CONFORMANCE_FAKEHW_MOUNT=relative/path is not an absolute path"
    assert_line --partial "CONFORMANCE_FAKEHW_EXEC=/no/such/node-exec\\ --flag does not start with a command found here (/no/such/node-exec)"
    assert_line --partial "CONFORMANCE_BINDING_TIMEOUT_SECONDS=10m is not a whole number of seconds between 1 and 999999 (the scheduler's bindingTimeout), or empty"
    assert_equal "${#lines[@]}" 11
}

@test "params: qualified attribute names are accepted" {
    CONFORMANCE_SELECTOR_ATTRIBUTE=resource.kubernetes.io/pcieRoot
    CONFORMANCE_EXPECTED_ATTRIBUTES="uuid resource.kubernetes.io/pciBusID"
    run params_validate
    assert_success
}

@test "params: the fake driver is recognised by name, by its fakehw container, or by setting" {
    params_resolve_fake ''
    assert_equal "$CONFORMANCE_FAKE_DRIVER" true
    assert_equal "$CONFORMANCE_DEVICE_STATUS" true
    assert_equal "$CONFORMANCE_DEVICE_METADATA" true
    assert_equal "$CONFORMANCE_EXPECTED_CAPACITY" memory
    [[ " $CONFORMANCE_EXPECTED_ATTRIBUTES " == *" resource.kubernetes.io/pcieRoot "* ]]

    [[ " $CONFORMANCE_EXPECTED_ATTRIBUTES " == *" index "* ]]

    # The compat overlay: another name, but the fakehw container is there;
    # its nvidia personality publishes NVIDIA's attributes, and the
    # expectation holds only what GPUs, MIG and VFIO devices all carry: no
    # index, numaNode or uuid, no GPU-only attribute, no memory capacity.
    CONFORMANCE_DRIVER=gpu.nvidia.com CONFORMANCE_FAKE_DRIVER=auto CONFORMANCE_EXPECTED_ATTRIBUTES=auto
    CONFORMANCE_EXPECTED_CAPACITY=auto
    params_resolve_fake "$(cat "$FAKE_CLUSTER/driver-pods.json")"
    assert_equal "$CONFORMANCE_FAKE_DRIVER" true
    [[ " $CONFORMANCE_EXPECTED_ATTRIBUTES " == *" productName "* ]]
    [[ " $CONFORMANCE_EXPECTED_ATTRIBUTES " != *" cudaDriverVersion "* ]]
    assert_equal "$CONFORMANCE_EXPECTED_CAPACITY" ""
    [[ " $CONFORMANCE_EXPECTED_ATTRIBUTES " != *" index "* && " $CONFORMANCE_EXPECTED_ATTRIBUTES " != *" numaNode "* ]]
    [[ " $CONFORMANCE_EXPECTED_ATTRIBUTES " != *" uuid "* ]]
}

@test "params: another driver runs the generic checks only, unless told otherwise" {
    CONFORMANCE_DRIVER=gpu.example.com CONFORMANCE_FAKE_DRIVER=auto
    CONFORMANCE_DEVICE_STATUS=auto CONFORMANCE_EXPECTED_ATTRIBUTES=auto CONFORMANCE_EXPECTED_CAPACITY=auto
    params_resolve_fake '{"items":[{"spec":{"containers":[{"name":"plugin"}]}}]}'
    assert_equal "$CONFORMANCE_FAKE_DRIVER" false
    assert_equal "$CONFORMANCE_DEVICE_STATUS" false
    assert_equal "$CONFORMANCE_EXPECTED_ATTRIBUTES" ""
    assert_equal "$CONFORMANCE_EXPECTED_CAPACITY" ""

    CONFORMANCE_FAKE_DRIVER=auto CONFORMANCE_DEVICE_STATUS=true
    params_resolve_fake ''
    assert_equal "$CONFORMANCE_FAKE_DRIVER" false
    assert_equal "$CONFORMANCE_DEVICE_STATUS" true
}

@test "params: params_print lists every parameter once" {
    run params_print
    assert_success
    assert_line CONFORMANCE_DRIVER=gpu.fakehw.example.com
    assert_line "CONFORMANCE_UNSCHEDULABLE_REGEX=cannot allocate all claims"
    refute_line --partial CONFORMANCE_GATE_
    assert_equal "$(printf '%s\n' "${lines[@]}" | cut -d= -f1 | sort | uniq -d)" ""
}
