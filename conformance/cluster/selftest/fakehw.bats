#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The fake-driver helpers against the fake cluster: what a container sees
# (fakegpu-smi, env), health flips through the node's driver pod, and the
# teardown that flips a device back and waits for the driver to publish it
# healthy.  The fake kubectl stands in for fakehw and the driver: a flip
# changes the device's taint in the fixture slices.

# Tests set suite parameters as globals that the sourced helpers read.
# shellcheck disable=SC2034
load selftest

setup() {
    selftest_setup
    cp "$SELFTEST_DIR"/fixtures/test-{pods,claims}.json "$FAKE_CLUSTER/"
    mkdir -p "$FAKE_CLUSTER/smi" "$FAKE_CLUSTER/env"
    # Pod "ready" holds worker-1/gpu-2 (claim ready-gpu-x7k2p).
    printf 'GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-a0000002-0000-4000-8000-000000000002)\n' \
        >"$FAKE_CLUSTER/smi/ready-ctr.txt"
    printf 'FAKEHW_VISIBLE_DEVICES=GPU-a0000002-0000-4000-8000-000000000002\nEMPTY=\n' >"$FAKE_CLUSTER/env/ready-ctr.env"
    CONFORMANCE_FAKE_DRIVER=true
}

@test "fake driver: the GPUs a container sees match its claim" {
    run container_gpu_uuids ns ready ctr
    assert_output GPU-a0000002-0000-4000-8000-000000000002
    run allocated_uuids ns ready-gpu-x7k2p
    assert_output GPU-a0000002-0000-4000-8000-000000000002
    run assert_container_sees_claim ns ready ctr ready-gpu-x7k2p
    assert_success
    run container_env ns ready ctr FAKEHW_VISIBLE_DEVICES
    assert_output GPU-a0000002-0000-4000-8000-000000000002
    run container_env ns ready ctr EMPTY
    assert_success
    assert_output ""
    run container_env ns ready ctr VISIBLE
    assert_failure
}

@test "fake driver: a container that sees another GPU is reported with both lists" {
    printf 'GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-a0000000-0000-4000-8000-000000000000)\nGPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-a0000001-0000-4000-8000-000000000001)\n' \
        >"$FAKE_CLUSTER/smi/ready-ctr.txt"
    run container_gpu_uuids ns ready ctr
    assert_output $'GPU-a0000000-0000-4000-8000-000000000000\nGPU-a0000001-0000-4000-8000-000000000001'
    run assert_container_sees_claim ns ready ctr ready-gpu-x7k2p
    assert_failure
    assert_output "container ctr of pod ns/ready sees GPUs [GPU-a0000000-0000-4000-8000-000000000000 GPU-a0000001-0000-4000-8000-000000000001], but claim ready-gpu-x7k2p holds [GPU-a0000002-0000-4000-8000-000000000002]"
}

@test "fake driver: a flip goes to the fakehw container of the node's driver pod" {
    run driver_pod_on_node worker-2
    assert_output fakehw-dra-fghij
    fakehw_flip worker-2 gpu-1 unhealthy "XID 79: GPU has fallen off the bus"
    run kubectl_calls
    assert_line "exec -n fakehw-dra fakehw-dra-fghij -c fakehw -- /usr/local/bin/fakehw flip --mount /var/run/fakehw gpu-1 unhealthy --reason XID 79: GPU has fallen off the bus"
    run fakehw_health worker-2 gpu-1
    assert_output unhealthy
    run device_has_unhealthy_taint worker-2 gpu-1
    assert_success
    run driver_pod_on_node worker-3
    assert_failure
    assert_output --partial "no running driver pod on node worker-3"
}

@test "fake driver: flip_unhealthy makes teardown restore the device and wait for it" {
    flip_unhealthy worker-1 gpu-3
    run device_marked_unhealthy worker-1 gpu-3
    assert_success
    run run_deferred
    assert_success
    run fakehw_health worker-1 gpu-3
    assert_output healthy
    run device_back_to_healthy worker-1 gpu-3
    assert_success
    # A device that is already healthy is left alone.
    : >"$FAKE_CLUSTER/calls.log"
    run fakehw_restore_healthy worker-1 gpu-3
    assert_success
    run grep -c 'fakehw flip' "$FAKE_CLUSTER/calls.log"
    assert_output 0
    # A device published under another name than its tree's: the wait is
    # for the published one.
    fakehw_flip worker-1 gpu-3 unhealthy "XID 79"
    CONFORMANCE_HEALTH_TIMEOUT=1 run fakehw_restore_healthy worker-1 gpu-3 gpu-7
    assert_failure
    assert_output --partial "device worker-1/gpu-7 is not published"
    fakehw_flip worker-1 gpu-3 unhealthy "XID 79"
    run fakehw_restore_healthy worker-1 gpu-3 gpu-2
    assert_success
}

