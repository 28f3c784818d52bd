#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The container-runtime harness (lib/runtime.bash) against hand-written CDI
# specs shaped like the kubelet plugin's (driver/prepare/cdi_spec.h): podman's
# own CDI code must inject the env, the device nodes and the read-only mounts;
# fakegpu-smi, mounted from the host, must list exactly the injected GPUs; and
# podman must refuse unknown device ids and specs of a cdiVersion it does not
# know.  Skips with the reason where podman cannot run (lib/runtime.bash).
# shellcheck disable=SC2154 # $output, $stderr and $status are set by bats' run

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert
load ../lib/runtime
# Plain-directory fakehw trees, as the fakegpu-smi tests build them.
load ../../../fakehw/smi/tests/tree_helpers

KIND=k8s.gpu.fakehw.example.com/gpu
# A claim UID starts with a digit as often as not; such CDI device names need
# cdiVersion 0.5.0, which is what the plugin writes.
CLAIM_UID=0e5a1c2b-7d3f-4a69-8b21-5c4d3e2f1a07
U0=GPU-4a1f5c2e-8d3b-4f6a-9e7c-1b2d3e4f5a60
U1=GPU-0b6e2d41-7c9a-4e35-8f12-3a4b5c6d7e81

setup_file() {
    runtime_setup_file
}

setup() {
    runtime_require
    SMI=${FAKEHW_BIN:?FAKEHW_BIN must name the build bin directory}/fakegpu-smi
    [[ -x $SMI ]] || fail "no fakegpu-smi at $SMI: build it first"
    ROOT=$BATS_TEST_TMPDIR/fakehw # the node's fakehw tree (--fakehw-root)
    DEV=$BATS_TEST_TMPDIR/dev     # fakehw --dev-dir
    CDI=$BATS_TEST_TMPDIR/cdi     # the plugin's --cdi-root
    SPEC=$CDI/k8s.gpu.fakehw.example.com-gpu_$CLAIM_UID.json
    make_tree "$ROOT"
    make_device "$ROOT" gpu-0 0 "$U0"
    make_device "$ROOT" gpu-1 1 "$U1" "NVIDIA H100 80GB HBM3" 85520809984
    mkdir -p "$DEV" "$CDI"
    # Char devices with the null device's numbers, as fakehw makes them.
    local n
    for n in 0 1; do
        mknod -m 0666 "$DEV/fakegpu$n" c 1 3
        echo "$DEV/fakegpu$n" >"$ROOT/devices/gpu-$n/devicePath"
    done
}

teardown() {
    runtime_cleanup
}

# write_claim_spec VERSION BIND DEVICE...: $SPEC for a claim that holds the
# fakehw devices DEVICE... (gpu-N), with the plugin's edits: claim-wide env
# and the fakegpu-smi mount; per device env, its node and its directory
# mounted read-only with option BIND ("bind" or "rbind").
write_claim_spec() {
    local version=$1 bind=$2 name d devices='[]' visible=''
    shift 2
    for name; do
        d=$ROOT/devices/$name
        visible+=${visible:+,}$(<"$d/uuid")
        devices=$(jq -c --arg cdi "$CLAIM_UID-$name" --arg dev "$name" --arg dir "$d" \
            --arg index "$(<"$d/index")" --arg uuid "$(<"$d/uuid")" \
            --arg node "/dev/fakegpu$(<"$d/minor")" --arg host "$(<"$d/devicePath")" --arg bind "$bind" \
            '. + [{name: $cdi, containerEdits: {
                env: ["FAKEHW_DEVICE_\($index)_UUID=\($uuid)", "FAKEHW_DEVICE_\($index)_NAME=\($dev)"],
                deviceNodes: [{path: $node, hostPath: $host}],
                mounts: [{hostPath: $dir, containerPath: $dir, options: ["ro", $bind]}]}}]' <<<"$devices")
    done
    jq -n --arg version "$version" --arg kind "$KIND" --arg uid "$CLAIM_UID" --arg root "$ROOT" \
        --arg visible "$visible" --arg smi "$SMI" --argjson devices "$devices" \
        '{cdiVersion: $version, kind: $kind,
          containerEdits: {
            env: ["DRA_RESOURCE_DRIVER_NAME=gpu.fakehw.example.com", "DRA_CLAIM_NAMESPACE=default",
                  "DRA_CLAIM_NAME=gpu-claim", "DRA_CLAIM_UID=\($uid)", "FAKEHW_ROOT=\($root)",
                  "FAKEHW_VISIBLE_DEVICES=\($visible)"],
            mounts: [{hostPath: $smi, containerPath: "/usr/bin/fakegpu-smi", options: ["ro", "bind"]}]},
          devices: $devices}' >"$SPEC"
}

