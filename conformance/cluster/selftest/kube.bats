#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The kubectl queries of lib/kube.bash, lib/assert.bash and lib/quantity.bash
# against fixture objects: slices of the current pool generation, the node
# the per-node scenarios pick, attribute lookups, claim and pod state,
# scheduling events, waiting, and quantities.

# Tests set suite parameters as globals that the sourced helpers read.
# shellcheck disable=SC2016,SC2030,SC2031,SC2034,SC2154
bats_require_minimum_version 1.5.0
load selftest

setup() {
    selftest_setup
    cp "$SELFTEST_DIR"/fixtures/test-{pods,claims}.json "$SELFTEST_DIR/fixtures/test-events.json" "$FAKE_CLUSTER/"
}

@test "slices: only the driver's slices of each pool's newest generation count" {
    run bash -c "source '$SUITE_DIR/lib/helpers.bash'; driver_slices | jq -r '.[].metadata.name' | sort"
    assert_output $'control-plane-a\nworker-1-a\nworker-1-b\nworker-2-a'
}

@test "slices: devices per node, most first; pools and device lists" {
    local slices
    slices=$(driver_slices)
    run node_device_counts <<<"$slices"
    assert_output $'worker-1\t4\nworker-2\t2\ncontrol-plane\t1'
    run node_devices worker-1 <<<"$slices"
    assert_output $'gpu-0\ngpu-1\ngpu-2\ngpu-3'
    run node_pool_devices worker-2 <<<"$slices"
    assert_output $'worker-2\tgpu-0\nworker-2\tgpu-1'
    run node_pool worker-1 <<<"$slices"
    assert_output worker-1
}

@test "nodes: the test node is the schedulable one with the most devices" {
    run -0 pick_node
    assert_output $'worker-1\t4'
    # Cordon worker-1: worker-2 is next; control-plane (tainted) never.
    jq '(.items[] | select(.metadata.name == "worker-1") | .spec.unschedulable) = true' "$FAKE_CLUSTER/nodes.json" >"$FAKE_CLUSTER/n"
    mv "$FAKE_CLUSTER/n" "$FAKE_CLUSTER/nodes.json"
    run pick_node
    assert_output $'worker-2\t2'
    jq '(.items[] | select(.metadata.name == "worker-2") | .status.conditions[0].status) = "False"' "$FAKE_CLUSTER/nodes.json" >"$FAKE_CLUSTER/n"
    mv "$FAKE_CLUSTER/n" "$FAKE_CLUSTER/nodes.json"
    run ! pick_node
    assert_output --partial "no schedulable node has devices of driver gpu.fakehw.example.com"
}

@test "devices: attributes by short or qualified name, with their types; capacities" {
    local dev
    dev=$(driver_slices | slice_device worker-2 gpu-1)
    assert_equal "$(device_attribute productName <<<"$dev")" "NVIDIA H100 80GB HBM3"
    assert_equal "$(device_attribute gpu.fakehw.example.com/productName <<<"$dev")" "NVIDIA H100 80GB HBM3"
    assert_equal "$(device_attribute resource.kubernetes.io/pcieRoot <<<"$dev")" pci0000:17
    assert_equal "$(device_attribute index <<<"$dev")" 1
    assert_equal "$(device_attribute_type index <<<"$dev")" int
    assert_equal "$(device_attribute_type driverVersion <<<"$dev")" version
    assert_equal "$(device_capacity memory <<<"$dev")" 81559Mi
    run ! device_attribute nosuch <<<"$dev"
    assert_output --partial "device has no attribute nosuch"
    run ! device_capacity cores <<<"$dev"
    # Attributes published fully qualified are found by their short name too.
    dev=$(jq -c '.attributes |= {"gpu.fakehw.example.com/uuid": .uuid}' <<<"$dev")
    assert_equal "$(device_attribute uuid <<<"$dev")" GPU-b0000001-0000-4000-8000-000000000001
    run ! bash -c "source '$SUITE_DIR/lib/helpers.bash'; driver_slices | slice_device worker-2 gpu-7"
    assert_output --partial "no device gpu-7 in pool worker-2"
}

