#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Passthrough: NVIDIA's DRA driver publishes a GPU bound to vfio-pci as a
# VFIO device (attribute type "vfio", class vfio.gpu.nvidia.com), and the
# container of a claim for one gets the device node of the GPU's IOMMU
# group, /dev/vfio/<group>, and nothing of the GPU's driver (no nvidia-smi,
# no fakegpu-smi); /dev/vfio/vfio only when a VfioDeviceConfig asks for the
# IOMMU API device.  A driver that publishes no VFIO devices (the default
# personality, NVIDIA's driver without its gate PassthroughSupport, a fake
# inventory without a vfio GPU) skips them, saying so.  The fake driver's
# nvidia personality publishes fakehw's `vfio: true` GPUs so
# (conformance/cluster/fakehw-vfio.yaml has one on *-worker3).
# bats file_tags=passthrough

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

VFIO_CLASS=vfio.gpu.nvidia.com

# find_vfio_device: a node with a VFIO device of the driver.  Sets
# VFIO_NODE; skips with the reason when there is none.
find_vfio_device() {
    [[ $CONFORMANCE_DRIVER == gpu.nvidia.com ]] ||
        skip "VFIO devices are NVIDIA's (driver gpu.nvidia.com, class $VFIO_CLASS); the driver under test is $CONFORMANCE_DRIVER"
    kc get deviceclass "$VFIO_CLASS" >/dev/null 2>&1 ||
        skip "there is no DeviceClass $VFIO_CLASS (NVIDIA's chart and the nvidia-compat overlay install it)"
    local slices line
    slices=$(driver_slices) || return 1
    line=$(jq -r --arg d "$CONFORMANCE_DRIVER" "$JQ_LOOKUP"'
        [.[] | select(.spec.nodeName != null) | .spec.nodeName as $n | .spec.devices[]? | select((lookup(.attributes; "type") | .string?) == "vfio")
         | $n] | first // empty' <<<"$slices") || return 1
    [[ -n $line ]] || skip "the driver publishes no VFIO devices (NVIDIA's driver: the gate PassthroughSupport and a GPU it may bind to vfio-pci; the fake driver: the nvidia personality and a fakehw GPU with vfio: true, conformance/cluster/fakehw-vfio.yaml)"
    VFIO_NODE=$line
}

# container_vfio_nodes NS POD: "<name> <char|other>" for each entry of the
# container's /dev/vfio, sorted; nothing when there is none.
# shellcheck disable=SC2016 # the container's sh expands them
container_vfio_nodes() {
    kc exec -n "$1" "$2" -c ctr -- sh -c 'for f in /dev/vfio/*; do [ -e "$f" ] || continue
        if [ -c "$f" ]; then echo "${f#/dev/vfio/} char"; else echo "${f#/dev/vfio/} other"; fi; done' | sort
}

# assert_no_gpu_tools NS POD: neither nvidia-smi nor fakegpu-smi is there.
# shellcheck disable=SC2016 # the container's sh expands them
assert_no_gpu_tools() {
    local found
    found=$(kc exec -n "$1" "$2" -c ctr -- sh -c 'for t in nvidia-smi fakegpu-smi; do
        command -v "$t" >/dev/null 2>&1 && echo "$t"; [ -e "/usr/bin/$t" ] && echo "/usr/bin/$t"; done; true') || return 1
    [[ -z $found ]] || fail "a passed-through GPU's container must not get the GPU driver's tools; it has: $(tr '\n' ' ' <<<"$found")"
}

# run_vfio_pod POD CLAIM: a pod on the VFIO device's node using claim CLAIM.
run_vfio_pod() {
    create_from pod-tolerating POD="$1" CLAIM_SOURCE=resourceClaimName CLAIM="$2" AFFINITY="$(pin_to "$VFIO_NODE")"
    wait_pod_ready "$TEST_NAMESPACE" "$1"
}

# assert_claim_vfio NS CLAIM: its one device is a VFIO device.
assert_claim_vfio() {
    local pool device rest type
    IFS=$'\t' read -r pool device rest < <(claim_results "$1" "$2")
    [[ -n $device ]] || fail "claim $2 has no device"
    type=$(driver_slices | slice_device "$pool" "$device" | device_attribute type) || return 1
    assert_same "type of the device allocated to claim $2 ($pool/$device)" vfio "$type"
}

# requires: driver=gpu.nvidia.com
# bats test_tags=generic, nvidia-compat
@test "passthrough: a VFIO device's container gets its IOMMU group node and no GPU tools" {
    find_vfio_device
    local ns=$TEST_NAMESPACE nodes
    create_from claim CLAIM=vfio DEVICE_CLASS="$VFIO_CLASS" COUNT=1
    run_vfio_pod pod-a vfio
    assert_claim_vfio "$ns" vfio
    nodes=$(container_vfio_nodes "$ns" pod-a) || fail "listing /dev/vfio in pod-a failed"
    [[ $nodes =~ ^[0-9]+\ char$ ]] ||
        fail "/dev/vfio in the container must hold exactly the IOMMU group's character device (/dev/vfio/<group>), no /dev/vfio/vfio without enableAPIDevice; it holds: [${nodes//$'\n'/, }]"
    assert_no_gpu_tools "$ns" pod-a
}

# requires: driver=gpu.nvidia.com
# bats test_tags=generic, nvidia-compat
@test "passthrough: a VfioDeviceConfig with enableAPIDevice adds /dev/vfio/vfio" {
    find_vfio_device
    local ns=$TEST_NAMESPACE nodes
    create_from claim-vfio-config CLAIM=vfio-api DEVICE_CLASS="$VFIO_CLASS"
    run_vfio_pod pod-a vfio-api
    assert_claim_vfio "$ns" vfio-api
    nodes=$(container_vfio_nodes "$ns" pod-a) || fail "listing /dev/vfio in pod-a failed"
    grep -qx 'vfio char' <<<"$nodes" || fail "no /dev/vfio/vfio character device in the container: [${nodes//$'\n'/, }]"
    grep -qE '^[0-9]+ char$' <<<"$nodes" || fail "no /dev/vfio/<group> character device in the container: [${nodes//$'\n'/, }]"
    [[ $(wc -l <<<"$nodes") == 2 ]] || fail "/dev/vfio holds more than the group and the API device: [${nodes//$'\n'/, }]"
}
