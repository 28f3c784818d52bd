#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The plugin's nvidia personality (docs/nvidia.md) on a real fakehw mount:
# NVIDIA's driver name, device names, attributes, capacities and counters in
# the slices; prepare, health and claim status under those names while the
# CDI specs mount the tree's directories.
# White-box: it starts fakehw-kubelet-plugin with --personality, so it lives
# in bench/, not in the conformance kit (whose node environment it uses).
# shellcheck disable=SC2016,SC2154 # jq filters; $output comes from run

export NODE_DRIVER_NAME=gpu.nvidia.com
load ../../conformance/node/lib/node_suite
load ../../conformance/node/lib/partitions

setup() {
    node_setup
    # One A100 in dynamic MIG mode, one H100 cut into two 3g.40gb, a T4.
    mig_config 1 1
    # gpu-0 and its 18 placements, the H100's two instances, the T4.
    node_start 22 --personality nvidia --driver-name ''
}

teardown() {
    node_teardown
}

@test "nvidia: gpu.nvidia.com with NVIDIA's device names [fake-driver,fakehw]" {
    assert_equal "$(registration_value driver)" gpu.nvidia.com
    run -0 slices '[.[].spec.devices[]?.name | select(test("^gpu-0-mig") | not)]'
    assert_output '["gpu-0","gpu-2","gpu-1-mig-3g40gb-9-0","gpu-1-mig-3g40gb-9-4"]'
    run -0 slices '[.[].spec.devices[]?.name | select(test("^gpu-0-mig-(1g10gb-19|7g80gb-0|3g40gb-9|2g20gb-14)-"))] | sort'
    assert_output "$(jq -c . <<<'["gpu-0-mig-1g10gb-19-0","gpu-0-mig-1g10gb-19-1","gpu-0-mig-1g10gb-19-2",
        "gpu-0-mig-1g10gb-19-3","gpu-0-mig-1g10gb-19-4","gpu-0-mig-1g10gb-19-5","gpu-0-mig-1g10gb-19-6",
        "gpu-0-mig-2g20gb-14-0","gpu-0-mig-2g20gb-14-2","gpu-0-mig-2g20gb-14-4",
        "gpu-0-mig-3g40gb-9-0","gpu-0-mig-3g40gb-9-4","gpu-0-mig-7g80gb-0-0"]')"
}

@test "nvidia: NVIDIA's attributes, capacities and counters [fake-driver,fakehw]" {
    # A whole GPU without MIG: the real driver's attribute set, memory only.
    run -0 slices '.[].spec.devices[]? | select(.name == "gpu-2") | [(.attributes | keys), .attributes.brand.string, .attributes.type.string, (.capacity | keys)]'
    assert_output '[["architecture","brand","cudaComputeCapability","cudaDriverVersion","driverVersion","productName","resource.kubernetes.io/numaNode","resource.kubernetes.io/pciBusID","resource.kubernetes.io/pcieRoot","type","uuid"],"Nvidia","gpu",["memory"]]'
    # A static instance: parentUUID, profile, uuid; engines and its memory slices.
    run -0 slices '.[].spec.devices[]? | select(.name == "gpu-1-mig-3g40gb-9-4") | [.attributes.type.string, .attributes.profile.string, (.attributes.uuid.string | startswith("MIG-")), (.capacity | map_values(.value) | to_entries | sort_by(.key) | from_entries)]'
    assert_output '["mig","3g.40gb",true,{"copyEngines":"3","decoders":"2","encoders":"0","jpegEngines":"0","memory":"40779Mi","memorySlice4":"1","memorySlice5":"1","memorySlice6":"1","memorySlice7":"1","multiprocessors":"48","ofaEngines":"0"}]'
    # A placement: no uuid yet; it consumes its engines and memory slices.
    run -0 slices '.[].spec.devices[]? | select(.name == "gpu-0-mig-2g20gb-14-2") | [has("uuid"), (.attributes | has("uuid")), (.consumesCounters[0].counters | map_values(.value) | to_entries | sort_by(.key) | from_entries)]'
    assert_output '[false,false,{"copy-engines":"2","decoders":"1","encoders":"0","jpeg-engines":"0","memory":"20Gi","memory-slice-2":"1","memory-slice-3":"1","multiprocessors":"28","ofa-engines":"0"}]'
    # The whole dynamic GPU offers its largest partition's values.
    run -0 slices '.[].spec.sharedCounters[]? | select(.name == "gpu-0-counter-set") | .counters | [.multiprocessors.value, ."copy-engines".value, .decoders.value, ."jpeg-engines".value, ."ofa-engines".value, .memory.value, length]'
    assert_output '["98","7","5","1","1","80Gi",15]'
    run -0 slices '.[].spec.devices[]? | select(.name == "gpu-0") | .capacity | map_values(.value) | to_entries | sort_by(.key) | from_entries'
    assert_output '{"copyEngines":"7","decoders":"5","encoders":"0","jpegEngines":"1","memory":"80Gi","multiprocessors":"98","ofaEngines":"1"}'
}

