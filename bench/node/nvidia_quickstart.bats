#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The claims of NVIDIA's quickstart specs (docs/nvidia.md#the-quickstart-specs),
# as the scheduler would allocate them, through the nvidia personality's
# prepare: every request, class and opaque config those specs carry is
# accepted and reaches the CDI spec and the claim's device status.  The
# claims are this file's own, in the specs' shapes; the node is the one
# conformance/quickstart/fakehw.yaml describes (8 A100-SXM4-40GB, 0-3 with
# MIG half-balanced).
# White-box: it starts fakehw-kubelet-plugin with --personality, so it lives
# in bench/, not in the conformance kit (whose node environment it uses).
# shellcheck disable=SC2016,SC2154 # jq filters; $output comes from run

export NODE_DRIVER_NAME=gpu.nvidia.com
load ../../conformance/node/lib/node_suite

setup() {
    node_setup
    cp "$BATS_TEST_DIRNAME/../../conformance/quickstart/fakehw.yaml" "$FAKEHW_CONFIG"
    # gpu-4 .. gpu-7 and the four MIG devices of each of gpu-0 .. gpu-3.
    node_start 20 --personality nvidia --driver-name ''
}

teardown() {
    node_teardown
}

# quickstart_claim NAME REQUESTS_JSON [CONSTRAINTS_JSON]: a claim of these
# requests (v1 "exactly" requests, as the specs write them).
quickstart_claim() {
    claim_post "$1" "$(printf '{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"%s"},"spec":{"devices":{"requests":%s,"constraints":%s}}}' \
        "$1" "$2" "${3:-[]}")"
}

# request NAME CLASS [CEL]
request() {
    if [[ -n ${3-} ]]; then
        printf '{"name":"%s","exactly":{"deviceClassName":"%s","selectors":[{"cel":{"expression":"%s"}}]}}' "$1" "$2" "$3"
    else
        printf '{"name":"%s","exactly":{"deviceClassName":"%s"}}' "$1" "$2"
    fi
}

# gpu_config REQUEST SHARING_JSON: a claim's opaque GpuConfig for REQUEST.
gpu_config() {
    printf '{"source":"FromClaim","requests":["%s"],"opaque":{"driver":"gpu.nvidia.com","parameters":{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":%s}}}' "$1" "$2"
}

# device_env CLAIM DEVICE: the CDI env of DEVICE in CLAIM's spec.
device_env() {
    local spec
    spec=$(grep -l "${CLAIM_UIDS[$1]}" "$CDI_ROOT"/k8s.gpu.nvidia.com-gpu_*.json)
    jq -r --arg d "$2" '.devices[] | select(.containerEdits.env | any(endswith("_NAME=" + $d))) | .containerEdits.env[]' "$spec"
}

uuid_of() {
    slices '.[].spec.devices[]? | select(.name == $d) | .attributes.uuid.string' -r --arg d "$1"
}

@test "quickstart shapes: one GPU per claim, from a template or shared by pods (gpu-test1, 2, 3) [fake-driver,fakehw]" {
    quickstart_claim c1 "[$(request gpu gpu.nvidia.com)]"
    claim_allocate_results c1 "$(results gpu=gpu-4)"
    run -0 prepare_json "$(ref c1)"
    assert_equal "$(jq -c '[.claims[].devices[] | [.requests, .device]]' <<<"$output")" '[[["gpu"],"gpu-4"]]'
    wait_for 10 "c1 Ready" eval '[[ $(claim_condition c1 gpu-4) == "True DeviceHealthy" ]]'
    # The same claim prepared again for a second pod: the same answer.
    run -0 prepare_json "$(ref c1)"
    assert_equal "$(jq -c '[.claims[].devices[].device]' <<<"$output")" '["gpu-4"]'
    run -0 jq -r '.containerEdits.mounts[].containerPath' "$(grep -l "${CLAIM_UIDS[c1]}" "$CDI_ROOT"/k8s.gpu.nvidia.com-gpu_*.json)"
    assert_line /usr/bin/nvidia-smi
}