@test "devices: agreeing and unique attributes decide the constraint scenarios" {
    local slices
    slices=$(driver_slices)
    # worker-1's A100s agree, worker-2's H100s agree; the control plane has one device.
    assert_equal "$(count_agreeing_groups productName <<<"$slices")" 2
    assert_equal "$(count_agreeing_groups uuid <<<"$slices")" 0
    assert_equal "$(count_agreeing_groups noSuchAttribute <<<"$slices")" 0
    assert_equal "$(attribute_unique uuid <<<"$slices")" true
    assert_equal "$(attribute_unique productName <<<"$slices")" false
    assert_equal "$(attribute_unique noSuchAttribute <<<"$slices")" false
    slices=$(jq -c '.[0].spec.devices[0].attributes |= del(.uuid)' <<<"$slices")
    assert_equal "$(attribute_unique uuid <<<"$slices")" false
}

@test "devices: taints of a device" {
    jq '(.items[] | select(.metadata.name == "worker-2-a") | .spec.devices[0].taints) =
        [{"key": "gpu.fakehw.example.com/unhealthy", "value": "XID 79", "effect": "NoSchedule", "timeAdded": "2026-01-01T00:00:00Z"}]' \
        "$FAKE_CLUSTER/slices.json" >"$FAKE_CLUSTER/s" && mv "$FAKE_CLUSTER/s" "$FAKE_CLUSTER/slices.json"
    run bash -c "source '$SUITE_DIR/lib/helpers.bash'; driver_slices | device_taints worker-2 gpu-0"
    assert_output --partial '"key":"gpu.fakehw.example.com/unhealthy"'
    run -0 device_has_unhealthy_taint worker-2 gpu-0
    run ! device_has_no_unhealthy_taint worker-2 gpu-0
    run ! device_has_unhealthy_taint worker-2 gpu-1
    assert_output "device worker-2/gpu-1 taints: []"
    run -0 device_marked_unhealthy worker-2 gpu-0
    # A device the driver withdrew counts as marked, but not as back to healthy.
    run -0 device_marked_unhealthy worker-2 gpu-5
    run ! device_back_to_healthy worker-2 gpu-5
    assert_output "device worker-2/gpu-5 is not published"
}

@test "claims: results of the driver under test only, allocation and release" {
    run claim_results ns ready-gpu-x7k2p
    assert_output $'worker-1\tgpu-2\tgpu\tfalse'
    run claim_results ns shared-claim
    assert_output $'worker-1\tgpu-0\tgpu/one\ttrue'
    run -0 claim_is_allocated ns shared-claim
    run ! claim_is_allocated ns too-many
    assert_output "claim ns/too-many is not allocated"
    run -0 claim_is_unallocated ns too-many
    run -0 claim_is_released ns released
    run ! claim_is_released ns shared-claim
    assert_output --partial 'reservedFor ["shared","ready"], allocated true'
    run claim_reserved_uids ns shared-claim
    assert_output $'uid-ready\nuid-shared'
}

@test "claims: the assertions on generated and shared claims" {
    run -0 assert_generated_claim ns ready ready-gpu-x7k2p
    run ! assert_generated_claim ns shared ready-gpu-x7k2p
    assert_output --partial "should have pod shared as controlling owner"
    run -0 assert_claim_reserved_for ns shared-claim shared ready
    run ! assert_claim_reserved_for ns shared-claim shared
    assert_output --partial "reservedFor should be pods [shared]"
    run -0 assert_claim_device_count ns ready-gpu-x7k2p 1
    run ! assert_claim_device_count ns ready-gpu-x7k2p 2
    run -0 assert_devices_on_node worker-1 $'worker-1\tgpu-2'
    run ! assert_devices_on_node worker-2 $'worker-1\tgpu-2'
    assert_output --partial "device worker-1/gpu-2 is not one of node worker-2's devices"
}

