#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The slice publisher against the API server stand-in: publishing, splitting,
# republishing after deletions, stale slices, conflicts and server errors,
# health taints, servers that drop taints, inventory changes, cleanup.
# publish-test-driver runs the publisher on a plain fakehw tree.

bats_load_library bats-support
bats_load_library bats-assert
load publish_helpers

setup() {
    TREE=$BATS_TEST_TMPDIR/tree
    [[ -x $(publish_driver_bin) ]] || fail "$(publish_driver_bin) is not built (make $(publish_driver_bin))"
}

# A tree of $1 devices published as $2 slices by a driver without periodic
# resyncs, settled: in sync, and past the watch debounce, so any sync the
# start caused has run.
start_settled() {
    make_tree "$TREE" "$1"
    start_standin
    start_driver --resync-ms 600000
    wait_for 10 pool_is "$1" "$2"
    wait_for 5 status_is .publisher.in_sync true
    sleep 0.6
}

# The taint values of every device, in device order, as compact JSON.
taint_values_are() {
    [[ $(slices | jq -c '[.[].spec.devices[] | .taints // [] | .[].value]') == "$1" ]]
}

teardown() {
    [[ ${BATS_TEST_COMPLETED:-} == 1 ]] || dump_logs
    stop_all
}

@test "4 GPUs: one slice owned by the Node, with the published attributes" {
    make_tree "$TREE" 4
    start_standin
    start_driver
    wait_for 10 pool_is 4 1
    run slices
    local s=$output node_uid
    node_uid=$(api GET /api/v1/nodes/"$NODE" | jq -r .metadata.uid)
    assert_equal "$(jq -r '.[0].metadata.ownerReferences[0] | "\(.apiVersion) \(.kind) \(.name) \(.uid) \(.controller)"' <<<"$s")" \
        "v1 Node $NODE $node_uid true"
    assert_equal "$(jq -r '.[0].metadata.name | startswith("00000-gpu.fakehw.example.com-node-1-")' <<<"$s")" true
    assert_equal "$(jq -r '.[0].spec | "\(.driver) \(.nodeName) \(.pool.name) \(.pool.generation) \(.pool.resourceSliceCount)"' <<<"$s")" \
        "$DRIVER $NODE $NODE 1 1"
    local dev
    dev=$(jq -c '.[0].spec.devices[1]' <<<"$s")
    assert_equal "$(jq -r .name <<<"$dev")" gpu-1
    assert_equal "$(jq -c '.attributes | keys' <<<"$dev")" \
        '["architecture","brand","cudaComputeCapability","cudaDriverVersion","driverVersion","index","numaNode","productName","resource.kubernetes.io/numaNode","resource.kubernetes.io/pciBusID","resource.kubernetes.io/pcieRoot","type","uuid"]'
    assert_equal "$(jq -c '.attributes.type, .attributes.index, .attributes.driverVersion, .attributes.cudaComputeCapability, .attributes.numaNode' <<<"$dev" | tr '\n' ' ')" \
        '{"string":"gpu"} {"int":1} {"version":"580.95.5"} {"version":"9.0.0"} {"int":1} '
    assert_equal "$(jq -r '.attributes["resource.kubernetes.io/pciBusID"].string' <<<"$dev")" 0000:01:00.0
    assert_equal "$(jq -c .capacity <<<"$dev")" '{"memory":{"value":"81559Mi"}}'
    assert_equal "$(jq -c '.taints // "none"' <<<"$dev")" '"none"'
    wait_for 5 test -f "$BATS_TEST_TMPDIR/ready"
    assert_equal "$(status_field .publisher.published)" true

    # A plain stop leaves the pool for the next instance.
    stop_driver
    assert_equal "${DRIVER_RC:-0}" 0
    run pool_is 4 1
    assert_success
    [[ ! -e $BATS_TEST_TMPDIR/ready ]]
}

@test "300 GPUs: slices of 128, 128 and 44 in index order; any taint splits at 64" {
    make_tree "$TREE" 300
    start_standin
    start_driver
    wait_for 15 pool_is 300 3
    run slices
    assert_equal "$(jq -c 'sort_by(.metadata.name) | map([(.metadata.name[0:5]), (.spec.devices | length), .spec.devices[0].name])' <<<"$output")" \
        '[["00000",128,"gpu-0"],["00001",128,"gpu-128"],["00002",44,"gpu-256"]]'

    flip "$TREE" 150 unhealthy "XID 79"
    wait_for 10 pool_is 300 5
    run slices
    # Only the new generation is left, every slice at most 64 devices.
    assert_equal "$(jq -c 'map(.spec.pool.generation) | unique' <<<"$output")" '[2]'
    assert_equal "$(jq -c 'sort_by(.metadata.name) | map(.spec.devices | length)' <<<"$output")" '[64,64,64,64,44]'
    assert_equal "$(taints_of gpu-150 | jq -r '.[0].value')" XID-79

    flip "$TREE" 150 healthy
    wait_for 10 pool_is 300 3
    assert_equal "$(slices | jq -c 'map(.spec.pool.generation) | unique')" '[3]'
}