@test "fake driver: restoring fails, and says so, when the driver never republishes the device" {
    CONFORMANCE_HEALTH_TIMEOUT=1
    fakehw_flip worker-1 gpu-3 unhealthy "XID 79"
    # The "driver" withdraws the device instead of untainting it.
    jq '(.items[] | select(.metadata.name == "worker-1-b") | .spec.devices) |= map(select(.name != "gpu-3"))' \
        "$FAKE_CLUSTER/slices.json" >"$FAKE_CLUSTER/s" && mv "$FAKE_CLUSTER/s" "$FAKE_CLUSTER/slices.json"
    run fakehw_restore_healthy worker-1 gpu-3
    assert_failure
    assert_output --partial "timed out after 1s waiting for: worker-1/gpu-3 to be published healthy again"
    assert_output --partial "device worker-1/gpu-3 is not published"
}

# fakehw outside any pod (e.g. on the host next to a host-run plugin):
# CONFORMANCE_FAKEHW_EXEC runs the flips, split on spaces, with the node's
# name in CONFORMANCE_FAKEHW_NODE; kubectl exec is not used.
fake_host_fakehw() {
    local mount=$BATS_TEST_TMPDIR/host-tree
    mkdir -p "$BATS_TEST_TMPDIR/host-bin" "$mount/devices/gpu-1"
    echo healthy >"$mount/devices/gpu-1/health"
    cat >"$BATS_TEST_TMPDIR/host-bin/fakehw" <<'STUB'
#!/usr/bin/env bash
[[ $1 == flip && $2 == --mount && -d $3/devices/$4 ]] || { echo "no device $4 under $3" >&2; exit 1; }
printf '%s %s %s\n' "${CONFORMANCE_FAKEHW_NODE:-}" "${FAKEHW_VIA:-}" "$*" >>"$3/calls.log"
echo "$5" >"$3/devices/$4/health"
STUB
    chmod +x "$BATS_TEST_TMPDIR/host-bin/fakehw"
    CONFORMANCE_FAKEHW_BIN=$BATS_TEST_TMPDIR/host-bin/fakehw
    CONFORMANCE_FAKEHW_MOUNT=$mount
    CONFORMANCE_FAKEHW_EXEC="env FAKEHW_VIA=exec"
}

@test "fake driver: with CONFORMANCE_FAKEHW_EXEC a flip runs through that command, not kubectl exec" {
    fake_host_fakehw
    rm "$FAKE_CLUSTER/driver-pods.json"
    fakehw_flip worker-2 gpu-1 unhealthy "XID 79"
    run cat "$CONFORMANCE_FAKEHW_MOUNT/calls.log"
    assert_output "worker-2 exec flip --mount $CONFORMANCE_FAKEHW_MOUNT gpu-1 unhealthy --reason XID 79"
    run fakehw_health worker-2 gpu-1
    assert_output unhealthy
    run kubectl_calls
    refute_output --partial exec

    run fakehw_flip worker-2 gpu-9 healthy
    assert_failure
    assert_output "fakehw flip --mount $CONFORMANCE_FAKEHW_MOUNT gpu-9 healthy through CONFORMANCE_FAKEHW_EXEC (env FAKEHW_VIA=exec) for node worker-2 failed: no device gpu-9 under $CONFORMANCE_FAKEHW_MOUNT"
}

@test "fake driver: a health read from an EXIT trap after a failure reports its own status" {
    # bats runs teardown in an EXIT trap when a test fails, where a bare
    # `return` would return the failed command's status instead.
    fake_host_fakehw
    health_in_exit_trap() {
        trap 'fakehw_health worker-2 gpu-1; echo "status $?"' EXIT
        false
    }
    run health_in_exit_trap
    assert_output $'healthy\nstatus 0'
}

