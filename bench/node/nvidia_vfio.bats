#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# VFIO (passthrough) devices of the plugin's nvidia personality
# (docs/nvidia.md#vfio-devices) on a real fakehw mount: a GPU that fakehw
# binds to vfio-pci (`vfio: true`) is published as NVIDIA's gpu-vfio-<i>
# and not as a gpu device; prepare takes NVIDIA's VfioDeviceConfig and the
# CDI spec gives the container the group's /dev/vfio node and no smi.
# White-box (--personality), so in bench/ beside nvidia.bats.
# shellcheck disable=SC2016,SC2154 # jq filters; $output comes from run

export NODE_DRIVER_NAME=gpu.nvidia.com
load ../../conformance/node/lib/node_suite

vfio_entry() {
    printf '{"source":"%s","requests":%s,"opaque":{"driver":"gpu.nvidia.com","parameters":{"apiVersion":"resource.nvidia.com/v1beta1","kind":"VfioDeviceConfig"%s}}}' "$@"
}

setup() {
    node_setup
    # Three H100s; the second is bound to vfio-pci.
    printf 'nodes:\n- name: %s\n  devices:\n  - {profile: H100-SXM5-80GB}\n  - {profile: H100-SXM5-80GB, vfio: true}\n  - {profile: H100-SXM5-80GB}\n' \
        "$NODE" >"$FAKEHW_CONFIG"
    fakehw_start
    api_start
    plugin_start --personality nvidia --driver-name ''
    kubelet_register
    wait_pool_published 3
}

teardown() {
    node_teardown
}

@test "nvidia vfio: fakehw serves the group's node and the tree says vfio [fakehw]" {
    assert_equal "$(cat "$MNT/devices/gpu-1/vfio")" true
    assert_equal "$(cat "$MNT/devices/gpu-1/iommuGroup")" 1
    assert_equal "$(cat "$MNT/devices/gpu-1/vfioDevicePath")" "$DEV_DIR/vfio/1"
    assert_equal "$(cat "$MNT/devices/gpu-0/vfio")" false
    assert_equal "$(cat "$MNT/devices/gpu-0/vfioDevicePath")" ''
    assert_equal "$(cat "$MNT/devices/gpu-1/pciDeviceId")" 0x2330
    [[ -c $DEV_DIR/vfio/1 && -c $DEV_DIR/vfio/vfio ]]
    [[ ! -e $DEV_DIR/vfio/0 ]]
}

@test "nvidia vfio: the GPU is published as NVIDIA's VFIO device, not as a gpu [fake-driver,fakehw]" {
    run -0 slices '[.[].spec.devices[]?.name] | sort'
    assert_output '["gpu-0","gpu-2","gpu-vfio-1"]'
    local pci uuid
    pci=$(cat "$MNT/devices/gpu-1/pciBusID")
    uuid=$(python3 -c 'import sys, uuid; print(uuid.uuid5(uuid.NAMESPACE_DNS, sys.argv[1]))' "$pci")
    run -0 slices '.[].spec.devices[]? | select(.name == "gpu-vfio-1") | [(.attributes | keys), .attributes.type.string, .attributes.uuid.string, .attributes.deviceID.string, .attributes.vendorID.string, .attributes.productName.string, .attributes.iommuFDEnabled.bool, .attributes."resource.kubernetes.io/pciBusID".string, .capacity]'
    assert_output "[[\"deviceID\",\"iommuFDEnabled\",\"productName\",\"resource.kubernetes.io/numaNode\",\"resource.kubernetes.io/pciBusID\",\"resource.kubernetes.io/pcieRoot\",\"type\",\"uuid\",\"vendorID\"],\"vfio\",\"$uuid\",\"0x2330\",\"0x10de\",\"GH100 [H100 SXM5 80GB]\",false,\"$pci\",{\"addressableMemory\":{\"value\":\"256Gi\"}}]"
}