@test "a deleted slice comes back within seconds, and so does a wiped pool" {
    make_tree "$TREE" 4
    start_standin
    start_driver
    wait_for 10 pool_is 4 1
    local name
    name=$(slices | jq -r '.[0].metadata.name')
    api DELETE "$SLICES/$name" >/dev/null
    wait_for 3 pool_is 4 1
    [[ $(slices | jq -r '.[0].metadata.name') != "$name" ]]

    # The kubelet at its start: deletecollection of everything on the node.
    api DELETE "$SLICES?fieldSelector=spec.nodeName%3D$NODE" >/dev/null
    wait_for 3 pool_is 4 1
}

@test "its own writes coming back through the watch start no sync; someone else's do" {
    start_settled 300 3
    local syncs
    syncs=$(status_field .publisher.syncs)
    # Someone deletes a slice: one sync puts it back (2 updates, 1 create).
    # The 3 events of those writes are echoes: no second sync.
    api DELETE "$SLICES/$(slices | jq -r '.[1].metadata.name')" >/dev/null
    wait_for 5 status_is .publisher.syncs $((syncs + 1))
    wait_for 5 pool_is 300 3
    wait_for 5 status_is .publisher.in_sync true
    sleep 0.6
    assert_equal "$(status_field .publisher.syncs)" $((syncs + 1))
    assert_equal "$(status_field .publisher.creates)" 4
    assert_equal "$(status_field .publisher.updates)" 2
}

@test "stale slices of this driver and node go; other drivers' and nodes' stay" {
    make_tree "$TREE" 2
    start_standin --node "$NODE,node-2"
    start_driver
    wait_for 10 pool_is 2 1
    local dev='{"name":"gpu-9","attributes":{"type":{"string":"gpu"}}}' body
    # Another pool of this driver on this node (an old naming scheme).
    body=$(jq -nc --arg d "$DRIVER" --arg n "$NODE" --argjson dev "$dev" \
        '{apiVersion:"resource.k8s.io/v1",kind:"ResourceSlice",metadata:{name:"stale-pool"},
          spec:{driver:$d,nodeName:$n,pool:{name:"old-pool",generation:1,resourceSliceCount:1},devices:[$dev]}}')
    api POST "$SLICES" "$body" | jq -e .metadata.uid >/dev/null
    # An obsolete generation of our own pool.
    body=$(jq -nc --arg d "$DRIVER" --arg n "$NODE" --argjson dev "$dev" \
        '{apiVersion:"resource.k8s.io/v1",kind:"ResourceSlice",metadata:{name:"00000-old-generation"},
          spec:{driver:$d,nodeName:$n,pool:{name:$n,generation:0,resourceSliceCount:1},devices:[$dev]}}')
    api POST "$SLICES" "$body" | jq -e .metadata.uid >/dev/null
    # Not ours: another driver on this node, this driver on another node.
    body=$(jq -nc --arg n "$NODE" --argjson dev "$dev" \
        '{apiVersion:"resource.k8s.io/v1",kind:"ResourceSlice",metadata:{name:"nic-slice"},
          spec:{driver:"nic.example.com",nodeName:$n,pool:{name:$n,generation:1,resourceSliceCount:1},devices:[$dev]}}')
    api POST "$SLICES" "$body" | jq -e .metadata.uid >/dev/null
    body=$(jq -nc --arg d "$DRIVER" --argjson dev "$dev" \
        '{apiVersion:"resource.k8s.io/v1",kind:"ResourceSlice",metadata:{name:"other-node"},
          spec:{driver:$d,nodeName:"node-2",pool:{name:"node-2",generation:1,resourceSliceCount:1},devices:[$dev]}}')
    api POST "$SLICES" "$body" | jq -e .metadata.uid >/dev/null

    wait_for 5 slice_count_is 1
    run pool_is 2 1
    assert_success
    api GET "$SLICES/nic-slice" | jq -e '.metadata.uid' >/dev/null
    api GET "$SLICES/other-node" | jq -e '.metadata.uid' >/dev/null
}