@test "pods: readiness, scheduling, generated claim names" {
    run -0 pod_is_ready ns ready
    run ! pod_is_ready ns pending
    assert_output --partial "pod pending: phase Pending, PodScheduled=False (0/3 nodes are available"
    run -0 pod_is_unscheduled ns pending
    run ! pod_is_unscheduled ns ready
    assert_output "pod ready is on node worker-1 in phase Running"
    run pod_claim_name ns ready gpu
    assert_output ready-gpu-x7k2p
    run pod_claim_name ns shared gpu
    assert_output shared-claim
    run ! pod_claim_name ns ready nosuch
    run pod_node ns ready
    assert_output worker-1
    run container_restarts ns ready ctr
    assert_output 0
}

@test "pods: the scheduler's reason is found, and must hold for the pending window" {
    run -0 pod_has_unschedulable_event ns pending
    assert_output --partial "2 cannot allocate all claims"
    run ! pod_has_unschedulable_event ns ready
    assert_output --partial "no FailedScheduling event for pod ready matching /cannot allocate all claims/"
    CONFORMANCE_PENDING_SECONDS=1 CONFORMANCE_TIMEOUT=1
    run -0 assert_pod_stays_pending ns pending
    run ! assert_pod_stays_pending ns ready
    assert_output --partial "timed out after 1s waiting for: a FailedScheduling event for pod ns/ready"
}

@test "waiting: wait_for retries until success or times out with the last answer" {
    local marker=$BATS_TEST_TMPDIR/marker
    ( sleep 1 && touch "$marker" ) &
    run -0 wait_for "the marker" 10 test -e "$marker"
    run ! wait_for "something that never happens" 1 bash -c 'echo "still no"; false'
    assert_output --partial "timed out after 1s waiting for: something that never happens"
    assert_output --partial "said: still no"
    run -0 holds_for "true stays true" 1 true
    run ! holds_for "a flip" 2 bash -c '[[ ! -e '"$marker"' ]] || { echo "marker is there"; false; }'
    assert_output --partial "expected for 2s: a flip"
    assert_output --partial "marker is there"
}

@test "objects: is_gone tells deleted from still there and from errors" {
    run ! is_gone namespace ns1
    assert_output "namespace/ns1 still exists"
    echo ns1 >"$FAKE_CLUSTER/deleted-namespaces.txt"
    run -0 is_gone namespace ns1
    # Any other error is not "gone".
    touch "$FAKE_CLUSTER/unreachable"
    run ! is_gone namespace ns1
}

@test "quantities: binary and decimal suffixes, fractions, comparisons" {
    assert_equal "$(quantity_value 80Gi)" 85899345920
    assert_equal "$(quantity_value 81559Mi)" 85520809984
    assert_equal "$(quantity_value 1.5Gi)" 1610612736
    assert_equal "$(quantity_value 40G)" 40000000000
    assert_equal "$(quantity_value 100)" 100
    assert_equal "$(quantity_value 08)" 8
    assert_equal "$(quantity_cmp 80Gi 81559Mi)" 1
    assert_equal "$(quantity_cmp 40Gi 40960Mi)" 0
    assert_equal "$(quantity_cmp 1k 1Ki)" -1
    run ! quantity_value 1.5
    assert_output --partial '"1.5" is not a whole number'
    run ! quantity_value 500m
    assert_output --partial "is not a whole-unit quantity"
    run ! quantity_value 9000000000Ei
    assert_output --partial "does not fit in 64 bits"
}