@test "quickstart shapes: four MIG devices of one GPU on four requests with a parentUUID constraint (gpu-test4) [fake-driver,fakehw]" {
    local reqs
    reqs="[$(request mig-1g-5gb-0 mig.nvidia.com "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"),$(
        request mig-1g-5gb-1 mig.nvidia.com "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"),$(
        request mig-2g-10gb mig.nvidia.com "device.attributes['gpu.nvidia.com'].profile == '2g.10gb'"),$(
        request mig-3g-20gb mig.nvidia.com "device.attributes['gpu.nvidia.com'].profile == '3g.20gb'")]"
    quickstart_claim c4 "$reqs" '[{"requests":[],"matchAttribute":"gpu.nvidia.com/parentUUID"}]'
    # What the scheduler picks: the profiles the selectors name, on gpu-2.
    run -0 slices '[.[].spec.devices[]? | select(.name | startswith("gpu-2-mig-")) | [.name, .attributes.profile.string]]' -c
    assert_output '[["gpu-2-mig-1g5gb-19-0","1g.5gb"],["gpu-2-mig-1g5gb-19-1","1g.5gb"],["gpu-2-mig-2g10gb-14-2","2g.10gb"],["gpu-2-mig-3g20gb-9-4","3g.20gb"]]'
    claim_allocate_results c4 "$(results mig-1g-5gb-0=gpu-2-mig-1g5gb-19-0 mig-1g-5gb-1=gpu-2-mig-1g5gb-19-1 \
        mig-2g-10gb=gpu-2-mig-2g10gb-14-2 mig-3g-20gb=gpu-2-mig-3g20gb-9-4)"
    run -0 prepare_json "$(ref c4)"
    assert_equal "$(jq -c '[.claims[].devices[] | [.requests[0], .device]]' <<<"$output")" \
        '[["mig-1g-5gb-0","gpu-2-mig-1g5gb-19-0"],["mig-1g-5gb-1","gpu-2-mig-1g5gb-19-1"],["mig-2g-10gb","gpu-2-mig-2g10gb-14-2"],["mig-3g-20gb","gpu-2-mig-3g20gb-9-4"]]'
    # Each MIG device's own tree directory is mounted, with its GPU's.
    run -0 device_env c4 gpu-2-mig-2g10gb-14-2
    assert_line --regexp '^FAKEHW_DEVICE_[0-9]+_UUID=MIG-'
    wait_for 10 "the four Ready" eval '[[ $(claim_get c4 | jq "[.status.devices[]? | select(.conditions[0].status == \"True\")] | length") == 4 ]]'
}

@test "quickstart shapes: TimeSlicing Long and MPS 50% with 10Gi on two requests of one claim (gpu-test5, 6, gpu-test-mps) [fake-driver,fakehw]" {
    local ts mps
    ts=$(gpu_config ts-gpu '{"strategy":"TimeSlicing","timeSlicingConfig":{"interval":"Long"}}')
    mps=$(gpu_config mps-gpu '{"strategy":"MPS","mpsConfig":{"defaultActiveThreadPercentage":50,"defaultPinnedDeviceMemoryLimit":"10Gi"}}')
    quickstart_claim c5 "[$(request ts-gpu gpu.nvidia.com),$(request mps-gpu gpu.nvidia.com)]"
    claim_allocate_results c5 "$(results ts-gpu=gpu-4 mps-gpu=gpu-5)" "[$ts,$mps]"
    run -0 prepare_json "$(ref c5)"
    assert_equal "$(jq -c '[.claims[].devices[] | [.requests[0], .device]]' <<<"$output")" '[["ts-gpu","gpu-4"],["mps-gpu","gpu-5"]]'
    run -0 device_env c5 gpu-4
    assert_line --regexp '^FAKEHW_DEVICE_[0-9]+_SHARING_STRATEGY=TimeSlicing$'
    assert_line --regexp '^FAKEHW_DEVICE_[0-9]+_TIMESLICE_INTERVAL=Long$'
    refute_line --partial CUDA_MPS
    run -0 device_env c5 gpu-5
    assert_line --regexp '^FAKEHW_DEVICE_[0-9]+_SHARING_STRATEGY=MPS$'
    assert_line CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps
    assert_line CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
    assert_line "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=$(uuid_of gpu-5)=10240M"
    wait_for 10 "the configs in the device status" eval '[[ $(claim_get c5 | jq "[.status.devices[]?.data.config] | length") == 2 ]]'
    run -0 eval 'claim_get c5 | jq -c "[.status.devices[] | [.device, .data.config.sharing.strategy, .data.config.sharing.timeSlicingConfig.interval, .data.config.sharing.mpsConfig.defaultActiveThreadPercentage]]"'
    assert_output '[["gpu-4","TimeSlicing","Long",null],["gpu-5","MPS",null,50]]'
}