@test "conflicts are re-read and retried at once" {
    make_tree "$TREE" 4
    start_standin
    start_driver
    wait_for 10 pool_is 4 1
    api POST /standin/faults '{"status":409,"method":"PUT","path":"/apis/resource.k8s.io/v1/resourceslices/","count":2}' >/dev/null
    flip "$TREE" 3 unhealthy "XID 48"
    wait_for 5 taint_value_is gpu-3 XID-48
    wait_for 2 status_at_least .publisher.conflicts 2
    assert_equal "$(status_field .publisher.failures)" 0
}

@test "server errors and dropped connections: retried with backoff until the pool converges" {
    make_tree "$TREE" 4
    start_standin
    api POST /standin/faults '{"status":500,"path":"/apis/resource.k8s.io/v1/resourceslices","seconds":2}' >/dev/null
    api POST /standin/faults '{"close":true,"path":"/api/v1/nodes","count":4}' >/dev/null
    start_driver
    sleep 1
    run pool_is 4 1
    assert_failure
    wait_for 20 pool_is 4 1
    wait_for 5 status_is .publisher.in_sync true
    (($(status_field .publisher.failures) >= 1))
    assert_equal "$(status_field .publisher.last_error)" ""

    # A create whose answer is lost (handled, then the connection dropped):
    # the next sync finds the slice instead of creating a second one.
    api POST /standin/faults '{"close":true,"after":true,"method":"POST","path":"/apis/resource.k8s.io/v1/resourceslices","count":1}' >/dev/null
    api DELETE "$SLICES?fieldSelector=spec.nodeName%3D$NODE" >/dev/null
    wait_for 10 pool_is 4 1
    sleep 0.5
    assert_equal "$(slices | jq length)" 1
}

@test "health flips: the taint appears and goes again quickly, with the configured effect" {
    make_tree "$TREE" 4
    start_standin
    start_driver --taint-effect NoExecute
    wait_for 10 pool_is 4 1
    local t0 t1
    t0=$(date +%s%N)
    flip "$TREE" 2 unhealthy "XID 79: GPU has fallen off the bus"
    wait_for 2 taint_value_is gpu-2 XID-79
    t1=$(date +%s%N)
    wait_for 2 status_is .publisher.tainted 1
    echo "# flip to taint: $(((t1 - t0) / 1000000)) ms seen by the test, $(status_field .publisher.latency_ms) ms inside the driver" >&3
    run taints_of gpu-2
    assert_equal "$(jq -r '.[0] | "\(.key) \(.value) \(.effect)"' <<<"$output")" \
        "$DRIVER/unhealthy XID-79 NoExecute"
    [[ $(jq -r '.[0].timeAdded' <<<"$output") =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T ]]
    assert_equal "$(taints_of gpu-1)" "[]"

    flip "$TREE" 2 healthy
    wait_for 2 taints_are gpu-2 '[]'
    run pool_is 4 1
    assert_success
}

# The ResourceSlice LISTs the stand-in answered since its request log was
# last cleared (the watch's own LIST asks for limit=1 and is left out).
slice_lists() {
    api GET /standin/requests | jq --arg p "$SLICES" \
        '[.requests[] | select(.method == "GET" and .path == $p and (.query | test("watch=|limit=") | not))] | length'
}

@test "a flapping device: at most one sync per 50 ms, and the last state is the one published" {
    start_settled 4 1
    api DELETE /standin/requests >/dev/null
    local t0 ms i
    t0=$(date +%s%N)
    for ((i = 0; i < 300; i++)); do
        flip "$TREE" 1 unhealthy "XID 79"
        flip "$TREE" 1 healthy
    done
    flip "$TREE" 1 unhealthy "XID 48: DBE"
    ms=$((($(date +%s%N) - t0) / 1000000))
    wait_for 5 taint_value_is gpu-1 XID-48
    wait_for 5 status_is .publisher.in_sync true
    local lists
    lists=$(slice_lists)
    echo "# 601 flips in $ms ms: $lists LISTs, $(status_field .publisher.skipped) syncs skipped" >&3
    # One sync per 50 ms of flapping, the one after it, and the taint's echo.
    ((lists <= ms / 50 + 3)) || fail "$lists LISTs for $ms ms of flapping"
}

@test "a device change that publishes nothing makes no API request" {
    start_settled 4 1
    api DELETE /standin/requests >/dev/null
    local i
    # devicePath goes into CDI specs, not into the slices.
    for ((i = 0; i < 40; i++)); do
        printf '/dev/fakegpu%s\n' $((i % 2 + 8)) >"$TREE/devices/gpu-2/devicePath"
        sleep 0.02
    done
    sleep 0.3
    wait_for 5 status_is .publisher.in_sync true
    assert_equal "$(api GET /standin/requests | jq '.requests | length')" 0
    status_at_least .publisher.skipped 1 || fail "no sync was skipped: $(cat "$BATS_TEST_TMPDIR/status.json")"
}

