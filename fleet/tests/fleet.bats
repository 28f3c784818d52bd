#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# fakehw-fleet-publisher against the API server stand-in (three fake nodes):
# its slices, flips, one slice watch for every pool, the bound on pools
# syncing at once (--sync-concurrency) and binder (the test plays the
# scheduler: it writes the allocations, binding conditions copied from the
# slice, and reads the conditions back), the Node objects
# scripts/fleet/fleet.sh makes for KWOK, and the quantiles
# bench/fleet/sched.sh reads from the scheduler's histograms. No cluster.

bats_load_library bats-support
bats_load_library bats-assert

DRIVER=gpu.fakehw.example.com
SLICES=/apis/resource.k8s.io/v1/resourceslices

setup() {
    REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
    CONFIGS=$BATS_TEST_DIRNAME/configs
    PUB=${FAKEHW_BIN:?}/fakehw-fleet-publisher
}

teardown() {
    if [[ -n ${PUB_PID:-} ]]; then
        kill -TERM "$PUB_PID" 2>/dev/null || true
        wait "$PUB_PID" 2>/dev/null || true
    fi
    if [[ -n ${STANDIN_PID:-} ]]; then
        kill -TERM "$STANDIN_PID" 2>/dev/null || true
        wait "$STANDIN_PID" 2>/dev/null || true
    fi
}

start_standin() {
    "$FAKEHW_BIN/apiserver-standin" --node fleet-node-0,fleet-node-1,fleet-node-2 \
        --port-file "$BATS_TEST_TMPDIR/port" 2>"$BATS_TEST_TMPDIR/standin.log" &
    STANDIN_PID=$!
    wait_for 5 test -s "$BATS_TEST_TMPDIR/port" || {
        cat "$BATS_TEST_TMPDIR/standin.log" >&2
        return 1
    }
    API="http://127.0.0.1:$(cat "$BATS_TEST_TMPDIR/port")"
    cat >"$BATS_TEST_TMPDIR/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: s, cluster: {server: "$API"}}]
users: [{name: u, user: {}}]
contexts: [{name: s, context: {cluster: s, user: u}}]
current-context: s
KC
}

# pool NODE: "DEVICES TAINTED" of NODE's slices on the stand-in.
pool() {
    curl -sS "$API$SLICES" | jq -r --arg n "$1" --arg d "$DRIVER" \
        '[.items[] | select(.spec.nodeName == $n and .spec.driver == $d and .spec.pool.name == $n)
          | .spec.devices[]?] | "\(length) \(map(select(.taints != null and (.taints | length) > 0)) | length)"'
}

node1_flipped() { [[ $(pool fleet-node-1) == "2 1" ]]; }

pool_is() { [[ $(pool "$1") == "$2" ]]; } # pool_is NODE "DEVICES TAINTED"

all_slices() { curl -sS "$API$SLICES" | jq '.items | length'; }

wait_for() { # wait_for SECONDS COMMAND...
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.1
    done
}

@test "fleet: one pool per node from its section, flips on the right node, all deleted on SIGTERM" {
    start_standin
    "$PUB" --config "$CONFIGS/fleet-small.yaml" --nodes 3 --kubeconfig "$BATS_TEST_TMPDIR/kubeconfig" \
        --ready-file "$BATS_TEST_TMPDIR/ready" 2>"$BATS_TEST_TMPDIR/pub.log" &
    PUB_PID=$!
    wait_for 20 test -f "$BATS_TEST_TMPDIR/ready"
    run cat "$BATS_TEST_TMPDIR/ready"
    assert_line "nodes 3"
    assert_line "devices 18"
    [[ $(pool fleet-node-0) == "8 0" ]]
    [[ $(pool fleet-node-2) == "8 0" ]]
    # fleet-node-1's gpu-0 turns unhealthy 200 ms after the start: its slice
    # alone gets the taint.
    wait_for 10 node1_flipped
    [[ $(pool fleet-node-0) == "8 0" ]]
    kill -TERM "$PUB_PID"
    wait "$PUB_PID"
    PUB_PID=
    [[ $(all_slices) == 0 ]]
    [[ ! -e $BATS_TEST_TMPDIR/ready ]]
    grep -q "every slice of 3 pools deleted" "$BATS_TEST_TMPDIR/pub.log"
}

launch_fleet() { # launch_fleet CONFIG [FLAG...]: the publisher on three nodes, started
    "$PUB" --config "$CONFIGS/$1" --nodes 3 --kubeconfig "$BATS_TEST_TMPDIR/kubeconfig" \
        --ready-file "$BATS_TEST_TMPDIR/ready" "${@:2}" 2>"$BATS_TEST_TMPDIR/pub.log" &
    PUB_PID=$!
}

