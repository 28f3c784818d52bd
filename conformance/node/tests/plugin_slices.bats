#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The ResourceSlices the plugin publishes for its node: pool consistency,
# the fake GPUs' attributes, splitting a big node, and keeping the pool right
# when slices are deleted, stale slices exist or the inventory changes.
# shellcheck disable=SC2016,SC2154 # jq filters and eval'd checks; $output, $status come from run

load ../lib/node_suite

# expected_device NAME: the published form of fakehw device NAME (an A100 of
# the catalogue: versions as semver, memory as a binary quantity).
expected_device() {
    local d=$MNT/devices/$1
    jq -nc --arg name "$1" --arg uuid "$(<"$d/uuid")" --arg product "$(<"$d/productName")" \
        --arg arch "$(<"$d/architecture")" --arg brand "$(<"$d/brand")" --argjson index "$(<"$d/index")" \
        --argjson numa "$(<"$d/numaNode")" --arg bus "$(<"$d/pciBusID")" --arg root "$(<"$d/pcieRoot")" '
        {name: $name,
         attributes: {
            type: {string: "gpu"}, uuid: {string: $uuid}, productName: {string: $product},
            architecture: {string: $arch}, brand: {string: $brand}, index: {int: $index},
            driverVersion: {version: "580.95.5"}, cudaComputeCapability: {version: "8.0.0"},
            cudaDriverVersion: {version: "13.0.0"}, numaNode: {int: $numa},
            "resource.kubernetes.io/pciBusID": {string: $bus},
            "resource.kubernetes.io/pcieRoot": {string: $root},
            "resource.kubernetes.io/numaNode": {int: $numa}},
         capacity: {memory: {value: "80Gi"}}}'
}

# stale_slice NAME DRIVER POOL GENERATION DEVICE: a slice on this node,
# created directly in the API server.
stale_slice() {
    api POST "$SLICES_PATH" "$(printf '{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"%s"},"spec":{"driver":"%s","nodeName":"%s","pool":{"name":"%s","generation":%d,"resourceSliceCount":1},"devices":[{"name":"%s"}]}}' \
        "$1" "$2" "$NODE" "$3" "$4" "$5")" >/dev/null
}

slice_exists() {
    api GET "$SLICES_PATH/$1" >/dev/null 2>&1
}

@test "slices: one consistent pool for this node, every device once" {
    node_up
    run -0 slices '.[] | [.spec.driver, .spec.nodeName, .spec.pool.name] | join(" ")' -r
    local line
    for line in "${lines[@]}"; do
        assert_equal "$line" "$DRIVER $NODE $POOL"
    done
    [[ -n $POOL ]]
    # Device names are DNS labels, unique in the pool, at most 128 per slice.
    run -0 slices '[.[].spec.devices[]?.name] | (length == (unique | length)) and all(test("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"))'
    assert_output true
    run -0 slices 'all(.[]; (.spec.devices // []) | length <= 128)'
    assert_output true
}

@test "slices: the fake GPUs with their attributes and memory, owned by the Node [fakehw]" {
    node_up 4
    run -0 slices
    local all=$output node_uid
    assert_equal "$(jq -c '[.[] | .spec.pool | [.name, .generation, .resourceSliceCount]]' <<<"$all")" "[[\"$NODE\",1,1]]"
    node_uid=$(api GET "/api/v1/nodes/$NODE" | jq -r .metadata.uid)
    assert_equal "$(jq -c '.[0].metadata.ownerReferences' <<<"$all")" \
        "[{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"$NODE\",\"uid\":\"$node_uid\",\"controller\":true}]"
    [[ $(jq -r '.[0].metadata.name' <<<"$all") == 00000-$DRIVER-$NODE-* ]]
    local i
    for i in 0 1 2 3; do
        assert_equal "$(jq -cS --arg d "gpu-$i" '.[0].spec.devices[] | select(.name == $d)' <<<"$all")" \
            "$(expected_device "gpu-$i" | jq -cS .)"
    done
    assert_equal "$(jq -c '[.[0].spec.devices[].name]' <<<"$all")" '["gpu-0","gpu-1","gpu-2","gpu-3"]'
}