@test "nvidia: a MIG device prepares under its NVIDIA name and mounts its tree directory [fake-driver,fakehw]" {
    claim_new c1 gpu-1-mig-3g40gb-9-4
    run -0 prepare_claims "$(ref c1)"
    assert_output --partial "device=gpu-1-mig-3g40gb-9-4"
    local spec
    spec=$(ls "$CDI_ROOT"/k8s.gpu.nvidia.com-gpu_*.json)
    run -0 jq -r '.devices[0].containerEdits.mounts[].hostPath' "$spec"
    assert_output "$(printf '%s\n' "$MNT/devices/gpu-1-mig-3g40gb-4" "$MNT/devices/gpu-1")"
    wait_for 10 "the claim's device status" eval '[[ $(claim_condition c1 gpu-1-mig-3g40gb-9-4) == "True DeviceHealthy" ]]'
    # A flip of the tree's gpu-1 reaches its instances under their names.
    fakehw_flip gpu-1 unhealthy "XID 79"
    wait_for 10 "the taints" eval '[[ $(slices "[.[].spec.devices[]? | select(.taints) | .name]") == "[\"gpu-1-mig-3g40gb-9-0\",\"gpu-1-mig-3g40gb-9-4\"]" ]]'
    wait_for 10 "the condition" eval '[[ $(claim_condition c1 gpu-1-mig-3g40gb-9-4) == False* ]]'
    run -0 unprepare_claims "$(ref c1)"
}

@test "nvidia: NVIDIA's opaque configs reach the container's env, and bad ones are refused [fake-driver,fakehw]" {
    local mps ts bad spec uuid
    mps='{"source":"FromClaim","requests":["gpu"],"opaque":{"driver":"gpu.nvidia.com","parameters":{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS","mpsConfig":{"defaultActiveThreadPercentage":25,"defaultPinnedDeviceMemoryLimit":"1Gi"}}}}}'
    claim_create c1 && claim_allocate_results c1 "$(results gpu=gpu-2)" "[$mps]"
    run -0 prepare_claims "$(ref c1)"
    spec=$(grep -l "${CLAIM_UIDS[c1]}" "$CDI_ROOT"/k8s.gpu.nvidia.com-gpu_*.json)
    uuid=$(slices '.[].spec.devices[]? | select(.name == "gpu-2") | .attributes.uuid.string' -r)
    run -0 jq -r '.devices[0].containerEdits.env[]' "$spec"
    assert_line CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps
    assert_line CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25
    assert_line "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=$uuid=1024M"
    assert_line --regexp '^FAKEHW_DEVICE_[0-9]+_SHARING_STRATEGY=MPS$'
    # The claim's device status records what the config made of the device.
    wait_for 10 "the config in the device status" eval '[[ $(claim_get c1 | jq -c ".status.devices[0].data.config") != null ]]'
    run -0 eval 'claim_get c1 | jq -c ".status.devices[0].data.config"'
    assert_output '{"kind":"GpuConfig","source":"FromClaim","entry":0,"sharing":{"strategy":"MPS","mpsConfig":{"multiUser":false,"defaultActiveThreadPercentage":25,"pinnedDeviceMemoryLimit":"1024M"}}}'

    # TimeSlicing on a MIG device keeps no interval; on a GPU it does.
    ts='{"source":"FromClass","requests":[],"opaque":{"driver":"gpu.nvidia.com","parameters":{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"interval":"Short"}}}}}'
    claim_create c2 && claim_allocate_results c2 "$(results gpu=gpu-0)" "[$ts]"
    run -0 prepare_claims "$(ref c2)"
    spec=$(grep -l "${CLAIM_UIDS[c2]}" "$CDI_ROOT"/k8s.gpu.nvidia.com-gpu_*.json)
    run -0 jq -r '.devices[0].containerEdits.env[]' "$spec"
    assert_line --regexp '^FAKEHW_DEVICE_[0-9]+_TIMESLICE_INTERVAL=Short$'
    refute_line --partial CUDA_MPS

    # A GpuConfig named for a MIG device's request, and an unknown field.
    bad='{"source":"FromClaim","requests":["gpu"],"opaque":{"driver":"gpu.nvidia.com","parameters":{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig"}}}'
    claim_create c3 && claim_allocate_results c3 "$(results gpu=gpu-1-mig-3g40gb-9-0)" "[$bad]"
    run prepare_claims "$(ref c3)"
    assert_output --partial "claim $NODE_NS/c3"
    assert_output --partial "config[0] (FromClaim): a GpuConfig cannot apply to device gpu-1-mig-3g40gb-9-0 of type mig (request gpu)"
    bad=${ts/\"interval\"/\"intervall\"}
    claim_create c4 && claim_allocate_results c4 "$(results gpu=gpu-2)" "[$bad]"
    run prepare_claims "$(ref c4)"
    assert_output --partial 'config[0] (FromClass): parameters: unknown field "sharing.timeSlicingConfig.intervall"'
}