@test "the spec's env reaches the container, and only with its device" {
    write_claim_spec 0.5.0 bind gpu-0
    run --separate-stderr run_with_cdi "$CDI" "$KIND=$CLAIM_UID-gpu-0" -- env
    assert_success
    assert_line "DRA_RESOURCE_DRIVER_NAME=gpu.fakehw.example.com"
    assert_line "DRA_CLAIM_NAMESPACE=default"
    assert_line "DRA_CLAIM_NAME=gpu-claim"
    assert_line "DRA_CLAIM_UID=$CLAIM_UID"
    assert_line "FAKEHW_ROOT=$ROOT"
    assert_line "FAKEHW_VISIBLE_DEVICES=$U0"
    assert_line "FAKEHW_DEVICE_0_UUID=$U0"
    assert_line "FAKEHW_DEVICE_0_NAME=gpu-0"
    assert_equal "$stderr" ""
    # No CDI device, no edits; and the host's environment stays outside.
    FAKEHW_VISIBLE_DEVICES=from-the-host run run_with_cdi "$CDI" -- env
    assert_success
    refute_line --regexp '^(FAKEHW_|DRA_)'
    # --rm: nothing is left behind.
    run runtime_leftovers
    assert_output ""
}

@test "/dev/fakegpu0 is a char device 1:3 that the container may use; no other node" {
    write_claim_spec 0.5.0 bind gpu-0
    # shellcheck disable=SC2016 # expanded in the container
    run run_with_cdi "$CDI" "$KIND=$CLAIM_UID-gpu-0" -- sh -c '
        stat -c "%F %t:%T" /dev/fakegpu0
        echo data >/dev/fakegpu0 && echo "write ok"
        echo "read $(wc -c </dev/fakegpu0) bytes"
        test -e /dev/fakegpu1 || echo "no /dev/fakegpu1"'
    assert_success
    assert_output "character special file 1:3
write ok
read 0 bytes
no /dev/fakegpu1"
}

@test "the device's directory is mounted readable and read-only at its host path" {
    write_claim_spec 0.5.0 bind gpu-0
    # shellcheck disable=SC2016 # expanded in the container
    run run_with_cdi "$CDI" "$KIND=$CLAIM_UID-gpu-0" -- sh -c '
        cat "$1/devices/gpu-0/uuid" "$1/devices/gpu-0/productName"
        ls "$1/devices"
        touch "$1/devices/gpu-0/probe" 2>&1 || echo "touch failed: $?"
        { echo x >"$1/devices/gpu-0/health"; } 2>/dev/null || echo "health write failed: $?"
        grep " $1/devices/gpu-0 " /proc/mounts | cut -d" " -f4 | cut -d, -f1' sh "$ROOT"
    assert_success
    assert_output "$U0
NVIDIA A100-SXM4-80GB
gpu-0
touch: $ROOT/devices/gpu-0/probe: Read-only file system
touch failed: 1
health write failed: 1
ro"
    [[ ! -e $ROOT/devices/gpu-0/probe ]]
    assert_equal "$(<"$ROOT/devices/gpu-0/health")" healthy
}

@test "fakegpu-smi -L from the read-only host binary lists exactly the claimed GPU" {
    write_claim_spec 0.5.0 bind gpu-1
    run --separate-stderr run_with_cdi "$CDI" "$KIND=$CLAIM_UID-gpu-1" -- /usr/bin/fakegpu-smi -L
    assert_success
    assert_output "GPU 0: NVIDIA H100 80GB HBM3 (UUID: $U1)"
    assert_equal "$stderr" ""
    run run_with_cdi "$CDI" "$KIND=$CLAIM_UID-gpu-1" -- sh -c ': >/usr/bin/fakegpu-smi'
    assert_failure
    assert_output --partial "Read-only file system"
    # The binary comes with the CDI device, not with the image.
    run -127 run_with_cdi "$CDI" -- /usr/bin/fakegpu-smi -L
    assert_output --partial "stat /usr/bin/fakegpu-smi: no such file or directory"
}