@test "nvidia vfio: prepare gives /dev/vfio/<group>, no smi, and records the config [fake-driver,fakehw]" {
    claim_new c1 gpu-vfio-1
    run -0 prepare_claims "$(ref c1)"
    assert_output --partial "device=gpu-vfio-1"
    local spec
    spec=$(grep -l "${CLAIM_UIDS[c1]}" "$CDI_ROOT"/k8s.gpu.nvidia.com-gpu_*.json)
    run -0 jq -c '[.devices[0].containerEdits.deviceNodes, .devices[0].containerEdits.mounts, .containerEdits.mounts, .containerEdits.deviceNodes]' "$spec"
    assert_output "[[{\"path\":\"/dev/vfio/1\",\"hostPath\":\"$DEV_DIR/vfio/1\"}],null,null,null]"
    run -0 jq -r '.containerEdits.env[]' "$spec"
    assert_line NVIDIA_VISIBLE_DEVICES=void
    wait_for 10 "the config in the device status" eval '[[ $(claim_get c1 | jq -c ".status.devices[0].data.config") != null ]]'
    run -0 eval 'claim_get c1 | jq -c ".status.devices[0].data.config"'
    assert_output '{"kind":"VfioDeviceConfig","iommu":{"backendPolicy":"LegacyOnly","enableAPIDevice":false}}'
    run -0 unprepare_claims "$(ref c1)"
}

@test "nvidia vfio: enableAPIDevice adds /dev/vfio/vfio; bad VfioDeviceConfigs are refused [fake-driver,fakehw]" {
    local api spec bad
    api=$(vfio_entry FromClaim '["gpu"]' ',"iommu":{"backendPolicy":"PreferIommuFD","enableAPIDevice":true}')
    claim_create c1 && claim_allocate_results c1 "$(results gpu=gpu-vfio-1)" "[$api]"
    run -0 prepare_claims "$(ref c1)"
    spec=$(grep -l "${CLAIM_UIDS[c1]}" "$CDI_ROOT"/k8s.gpu.nvidia.com-gpu_*.json)
    run -0 jq -c '.containerEdits.deviceNodes' "$spec"
    assert_output "[{\"path\":\"/dev/vfio/vfio\",\"hostPath\":\"$DEV_DIR/vfio/vfio\"}]"
    run -0 unprepare_claims "$(ref c1)"

    bad=$(vfio_entry FromClaim '["gpu"]' ',"iommu":{"backendPolicy":"IommuFD"}')
    claim_create c2 && claim_allocate_results c2 "$(results gpu=gpu-vfio-1)" "[$bad]"
    run prepare_claims "$(ref c2)"
    assert_output --partial "claim $NODE_NS/c2"
    assert_output --partial 'config[0] (FromClaim): parameters: field "iommu.backendPolicy": "IommuFD" is not one of LegacyOnly, PreferIommuFD'
    bad=$(vfio_entry FromClaim '["gpu"]' ',"iommu":{"enableAPIDevices":true}')
    claim_create c3 && claim_allocate_results c3 "$(results gpu=gpu-vfio-1)" "[$bad]"
    run prepare_claims "$(ref c3)"
    assert_output --partial 'unknown field "iommu.enableAPIDevices"'
    # A VfioDeviceConfig named for a whole GPU's request, a GpuConfig for the VFIO device's.
    bad=$(vfio_entry FromClaim '["gpu"]' '')
    claim_create c4 && claim_allocate_results c4 "$(results gpu=gpu-0)" "[$bad]"
    run prepare_claims "$(ref c4)"
    assert_output --partial 'config[0] (FromClaim): a VfioDeviceConfig cannot apply to device gpu-0 of type gpu (request gpu)'
    bad='{"source":"FromClaim","requests":["gpu"],"opaque":{"driver":"gpu.nvidia.com","parameters":{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig"}}}'
    claim_create c5 && claim_allocate_results c5 "$(results gpu=gpu-vfio-1)" "[$bad]"
    run prepare_claims "$(ref c5)"
    assert_output --partial 'config[0] (FromClaim): a GpuConfig cannot apply to device gpu-vfio-1 of type vfio (request gpu)'
}