@test "fakehw gone: every device tainted fakehw-unavailable, clean again when it returns" {
    make_tree "$TREE" 3
    start_standin
    start_driver
    wait_for 10 pool_is 3 1
    mv "$TREE" "$TREE.away"
    wait_for 5 taint_values_are '["fakehw-unavailable","fakehw-unavailable","fakehw-unavailable"]'
    run pool_is 3 1
    assert_success
    mv "$TREE.away" "$TREE"
    wait_for 5 taint_values_are '[]'
}

@test "inventory changes are published without a restart" {
    make_tree "$TREE" 4
    start_standin
    start_driver
    wait_for 10 pool_is 4 1
    add_device "$TREE" 4
    wait_for 5 pool_is 5 1
    rm -rf "$TREE/devices/gpu-0"
    wait_for 5 pool_is 4 1
    assert_equal "$(slices | jq -c '[.[].spec.devices[].name] | sort')" '["gpu-1","gpu-2","gpu-3","gpu-4"]'
}

@test "a device that breaks an API rule is left out, with the reason in the log" {
    make_tree "$TREE" 3
    printf '%070d\n' 0 >"$TREE/devices/gpu-1/productName"
    start_standin
    start_driver
    wait_for 10 pool_is 2 1
    # The driver writes its status file every 100 ms: it may lag the slices.
    wait_for 2 status_is .publisher.rejected 1
    run grep -c 'device gpu-1 is not published: device gpu-1: attribute productName: .* is longer than 64 characters' \
        "$BATS_TEST_TMPDIR/driver.log"
    assert_output 1
}

@test "a server that drops taints: policy auto leaves unhealthy devices out" {
    make_tree "$TREE" 4
    start_standin --drop-device-taints
    start_driver
    wait_for 10 pool_is 4 1
    flip "$TREE" 1 unhealthy "XID 79"
    wait_for 5 pool_is 3 1
    run slices
    refute_output --partial '"gpu-1"'
    wait_for 2 status_is '.publisher | "\(.taints_dropped) \(.removing_unhealthy) \(.removed)"' "true true 1"
    grep -q 'dropped the device taints' "$BATS_TEST_TMPDIR/driver.log"
    flip "$TREE" 1 healthy
    wait_for 5 pool_is 4 1
}

@test "a server that drops taints: policy taint keeps the device, untainted, without a write loop" {
    make_tree "$TREE" 4
    start_standin --drop-device-taints
    start_driver --unhealthy-device-policy taint
    wait_for 10 pool_is 4 1
    flip "$TREE" 1 unhealthy "XID 79"
    wait_for 5 status_is .publisher.taints_dropped true
    run pool_is 4 1
    assert_success
    assert_equal "$(taints_of gpu-1)" "[]"
    local before
    sleep 0.5
    before=$(status_field .publisher.updates)
    sleep 1
    assert_equal "$(status_field .publisher.updates)" "$before"
}

@test "policy remove: unhealthy devices leave the slice and come back" {
    make_tree "$TREE" 4
    start_standin
    start_driver --unhealthy-device-policy remove
    wait_for 10 pool_is 4 1
    flip "$TREE" 0 unhealthy ""
    wait_for 5 pool_is 3 1
    flip "$TREE" 0 healthy
    wait_for 5 pool_is 4 1
}

@test "--cleanup-on-exit deletes the pool on SIGTERM" {
    make_tree "$TREE" 4
    start_standin
    start_driver --cleanup-on-exit
    wait_for 10 pool_is 4 1
    stop_driver
    assert_equal "${DRIVER_RC:-0}" 0
    assert_equal "$(slices | jq length)" 0
    grep -q 'deleted 1 ResourceSlices' "$BATS_TEST_TMPDIR/driver.log"
}

owner_uid_is() {
    [[ $(slices | jq -r '.[0].metadata.ownerReferences[0].uid') == "$1" ]]
}

@test "a Node made again with a new uid: the owner references follow" {
    make_tree "$TREE" 2
    start_standin
    start_driver --resync-ms 300
    wait_for 10 pool_is 2 1
    local old new
    old=$(api GET /api/v1/nodes/"$NODE" | jq -r .metadata.uid)
    api DELETE /api/v1/nodes/"$NODE" >/dev/null
    api POST /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"$NODE\"}}" >/dev/null
    new=$(api GET /api/v1/nodes/"$NODE" | jq -r .metadata.uid)
    [[ $new != "$old" && $new != null ]]
    wait_for 5 owner_uid_is "$new"
    run pool_is 2 1
    assert_success
}