@test "a two-GPU claim with rbind mounts: both nodes, both GPUs in index order" {
    write_claim_spec 0.5.0 rbind gpu-1 gpu-0
    run --separate-stderr run_with_cdi "$CDI" "$KIND=$CLAIM_UID-gpu-1" "$KIND=$CLAIM_UID-gpu-0" -- sh -c '
        ls /dev | grep fakegpu
        /usr/bin/fakegpu-smi -L
        /usr/bin/fakegpu-smi --query-gpu=index,uuid,minor_number --format=csv,noheader'
    assert_success
    assert_output "fakegpu0
fakegpu1
GPU 0: NVIDIA A100-SXM4-80GB (UUID: $U0)
GPU 1: NVIDIA H100 80GB HBM3 (UUID: $U1)
0, $U0, 0
1, $U1, 1"
    assert_equal "$stderr" ""
}

@test "an unknown CDI device id fails the run with podman's error" {
    write_claim_spec 0.5.0 bind gpu-0
    # podman 4.3 exits 126: "Error: setting up CDI devices: unresolvable CDI
    # devices <id>", and starts nothing.
    run run_with_cdi "$CDI" "$KIND=$CLAIM_UID-gpu-7" -- echo started
    assert_failure
    assert_output --partial "Error: setting up CDI devices: unresolvable CDI devices $KIND=$CLAIM_UID-gpu-7"
    refute_output --partial started
    # One unknown id among known ones fails the whole container; podman 4.3
    # then names every requested id, the resolvable ones too.
    run run_with_cdi "$CDI" "$KIND=$CLAIM_UID-gpu-0" "$KIND=$CLAIM_UID-gpu-7" -- echo started
    assert_failure
    assert_output --regexp "unresolvable CDI devices .*$KIND=$CLAIM_UID-gpu-7"
    refute_output --partial started
    run runtime_leftovers
    assert_output ""
}

@test "a spec whose cdiVersion is newer than podman's CDI library is refused" {
    write_claim_spec 0.5.0 bind gpu-0
    run run_with_cdi "$CDI" "$KIND=$CLAIM_UID-gpu-0" -- echo started
    assert_success
    assert_output started
    # The same spec one version up.  Podman drops a spec it cannot load, so
    # the device is simply not there; only its debug log says why.
    write_claim_spec 0.6.0 bind gpu-0
    FAKEHW_PODMAN_LOG_LEVEL=debug run --separate-stderr run_with_cdi "$CDI" "$KIND=$CLAIM_UID-gpu-0" -- echo started
    if ((status == 0)); then
        skip "$(podman --version) accepts cdiVersion 0.6.0 (its CDI library is newer than v0.5)"
    fi
    assert_failure
    refute_output --partial started
    [[ $stderr == *"Error: setting up CDI devices: unresolvable CDI devices $KIND=$CLAIM_UID-gpu-0"* ]]
    [[ $stderr == *'invalid CDI Spec: invalid version \"0.6.0\"'* ]]
}

@test "run_with_cdi: usage errors; a container past its timeout is killed and removed" {
    run run_with_cdi "$CDI" "$KIND=$CLAIM_UID-gpu-0" echo no-separator
    assert_failure 2
    assert_output "run_with_cdi: expected -- and a command after the CDI device ids"
    run run_with_cdi "$CDI" --
    assert_failure 2
    run run_with_cdi "$BATS_TEST_TMPDIR/no-such-dir" -- true
    assert_failure 2
    assert_output "run_with_cdi: CDI spec directory $BATS_TEST_TMPDIR/no-such-dir does not exist"
    # sleep as PID 1 ignores SIGTERM: the harness has to kill and remove.
    FAKEHW_RUNTIME_TIMEOUT=1 run run_with_cdi "$CDI" -- sleep 60
    assert_failure
    assert_output --partial "run_with_cdi: the container did not finish within 1s"
    run runtime_leftovers
    assert_output ""
}