# A dynamic-MIG GPU on worker-2 as the nvidia personality publishes it (its
# placements under NVIDIA's names, without uuid) and a static instance with
# one, beside the snapshot of worker-2's tree, which has the tree's names.
nvidia_named_partitions() {
    jq '.items += [{spec: {driver: "gpu.fakehw.example.com", nodeName: "worker-2", pool: {name: "worker-2", generation: 1},
        devices: [
          {name: "gpu-2", attributes: {type: {string: "gpu"}, uuid: {string: "GPU-b2"}}},
          {name: "gpu-2-mig-3g40gb-9-0", attributes: {type: {string: "mig"}, parentUUID: {string: "GPU-b2"}, profile: {string: "3g.40gb"}},
           consumesCounters: [{counterSet: "gpu-2-counter-set", counters: {"memory-slice-0": {value: "1"}, "memory-slice-3": {value: "1"}, memory: {value: "40Gi"}}}]},
          {name: "gpu-2-mig-3g40gb-9-4", attributes: {type: {string: "mig"}, parentUUID: {string: "GPU-b2"}, profile: {string: "3g.40gb"}},
           consumesCounters: [{counterSet: "gpu-2-counter-set", counters: {"memory-slice-7": {value: "1"}, "memory-slice-4": {value: "1"}}}]},
          {name: "gpu-3-mig-1g10gb-19-0", attributes: {type: {string: "mig"}, uuid: {string: "MIG-s0"}, parentUUID: {string: "GPU-b3"}, profile: {string: "1g.10gb"}}}]}}]' \
        "$FAKE_CLUSTER/slices.json" >"$FAKE_CLUSTER/slices.json.new"
    mv "$FAKE_CLUSTER/slices.json.new" "$FAKE_CLUSTER/slices.json"
    mkdir -p "$FAKE_CLUSTER/snapshot"
    {
        printf 'generation 3\nnode worker-2\n'
        printf 'device gpu-0\nname gpu-0\nuuid GPU-b0000000-0000-4000-8000-000000000000\nproductName NVIDIA H100 80GB HBM3\nparent \nmigProfile \nmigPlacement \n'
        printf 'device gpu-2\nname gpu-2\nuuid GPU-b2\nparent \nmigProfile \nmigPlacement \n'
        printf 'device gpu-3\nname gpu-3\nuuid GPU-b3\nparent \nmigProfile \nmigPlacement \n'
        printf 'device gpu-2-mig-3g40gb-0\nname gpu-2-mig-3g40gb-0\nuuid MIG-d0\nparent gpu-2\nmigProfile 3g.40gb\nmigPlacement 0:4\n'
        printf 'device gpu-2-mig-3g40gb-4\nname gpu-2-mig-3g40gb-4\nuuid MIG-d4\nparent gpu-2\nmigProfile 3g.40gb\nmigPlacement 4:4\n'
        printf 'device gpu-3-mig-1g10gb-0\nname gpu-3-mig-1g10gb-0\nuuid MIG-s0\nparent gpu-3\nmigProfile 1g.10gb\nmigPlacement 0:1\n'
        printf 'end 6\n'
    } >"$FAKE_CLUSTER/snapshot/worker-2.txt"
}

@test "fake driver: fakehw_device finds the tree's name of a published device: its own, by uuid, or by GPU, profile and first memory slice" {
    nvidia_named_partitions
    run fakehw_device worker-2 worker-2 gpu-0
    assert_output gpu-0
    run kubectl_calls
    assert_line "exec -n fakehw-dra fakehw-dra-fghij -c fakehw -- cat /var/run/fakehw/snapshot"
    run fakehw_device worker-2 worker-2 gpu-2-mig-3g40gb-9-4
    assert_output gpu-2-mig-3g40gb-4
    run fakehw_device worker-2 worker-2 gpu-2-mig-3g40gb-9-0
    assert_output gpu-2-mig-3g40gb-0
    run fakehw_device worker-2 worker-2 gpu-3-mig-1g10gb-19-0
    assert_output gpu-3-mig-1g10gb-0
    # A placement the tree does not have is said so, with what was looked for.
    sed -i 's/^migPlacement 4:4$/migPlacement 2:4/' "$FAKE_CLUSTER/snapshot/worker-2.txt"
    run fakehw_device worker-2 worker-2 gpu-2-mig-3g40gb-9-4
    assert_failure
    assert_output --partial "no device of fakehw's tree on node worker-2 is worker-2/gpu-2-mig-3g40gb-9-4 (uuid none, parentUUID GPU-b2, profile 3g.40gb, first memory slice 4)"
    run fakehw_device worker-2 worker-2 gpu-7
    assert_failure
    assert_output --partial "no device gpu-7 in pool worker-2"
}