start_fleet() { # start_fleet CONFIG [FLAG...]: launch_fleet, then published
    launch_fleet "$@"
    wait_for 20 test -f "$BATS_TEST_TMPDIR/ready"
}

stop_fleet() { # stop_fleet: SIGTERM to the publisher; its exit status
    local rc=0
    kill -TERM "$PUB_PID"
    wait "$PUB_PID" || rc=$?
    PUB_PID=
    return "$rc"
}

# requests_of JQ_FILTER: the stand-in's logged requests that match, as JSON lines.
requests_of() {
    curl -sSf "$API/standin/requests" | jq -c ".requests[] | select($1)"
}

SLICE_GET='.method == "GET" and .path == "'$SLICES'"'

# The pools' own LISTs (field selector spec.nodeName=...): "node timeNs" lines.
pool_lists() {
    requests_of "$SLICE_GET and (.query | test(\"watch=true\") | not) and (.query | test(\"spec.nodeName\"))" |
        jq -r '"\(.query | capture("spec.nodeName=(?<n>[^,&]+)").n) \(.timeNs)"'
}

# The request log cleared, then quiet for half a second: nothing is syncing.
quiet() {
    curl -sSf -X DELETE "$API/standin/requests" >/dev/null
    sleep 0.5
    [[ -z $(pool_lists) ]]
}

@test "fleet: one slice watch for every pool; a slice deleted or changed on node k is repaired on node k" {
    start_standin
    start_fleet fleet-small.yaml
    wait_for 10 node1_flipped
    # One watch of the driver's slices, not one per node.
    run requests_of "$SLICE_GET and (.query | test(\"watch=true\"))"
    assert_equal "${#lines[@]}" 1
    assert_equal "$(jq -r .query <<<"${lines[0]}" | grep -o 'fieldSelector=[^&]*')" \
        "fieldSelector=spec.driver=$DRIVER"
    # Someone deletes fleet-node-2's slice: back within seconds (the resync
    # is 300 s away) by one sync of that pool alone; its own write coming
    # back through the watch starts no other.
    wait_for 10 quiet
    local name
    name=$(curl -sS "$API$SLICES" | jq -r '.items[] | select(.spec.nodeName == "fleet-node-2") | .metadata.name')
    curl -sSf -X DELETE "$API$SLICES/$name" >/dev/null
    wait_for 5 pool_is fleet-node-2 "8 0"
    sleep 0.5
    assert_equal "$(pool_lists | cut -d' ' -f1)" fleet-node-2
    # Someone drops a device from fleet-node-0's slice: put back the same way.
    wait_for 10 quiet
    curl -sS "$API$SLICES" | jq '.items[] | select(.spec.nodeName == "fleet-node-0") | .spec.devices |= .[1:]' \
        >"$BATS_TEST_TMPDIR/changed.json"
    name=$(jq -r .metadata.name "$BATS_TEST_TMPDIR/changed.json")
    curl -sSf -X PUT -H 'Content-Type: application/json' "$API$SLICES/$name" \
        --data-binary @"$BATS_TEST_TMPDIR/changed.json" >/dev/null
    wait_for 5 pool_is fleet-node-0 "8 0"
    sleep 0.5
    assert_equal "$(pool_lists | cut -d' ' -f1)" fleet-node-0
    [[ $(pool fleet-node-1) == "2 1" ]]
    # The one watch stayed open all along: none was opened again.
    run requests_of "$SLICE_GET and (.query | test(\"watch=true\"))"
    assert_equal "${#lines[@]}" 0
}

