#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Optional node operations (KEP-5945): fakehw's virtual GPUs need no node
# preparation, so the plugin publishes them in slices of their own with
# skipNodeOperations ["*"], and the kubelet (1.37, gate
# DRAOptionalNodeOperations) makes no NodePrepareResources call for claims
# that only hold them.  A kubelet that calls anyway (an older one, or the
# gate off) must still get a correct answer.
# shellcheck disable=SC2016,SC2154 # jq filters; $output comes from run

load ../lib/node_suite

# virtual_node: gpu-0 and gpu-2 plain, gpu-1 virtual.
virtual_node() {
    cat >"$FAKEHW_CONFIG" <<EOC
nodes:
- name: $NODE
  devices:
  - {profile: A100-SXM4-80GB}
  - {profile: A100-SXM4-80GB, virtual: true}
  - {profile: A100-SXM4-80GB}
EOC
    node_start 3
}

@test "optional node operations: virtual GPUs get a slice of their own that skips node operations [fakehw]" {
    virtual_node
    assert_equal "$(device_attr gpu-1 virtual)" true
    assert_equal "$(device_attr gpu-0 virtual)" false
    run -0 slices '[.[] | {devices: [.spec.devices[].name], skip: .spec.skipNodeOperations, count: .spec.pool.resourceSliceCount}] | sort_by(.devices[0]) | .[]'
    assert_line --index 0 '{"devices":["gpu-0","gpu-2"],"skip":null,"count":2}'
    assert_line --index 1 '{"devices":["gpu-1"],"skip":["*"],"count":2}'
}

@test "optional node operations: a kubelet that calls anyway gets a normal prepare and unprepare [fakehw]" {
    virtual_node
    claim_new c1 gpu-1
    run -0 prepare_claims "$(ref c1)"
    assert_output --partial "device=gpu-1 "
    assert_output --partial "cdi=k8s.$DRIVER/gpu="
    run -0 unprepare_claims "$(ref c1)"
    plugin_alive
}