@test "kube: attribute_pair_nodes finds the nodes where a matchAttribute pair is possible and where it is not" {
    driver_slices >"$BATS_TEST_TMPDIR/d.json"
    run attribute_pair_nodes resource.kubernetes.io/numaNode possible <"$BATS_TEST_TMPDIR/d.json"
    assert_output "worker-1
worker-2"
    run attribute_pair_nodes resource.kubernetes.io/numaNode impossible <"$BATS_TEST_TMPDIR/d.json"
    assert_output ""
    # One device per NUMA node on worker-2: the pair is impossible there.
    jq '(.items[] | select(.spec.nodeName == "worker-2") | .spec.devices[1].attributes["resource.kubernetes.io/numaNode"].int) = 1' \
        "$FAKE_CLUSTER/slices.json" >"$BATS_TEST_TMPDIR/s.json"
    mv "$BATS_TEST_TMPDIR/s.json" "$FAKE_CLUSTER/slices.json"
    driver_slices >"$BATS_TEST_TMPDIR/d.json"
    run attribute_pair_nodes resource.kubernetes.io/numaNode impossible <"$BATS_TEST_TMPDIR/d.json"
    assert_output worker-2
    run attribute_pair_nodes resource.kubernetes.io/numaNode possible <"$BATS_TEST_TMPDIR/d.json"
    assert_output worker-1
    # An attribute some devices lack: no node is "impossible".
    run attribute_pair_nodes noSuchAttribute impossible <"$BATS_TEST_TMPDIR/d.json"
    assert_output ""
}

@test "kube: the extended resource name comes from the parameter or the DeviceClass" {
    CONFORMANCE_EXTENDED_RESOURCE_NAME=nvidia.com/gpu
    run class_extended_resource_name gpu.fakehw.example.com
    assert_output nvidia.com/gpu
    CONFORMANCE_EXTENDED_RESOURCE_NAME=
    mkdir -p "$FAKE_CLUSTER/deviceclasses"
    echo '{"kind":"DeviceClass","metadata":{"name":"gpu.fakehw.example.com"},"spec":{"extendedResourceName":"gpu.fakehw.example.com/gpu"}}' \
        >"$FAKE_CLUSTER/deviceclasses/gpu.fakehw.example.com.json"
    run class_extended_resource_name gpu.fakehw.example.com
    assert_output gpu.fakehw.example.com/gpu
    echo '{"kind":"DeviceClass","metadata":{"name":"gpu.fakehw.example.com"},"spec":{}}' \
        >"$FAKE_CLUSTER/deviceclasses/gpu.fakehw.example.com.json"
    run -0 class_extended_resource_name gpu.fakehw.example.com
    assert_output ""
}

@test "kube: the claim and request mappings of a pod's extended resources" {
    jq '.items += [{metadata: {name: "ext", namespace: "ns"}, spec: {nodeName: "worker-1"},
        status: {extendedResourceClaimStatus: {resourceClaimName: "ext-extended-resources-abcde",
          requestMappings: [{containerName: "ctr-a", resourceName: "nvidia.com/gpu", requestName: "container-0-request-0"},
                            {containerName: "ctr-b", resourceName: "nvidia.com/gpu", requestName: "container-1-request-0"}]}}}]' \
        "$SELFTEST_DIR/fixtures/test-pods.json" >"$FAKE_CLUSTER/test-pods.json"
    run pod_extended_claim ns ext
    assert_output ext-extended-resources-abcde
    run pod_extended_request ns ext ctr-b
    assert_output container-1-request-0
    run ! pod_extended_request ns ext ctr-c
    assert_output --partial "container ctr-c: 0 request mappings"
}

@test "claims: allocation times in Unix seconds, a newer allocation, an unbound pod" {
    jq '.items += [{"metadata": {"name": "timed"}, "status": {"allocation": {"allocationTimestamp": "2026-11-26T04:00:30Z",
        "devices": {"results": []}}}}]' "$FAKE_CLUSTER/test-claims.json" >"$BATS_TEST_TMPDIR/claims.json"
    mv "$BATS_TEST_TMPDIR/claims.json" "$FAKE_CLUSTER/test-claims.json"
    run -0 allocation_time ns timed
    assert_output 1795665630
    run ! allocation_time ns ready-gpu-x7k2p
    assert_output "claim ready-gpu-x7k2p has no allocation with an allocationTimestamp"
    run ! allocation_time ns gone
    run -0 allocated_after ns timed 1795665600
    assert_output 1795665630
    run ! allocated_after ns timed 1795665630
    assert_output "claim timed is still allocated at 1795665630, not after 1795665630"
    run ! allocated_after ns released 0
    run -0 pod_unbound ns pending
    run ! pod_unbound ns ready
    assert_output "pod ready is bound to node worker-1"
}