@test "fleet: --sync-concurrency 1 syncs one pool at a time, and publishes every pool" {
    start_standin
    # Every slice read takes 300 ms: pools that talk at once would end theirs together.
    curl -sSf -X POST "$API/standin/faults" \
        -d "{\"delayMs\":300,\"method\":\"GET\",\"path\":\"$SLICES\",\"seconds\":60}" >/dev/null
    start_fleet fleet-small.yaml --sync-concurrency 1
    run cat "$BATS_TEST_TMPDIR/ready"
    assert_line "nodes 3"
    [[ $(pool fleet-node-0) == "8 0" ]]
    [[ $(pool fleet-node-2) == "8 0" ]]
    wait_for 10 node1_flipped
    # The pools' reads end at least 300 ms apart (250: the clock's slack).
    run pool_lists
    ((${#lines[@]} >= 3))
    python3 -c '
import sys
t = sorted(int(l.split()[1]) for l in sys.argv[1:])
gaps = [b - a for a, b in zip(t, t[1:])]
assert min(gaps) >= 250e6, [g / 1e6 for g in gaps]
' "${lines[@]}"
    stop_fleet
    grep -q "pools talking to the API server at once: at most 1 of 1 allowed" "$BATS_TEST_TMPDIR/pub.log"
    [[ $(all_slices) == 0 ]]
}

@test "fleet: SIGTERM during the first publish stops it and deletes what was published" {
    start_standin
    # Every slice read takes 2 s and one pool talks at a time: the first
    # publish of three pools takes several seconds.
    curl -sSf -X POST "$API/standin/faults" \
        -d "{\"delayMs\":2000,\"method\":\"GET\",\"path\":\"$SLICES\",\"seconds\":60}" >/dev/null
    launch_fleet fleet-small.yaml --sync-concurrency 1
    wait_for 10 grep -q "one slice watch" "$BATS_TEST_TMPDIR/pub.log"
    [[ ! -e $BATS_TEST_TMPDIR/ready ]]
    stop_fleet
    run cat "$BATS_TEST_TMPDIR/pub.log"
    assert_line --partial "signal 15 before every pool was published, stopping"
    refute_line --partial "published in"
    assert_line --partial "every slice of 3 pools deleted"
    [[ ! -e $BATS_TEST_TMPDIR/ready ]]
    [[ $(all_slices) == 0 ]]
}

@test "fleet: a bad --sync-concurrency is refused, naming the flag" {
    run "$PUB" --config "$CONFIGS/fleet-small.yaml" --nodes 3 --check --sync-concurrency 0
    assert_failure 2
    assert_output --partial "--sync-concurrency 0: must be 1..256"
    run "$PUB" --config "$CONFIGS/fleet-small.yaml" --nodes 3 --check --sync-concurrency 257
    assert_failure 2
    assert_output --partial "--sync-concurrency 257: must be 1..256"
    FLEET_SYNC_CONCURRENCY=many run "$PUB" --config "$CONFIGS/fleet-small.yaml" --nodes 3 --check
    assert_failure 2
    assert_output --partial 'FLEET_SYNC_CONCURRENCY: "many" is not an integer'
    FLEET_SYNC_CONCURRENCY=4 run "$PUB" --config "$CONFIGS/fleet-small.yaml" --nodes 3 --check
    assert_success
}

@test "fleet: an argument after the flags is refused, naming it" {
    run "$PUB" --config "$CONFIGS/fleet-small.yaml" --nodes 3 --check extra
    assert_failure 2
    assert_output 'fakehw-fleet-publisher: unexpected argument "extra" (see --help)'
}

CLAIMS=/apis/resource.k8s.io/v1/namespaces/default/resourceclaims
ATTACHED=$DRIVER/attached
FAILED=$DRIVER/attach-failed

claim_new() { # claim_new NAME: a claim for one GPU, not allocated
    curl -sSf -X POST -H 'Content-Type: application/json' "$API$CLAIMS" --data-binary \
        "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"$1\"},
          \"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"$DRIVER\"}}]}}}" >/dev/null
}

# allocate NAME POOL DEVICE [TIME]: the allocation the scheduler writes for
# an attachable device, its binding conditions copied from the slice.
allocate() {
    curl -sSf -X PATCH -H 'Content-Type: application/merge-patch+json' "$API$CLAIMS/$1/status" \
        --data-binary "{\"status\":{\"allocation\":{\"allocationTimestamp\":\"${4:-2026-11-26T03:00:00Z}\",
          \"devices\":{\"results\":[{\"request\":\"gpu\",\"driver\":\"$DRIVER\",\"pool\":\"$2\",\"device\":\"$3\",
          \"bindingConditions\":[\"$ATTACHED\"],\"bindingFailureConditions\":[\"$FAILED\"]}]}}}}" >/dev/null
}

deallocate() { # deallocate NAME: what the scheduler does after a failure, or the claim's end
    curl -sSf -X PATCH -H 'Content-Type: application/merge-patch+json' "$API$CLAIMS/$1/status" \
        --data-binary '{"status":{"allocation":null,"devices":null}}' >/dev/null
}

# conditions NAME: "pool/device type status reason" of every condition in
# the claim's status.devices, sorted.
conditions() {
    curl -sSf "$API$CLAIMS/$1" | jq -r \
        '[.status.devices[]? | . as $e | .conditions[]? | "\($e.pool)/\($e.device) \(.type) \(.status) \(.reason)"] | sort | .[]'
}

conditions_are() { [[ $(conditions "$1") == "$2" ]]; }

logged() { grep -q -- "$1" "$BATS_TEST_TMPDIR/pub.log"; }
not_logged() { ! logged "$1"; }

@test "fleet binder: an attachable device of the right node is attached, after its delay" {
    start_standin
    start_fleet fleet-attach.yaml
    claim_new c1
    allocate c1 fleet-node-1 gpu-1
    # gpu-1 takes 2 s to attach: no condition before that.
    wait_for 5 logged "needs fleet-node-1/gpu-1 attached"
    [[ $(conditions c1) == "" ]]
    wait_for 10 conditions_are c1 "fleet-node-1/gpu-1 $ATTACHED True Attached"
    run curl -sSf "$API$CLAIMS/c1"
    assert_equal "$(jq -r '.status.devices[0].conditions[0].message' <<<"$output")" "fakehw attached gpu-1"
    # The other nodes' gpu-1 were never asked for.
    not_logged "fleet-node-0/gpu-1"
    not_logged "fleet-node-2/gpu-1"
    # Released, the device is detached again.
    deallocate c1
    wait_for 5 logged "fleet-node-1/gpu-1 is attached but no claim holds it: detaching"
    # It stops cleanly, binder and all.
    kill -TERM "$PUB_PID"
    wait "$PUB_PID"
    PUB_PID=
    # One claim watch for the whole fleet, not one per node.
    run curl -sSf "$API/standin/requests"
    assert_equal "$(jq '[.requests[] | select(.method == "GET" and (.path | endswith("/resourceclaims")))
                         | .query | test("watch=true")] | map(tostring) | join(" ")' <<<"$output")" '"false true"'
}

@test "fleet binder: a scripted attach failure gives attach-failed; the next allocation attaches" {
    start_standin
    start_fleet fleet-attach.yaml
    claim_new c2
    allocate c2 fleet-node-2 gpu-2
    wait_for 10 conditions_are c2 "fleet-node-2/gpu-2 $FAILED True AttachFailed"
    deallocate c2
    wait_for 5 logged "fleet-node-2/gpu-2 is failed but no claim holds it: detaching"
    allocate c2 fleet-node-2 gpu-2 2026-11-26T03:01:00Z
    wait_for 10 conditions_are c2 "fleet-node-2/gpu-2 $ATTACHED True Attached"
}

@test "fleet binder: claims of a node outside the fleet, or without binding conditions, are left alone" {
    start_standin
    start_fleet fleet-attach.yaml
    claim_new c3
    allocate c3 other-node gpu-1
    claim_new c4
    curl -sSf -X PATCH -H 'Content-Type: application/merge-patch+json' "$API$CLAIMS/c4/status" \
        --data-binary "{\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\",\"driver\":\"$DRIVER\",\"pool\":\"fleet-node-0\",\"device\":\"gpu-1\"}]}}}}" >/dev/null
    # A claim the fleet acts on, after the two: once it is attached the
    # binder has seen the others too.
    claim_new c5
    allocate c5 fleet-node-0 gpu-2
    wait_for 10 conditions_are c5 "fleet-node-0/gpu-2 $FAILED True AttachFailed"
    assert_equal "$(conditions c3)" ""
    assert_equal "$(conditions c4)" ""
    not_logged "other-node"
    not_logged "fleet-node-0/gpu-1"
}

@test "fleet binder: --bind=false runs no claim watch and sets no condition" {
    start_standin
    "$PUB" --config "$CONFIGS/fleet-attach.yaml" --nodes 3 --bind=false \
        --kubeconfig "$BATS_TEST_TMPDIR/kubeconfig" --ready-file "$BATS_TEST_TMPDIR/ready" \
        2>"$BATS_TEST_TMPDIR/pub.log" &
    PUB_PID=$!
    wait_for 20 test -f "$BATS_TEST_TMPDIR/ready"
    claim_new c6
    allocate c6 fleet-node-0 gpu-2
    sleep 1
    assert_equal "$(conditions c6)" ""
    run curl -sSf "$API/standin/requests"
    assert_equal "$(jq '[.requests[] | select(.path | startswith("/apis/resource.k8s.io/v1/resourceclaims"))] | length' <<<"$output")" 0
}

@test "fleet: a config past an API limit is refused before anything is published" {
    start_standin
    run "$PUB" --config "$CONFIGS/fleet-bad-attribute.yaml" --nodes 3 \
        --kubeconfig "$BATS_TEST_TMPDIR/kubeconfig"
    assert_failure 1
    assert_output --partial "node fleet-node-2: device gpu-0: attribute productName"
    assert_output --partial "longer than 64 characters"
    [[ $(all_slices) == 0 ]]
}

@test "fleet: --check --list gives every node's GPUs without an API server" {
    run "$PUB" --config "$CONFIGS/fleet-small.yaml" --nodes 3 --check --list
    assert_success
    assert_line "fleet-node-0 8"
    assert_line "fleet-node-1 2"
    assert_line "fleet-node-2 8"
    run "$PUB" --config "$CONFIGS/fleet-small.yaml" --nodes 0 --check
    assert_failure 2
    assert_output --partial "--nodes 0: must be 1.."
}

@test "fleet.sh nodes: KWOK's Node objects, with the GPUs as allocatable" {
    run bash "$REPO/scripts/fleet/fleet.sh" nodes 3 "$CONFIGS/fleet-small.yaml"
    assert_success
    python3 - <<PY
import yaml
nodes = [d for d in yaml.safe_load_all('''$output''') if d]
assert [n["metadata"]["name"] for n in nodes] == ["fleet-node-0", "fleet-node-1", "fleet-node-2"], nodes
assert all(n["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake" for n in nodes)
assert [n["status"]["allocatable"]["nvidia.com/gpu"] for n in nodes] == ["8", "2", "8"]
PY
}

@test "quantiles.py: p50 and p99 of the difference of two scrapes" {
    local m=scheduler_pod_scheduling_sli_duration_seconds_bucket
    cat >"$BATS_TEST_TMPDIR/a" <<M
$m{attempts="1",profile="default-scheduler",le="0.1"} 5
$m{attempts="1",profile="default-scheduler",le="1"} 5
$m{attempts="1",profile="default-scheduler",le="10"} 5
$m{attempts="1",profile="default-scheduler",le="+Inf"} 5
M
    # 100 more samples: 50 under 0.1 s, 49 in (0.1, 1], 1 in (1, 10].
    cat >"$BATS_TEST_TMPDIR/b" <<M
$m{attempts="1",profile="default-scheduler",le="0.1"} 30
$m{attempts="1",profile="default-scheduler",le="1"} 60
$m{attempts="1",profile="default-scheduler",le="10"} 61
$m{attempts="1",profile="default-scheduler",le="+Inf"} 61
$m{attempts="2",profile="default-scheduler",le="0.1"} 25
$m{attempts="2",profile="default-scheduler",le="1"} 44
$m{attempts="2",profile="default-scheduler",le="10"} 44
$m{attempts="2",profile="default-scheduler",le="+Inf"} 44
M
    run python3 "$REPO/bench/fleet/quantiles.py" "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b"
    assert_success
    assert_output "0.100 1.000"
    run python3 "$REPO/bench/fleet/quantiles.py" "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/a"
    assert_output "- -"
}

@test "fleet.sh: bad arguments are refused before anything starts" {
    run bash "$REPO/scripts/fleet/fleet.sh" up abc
    assert_failure
    assert_output --partial "NODES 'abc' is not a positive number"
    run bash "$REPO/scripts/fleet/fleet.sh" frobnicate
    assert_failure
    assert_output --partial "usage: fleet.sh up NODES [CONFIG] | publish NODES CONFIG | down"
    # A config past an API limit stops `up` at its first step.
    run bash "$REPO/scripts/fleet/fleet.sh" up 3 "$CONFIGS/fleet-bad-attribute.yaml"
    assert_failure
    assert_output --partial "node fleet-node-2: device gpu-0"
    refute_output --partial "control plane up"
}

@test "scenarios.sh and flips.sh: bad arguments, or no fleet, are refused before anything runs" {
    run bash "$REPO/bench/fleet/scenarios.sh" abc
    assert_failure
    assert_output "scenarios: usage: scenarios.sh NODES (NODES: the fleet's nodes, at least 3)"
    run bash "$REPO/bench/fleet/scenarios.sh" 2
    assert_failure
    assert_output "scenarios: NODES: 2: the scenarios' configs need fleet-node-0 .. fleet-node-2"
    REAL_NODE_STATE=$BATS_TEST_TMPDIR run bash "$REPO/bench/fleet/scenarios.sh" 3
    assert_failure
    assert_output "scenarios: no $BATS_TEST_TMPDIR/admin.kubeconfig: bring a fleet up first (make fleet NODES=3)"
    run bash "$REPO/bench/fleet/flips.sh" 1
    assert_failure
    assert_output "flips: NODES: 1: the config's flips need fleet-node-1"
    run bash "$REPO/bench/fleet/flips.sh" -5
    assert_failure
    assert_output 'flips: NODES: "-5" is not a positive integer'
}