@test "slices: the standard attributes resource.kubernetes.io/{numaNode,pciBusID,pcieRoot} have the API's types and forms" {
    node_up
    # Drivers need not publish them, but when they do: numaNode a non-negative
    # int (a device without NUMA affinity leaves it out), pciBusID an extended
    # BDF string, pcieRoot pci<domain>:<bus>.
    run -0 slices '[.[].spec.devices[]?.attributes // {} | to_entries[] | select(.key | startswith("resource.kubernetes.io/"))
        | select(
            (.key == "resource.kubernetes.io/numaNode" and ((.value | keys) != ["int"] or .value.int < 0 or .value.int > 1023)) or
            (.key == "resource.kubernetes.io/pciBusID" and ((.value | keys) != ["string"] or (.value.string | test("^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]$") | not))) or
            (.key == "resource.kubernetes.io/pcieRoot" and ((.value | keys) != ["string"] or (.value.string | test("^pci[0-9a-f]{4}:[0-9a-f]{2}$") | not))))
        | "\(.key)=\(.value)"] | join(" ")' -r
    assert_output ""
    if [[ $NODE_FAKE_DRIVER == true ]]; then
        # Every fake GPU has a NUMA node: the standard attribute equals the driver's own.
        run -0 slices '[.[].spec.devices[] | .attributes as $a | select($a["resource.kubernetes.io/numaNode"] != $a.numaNode or $a.numaNode == null) | .name] | join(" ")' -r
        assert_output ""
    fi
}

@test "slices: attribute and capacity names are not qualified with the driver's own name" {
    node_up
    # The driver's domain is implicit for its own devices: "<driver>/x" means
    # "x", and publishing it qualified is redundant at best and two
    # conflicting entries at worst (CEL picks either).  The ResourceSlice
    # publisher of k8s.io/dynamic-resource-allocation refuses it from v0.38
    # (Kubernetes 1.38) unless the driver opts out.
    run -0 slices '[.[] | .spec.devices[]? | .name as $dev
        | ((.attributes // {}) + (.capacity // {})) | keys[] | select(startswith($d)) | "\($dev): \(.)"] | join(", ")' \
        --arg d "$DRIVER/" -r
    assert_output ""
}

@test "slices: 300 GPUs make 3 slices (128, 128, 44) of one generation [fakehw]" {
    node_up 300
    run -0 slices '[.[] | {n: (.spec.devices | length), c: .spec.pool.resourceSliceCount, g: .spec.pool.generation}]'
    assert_output '[{"n":128,"c":3,"g":1},{"n":128,"c":3,"g":1},{"n":44,"c":3,"g":1}]'
    run -0 slices '[.[].metadata.name[0:6]]' -c
    assert_output '["00000-","00001-","00002-"]'
    # Every GPU exactly once, in index order across the slices.
    run -0 slices '[.[].spec.devices[].name] == [range(300) | "gpu-\(.)"]'
    assert_output true
    # The last one (another PCI domain, NUMA node 1) is described like the first.
    assert_equal "$(slices '.[2].spec.devices[43]' -S)" "$(expected_device gpu-299 | jq -cS .)"
}

@test "slices: a slice deleted through the API comes back within NODE_SLICE_SYNC_SECONDS" {
    node_up
    local name count
    name=$(slices '.[0].metadata.name' -r)
    count=$(slices '[.[].spec.devices[]?] | length')
    api DELETE "$SLICES_PATH/$name" >/dev/null
    wait_for "$NODE_SLICE_SYNC_SECONDS" "the deleted slice to be replaced" pool_settled "$count"
    run -1 slice_exists "$name"
    plugin_alive
}

@test "slices: stale slices of this driver and node are removed; other drivers' slices stay" {
    node_up
    local count
    count=$(slices '[.[].spec.devices[]?] | length')
    stale_slice stale-other-pool "$DRIVER" "$POOL-old" 7 gone-0
    stale_slice stale-old-generation "$DRIVER" "$POOL" 0 gone-1
    stale_slice another-driver other.example.com "$NODE" 1 dev-0
    wait_for "$NODE_SLICE_SYNC_SECONDS" "the stale slices to be deleted" eval '! slice_exists stale-other-pool && ! slice_exists stale-old-generation'
    wait_pool_published "$count"
    slice_exists another-driver || fail "the plugin deleted a slice of another driver"
    run -0 pool_devices
    refute_line --regexp '^gone-'
}

@test "slices: GPUs added to and removed from the fakehw config appear without a plugin restart [fakehw]" {
    node_up 4
    local pid=$PLUGIN_PID
    fakehw_config 6
    fakehw_reload
    wait_for 5 "6 devices in the pool" pool_settled 6
    run -0 pool_devices
    assert_output "$(printf 'gpu-%s\n' 0 1 2 3 4 5)"
    fakehw_config 2
    fakehw_reload
    wait_for 5 "2 devices in the pool" pool_settled 2
    run -0 pool_devices
    assert_output "gpu-0
gpu-1"
    # The same plugin process did it.
    assert_equal "$PLUGIN_PID" "$pid"
    plugin_alive
    assert_equal "$(grep -c '^=== .* starting: ' "$PLUGIN_LOG")" 1
}
