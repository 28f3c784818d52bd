#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The plugin's gRPC layer end to end: grpc-test-server (driver/grpc with a
# fake prepare path, see fake_prepare.h) driven by kubelet-standin and by an
# independent Python grpcio client (wire_check.py).
# Each @test runs in its own subshell; SERVER_PID is per test by design.
# shellcheck disable=SC2030,SC2031

bats_load_library bats-support
bats_load_library bats-assert
bats_load_library bats-file

DRIVER=gpu.fakehw.example.com

setup() {
    : "${FAKEHW_BIN:?FAKEHW_BIN must point at build/bin}"
    STANDIN="$FAKEHW_BIN/kubelet-standin"
    SERVER="$FAKEHW_BIN/../test-bin/grpc-test-server"
    # Short paths: unix socket paths are limited to 107 bytes.
    T="$(mktemp -d /tmp/fhgrpc.XXXXXX)"
    REG_DIR="$T/plugins_registry"
    PLUGIN_DIR="$T/plugins/$DRIVER"
    REG_SOCK="$REG_DIR/$DRIVER-reg.sock"
    DRA_SOCK="$PLUGIN_DIR/dra.sock"
    cat >"$T/health" <<HEALTH
node-a gpu-0 healthy 1700000000
node-a gpu-1 unhealthy 1700000100 timeout=60 ECC errors
HEALTH
    SERVER_PID=
}

teardown() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID"
        wait "$SERVER_PID" || true
    fi
    if [ -n "${BATS_TEST_COMPLETED:-}" ]; then
        rm -rf "$T"
    else
        echo "# server log:" >&3
        sed 's/^/#   /' "$T/server.log" >&3 2>/dev/null || true
        rm -rf "$T"
    fi
}

# Starts the server (log verbosity $1, default 2) and waits until both sockets answer.
start_server() {
    "$SERVER" --registry-dir "$REG_DIR" --plugin-dir "$PLUGIN_DIR" --driver-name "$DRIVER" \
        --health-file "$T/health" --ready-file "$T/ready" -v "${1:-2}" 2>"$T/server.log" &
    SERVER_PID=$!
    for _ in $(seq 1 100); do
        if [ -S "$REG_SOCK" ] && [ -S "$DRA_SOCK" ]; then
            return 0
        fi
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.05
    done
    cat "$T/server.log" >&2
    return 1
}

now_ms() {
    date +%s%3N
}

@test "register: GetInfo fields, v1 chosen, NotifyRegistrationStatus, ready file" {
    start_server
    run "$STANDIN" register --registry-dir "$REG_DIR" --timeout 5
    assert_success
    assert_line --index 0 "socket=$REG_SOCK"
    assert_line --index 1 "type=DRAPlugin"
    assert_line --index 2 "driver=$DRIVER"
    assert_line --index 3 "endpoint=$DRA_SOCK"
    assert_line --index 4 "supported_versions=v1.DRAPlugin,v1beta1.DRAPlugin,v1.DRAResourceHealth,v1alpha1.DRAResourceHealth"
    assert_line --index 5 "version=v1.DRAPlugin"
    assert_line --index 6 "health_service=true"
    assert_line --index 7 "health_version=v1.DRAResourceHealth"
    assert_line --index 8 "registered=true"
    assert_line --index 9 "notify_status=OK"
    assert_file_exists "$T/ready"
    grep -q "kubelet registered driver $DRIVER" "$T/server.log"
}

@test "register: the plugin's order decides; a v1beta1-only kubelet gets v1beta1" {
    start_server
    run "$STANDIN" register --registry-dir "$REG_DIR" --driver "$DRIVER" \
        --kubelet-services v1beta1.DRAPlugin,v1.DRAPlugin
    assert_success
    assert_line "version=v1.DRAPlugin"
    run "$STANDIN" register --registry-dir "$REG_DIR" --kubelet-services v1beta1.DRAPlugin
    assert_success
    assert_line "version=v1beta1.DRAPlugin"
}

@test "register: the health service is the kubelet's newest the plugin offers (1.37: v1, 1.34-1.36: v1alpha1)" {
    start_server
    run "$STANDIN" register --registry-dir "$REG_DIR" --kubelet-health-services v1alpha1.DRAResourceHealth
    assert_success
    assert_line "version=v1.DRAPlugin"
    assert_line "health_service=true"
    assert_line "health_version=v1alpha1.DRAResourceHealth"
    # The kubelet's order decides, not the plugin's.
    run "$STANDIN" register --registry-dir "$REG_DIR" \
        --kubelet-health-services v1alpha1.DRAResourceHealth,v1.DRAResourceHealth
    assert_success
    assert_line "health_version=v1alpha1.DRAResourceHealth"
    run "$STANDIN" register --registry-dir "$REG_DIR" --kubelet-health-services ""
    assert_success
    assert_line "health_service=false"
    assert_line "health_version="
    assert_line "registered=true"
}

@test "register: a refusal reaches the plugin with the kubelet's reason" {
    start_server
    run "$STANDIN" register --registry-dir "$REG_DIR" --kubelet-services v1alpha4.NodeService
    assert_failure 1
    assert_line "registered=false"
    assert_line --partial "error=none of services supported by the plugin [v1.DRAPlugin v1beta1.DRAPlugin v1.DRAResourceHealth v1alpha1.DRAResourceHealth] are supported by the kubelet [v1alpha4.NodeService]"
    grep -q "kubelet refused to register driver $DRIVER: none of services" "$T/server.log"
    assert_file_not_exists "$T/ready"
}

@test "register: no plugin socket is a connect error (3); other drivers are not ours" {
    mkdir -p "$REG_DIR"
    run "$STANDIN" register --registry-dir "$REG_DIR" --timeout 0.3
    assert_failure 3
    assert_output --partial "no socket found"
    start_server
    run "$STANDIN" register --registry-dir "$REG_DIR" --driver gpu.other.example.com --timeout 0.3
    assert_failure 3
    assert_output --partial "is driver $DRIVER, not gpu.other.example.com"
}

@test "prepare: several claims, one failing, each answered on its own (v1 with share_id)" {
    start_server
    run "$STANDIN" prepare --endpoint "$DRA_SOCK" ns/c1/u1 ns/fail-c2/u2 ns/two-shared/u3 ns/empty/u4
    assert_failure 1
    assert_line --index 0 "claim=u1 pool=node-a device=gpu-0 requests=gpu cdi=k8s.gpu.fakehw.example.com/gpu=u1-gpu-0"
    assert_line --index 1 "claim=u2 error=claim ns/fail-c2 (uid u2): fake failure"
    assert_line --index 2 "claim=u3 pool=node-a device=gpu-0 requests=gpu cdi=k8s.gpu.fakehw.example.com/gpu=u3-gpu-0 share_id=share-u3"
    assert_line --index 3 "claim=u3 pool=node-a device=gpu-1 requests=gpu,extra cdi=k8s.gpu.fakehw.example.com/gpu=u3-gpu-1 share_id=share-u3"
    assert_line --index 4 "claim=u4 devices=0"
    run "$STANDIN" prepare --endpoint "$DRA_SOCK" ns/c1/u1 ns/two-shared/u3
    assert_success
}

@test "prepare: v1beta1 answers carry no share_id; --json lists every claim" {
    start_server
    run "$STANDIN" prepare --api v1beta1 --endpoint "$DRA_SOCK" ns/two-shared/u3
    assert_success
    refute_output --partial "share_id"
    assert_line "claim=u3 pool=node-a device=gpu-1 requests=gpu,extra cdi=k8s.gpu.fakehw.example.com/gpu=u3-gpu-1"
    run "$STANDIN" prepare --json --endpoint "$DRA_SOCK" ns/shared-a/u1 ns/fail-b/u2
    assert_failure 1
    [ "$(jq -r '.claims | length' <<<"$output")" = 2 ]
    [ "$(jq -r '.claims[0].devices[0].share_id' <<<"$output")" = share-u1 ]
    [ "$(jq -r '.claims[1].error' <<<"$output")" = "claim ns/fail-b (uid u2): fake failure" ]
}

@test "unprepare: every claim of the request gets an entry" {
    start_server
    run "$STANDIN" unprepare --json --endpoint "$DRA_SOCK" ns/c1/u1 ns/fail-c2/u2 ns//u3 ns/c4/u4
    assert_failure 1
    [ "$(jq -r '[.claims[].uid] | join(",")' <<<"$output")" = "u1,u2,u3,u4" ]
    [ "$(jq -r '[.claims[] | select(.error == null)] | length' <<<"$output")" = 2 ]
    [ "$(jq -r '.claims[2].error' <<<"$output")" = "claim ns/ (uid u3): name is empty" ]
    run "$STANDIN" unprepare --api v1beta1 --endpoint "$DRA_SOCK" ns/c1/u1 ns/gone/u9
    assert_success
    assert_line --index 0 "claim=u1 ok"
    assert_line --index 1 "claim=u9 ok"
}

@test "protocol: unknown method is UNIMPLEMENTED, garbage is INVALID_ARGUMENT, empty uid too" {
    start_server
    run "$STANDIN" call --endpoint "$DRA_SOCK" --method /k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/Nope
    assert_failure 3
    assert_line "status=UNIMPLEMENTED"
    run "$STANDIN" call --endpoint "$REG_SOCK" --method /k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources
    assert_failure 3
    assert_line "status=UNIMPLEMENTED"
    run "$STANDIN" call --endpoint "$DRA_SOCK" \
        --method /k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources --hex ffffffffff
    assert_failure 3
    assert_line "status=INVALID_ARGUMENT"
    assert_line --partial "cannot decode the request as k8s.io.kubelet.pkg.apis.dra.v1.NodePrepareResourcesRequest"
    run "$STANDIN" prepare --endpoint "$DRA_SOCK" ns/c1/
    assert_failure 3
    assert_output --partial "INVALID_ARGUMENT: NodePrepareResources: claims[0] (ns/c1): uid is empty"
    # The server is still fine afterwards.
    run "$STANDIN" call --endpoint "$REG_SOCK" --method /pluginregistration.Registration/GetInfo
    assert_success
    assert_line "status=OK"
}

@test "health: full list at open and after an update; prepares run meanwhile" {
    start_server
    "$STANDIN" watch-health --endpoint "$DRA_SOCK" --count 2 --timeout 20 >"$T/watch.out" 2>"$T/watch.err" &
    local watch=$!
    for _ in $(seq 1 100); do
        grep -q -- '^--- update=1' "$T/watch.out" && break
        sleep 0.05
    done
    run cat "$T/watch.out"
    assert_line --index 0 "pool=node-a device=gpu-0 health=HEALTHY last_updated=1700000000 timeout=0 message="
    assert_line --index 1 "pool=node-a device=gpu-1 health=UNHEALTHY last_updated=1700000100 timeout=60 message=ECC errors"
    assert_line --index 2 "--- update=1 devices=2"

    # The stream is open; prepares still go through, and a slow prepare does
    # not hold up a fast one.
    "$STANDIN" prepare --endpoint "$DRA_SOCK" ns/slow-a/us >"$T/slow.out" &
    local slow=$!
    sleep 0.2
    local t0
    t0=$(now_ms)
    run "$STANDIN" prepare --endpoint "$DRA_SOCK" ns/c1/u1
    assert_success
    assert_line --partial "claim=u1 pool=node-a device=gpu-0"
    [ $(($(now_ms) - t0)) -lt 1000 ]
    wait "$slow"
    grep -q "claim=us pool=node-a" "$T/slow.out"

    cat >"$T/health" <<HEALTH
node-a gpu-0 unhealthy 1700000200 fell off the bus
node-a gpu-1 healthy 1700000300
node-a gpu-2 unknown 1700000300
HEALTH
    kill -USR1 "$SERVER_PID"
    wait "$watch"
    run cat "$T/watch.out"
    assert_line --index 3 "pool=node-a device=gpu-0 health=UNHEALTHY last_updated=1700000200 timeout=0 message=fell off the bus"
    assert_line --index 4 "pool=node-a device=gpu-1 health=HEALTHY last_updated=1700000300 timeout=0 message="
    assert_line --index 5 "pool=node-a device=gpu-2 health=UNKNOWN last_updated=1700000300 timeout=0 message="
    assert_line --index 6 "--- update=2 devices=3"
}

@test "health: every open stream gets the update, of either version" {
    start_server
    "$STANDIN" watch-health --json --endpoint "$DRA_SOCK" --count 2 --timeout 20 \
        --service v1.DRAResourceHealth >"$T/w1" &
    local w1=$!
    "$STANDIN" watch-health --json --endpoint "$DRA_SOCK" --count 2 --timeout 20 \
        --service v1alpha1.DRAResourceHealth >"$T/w2" &
    local w2=$!
    for _ in $(seq 1 100); do
        [ -s "$T/w1" ] && [ -s "$T/w2" ] && break
        sleep 0.05
    done
    echo "node-a gpu-0 unhealthy 1700000500 gone" >"$T/health"
    kill -USR1 "$SERVER_PID"
    wait "$w1"
    wait "$w2"
    for f in "$T/w1" "$T/w2"; do
        [ "$(jq -s 'length' "$f")" = 2 ]
        [ "$(jq -rs '.[0].devices[1].message' "$f")" = "ECC errors" ]
        [ "$(jq -rs '.[1].devices[0].health' "$f")" = UNHEALTHY ]
        [ "$(jq -rs '.[1].devices | length' "$f")" = 1 ]
    done
}

@test "health: the v1alpha1 stream gives the same list; an unknown service is a usage error" {
    start_server
    run "$STANDIN" watch-health --endpoint "$DRA_SOCK" --count 1 --timeout 5 --service v1alpha1.DRAResourceHealth
    assert_success
    assert_line --index 1 "pool=node-a device=gpu-1 health=UNHEALTHY last_updated=1700000100 timeout=60 message=ECC errors"
    assert_line --index 2 "--- update=1 devices=2"
    run "$STANDIN" watch-health --endpoint "$DRA_SOCK" --count 1 --timeout 5 --service v2.DRAResourceHealth
    assert_failure 2
    assert_output --partial "--service wants v1.DRAResourceHealth or v1alpha1.DRAResourceHealth"
    # A health version the plugin does not serve is UNIMPLEMENTED.
    run "$STANDIN" call --endpoint "$DRA_SOCK" --method /v1beta1.DRAResourceHealth/NodeWatchResources
    assert_line "status=UNIMPLEMENTED"
}

@test "shutdown: SIGTERM with a health stream open ends within 1 s and removes the sockets" {
    start_server
    "$STANDIN" watch-health --endpoint "$DRA_SOCK" --timeout 20 >"$T/watch.out" 2>"$T/watch.err" &
    local watch=$!
    for _ in $(seq 1 100); do
        grep -q -- '^--- update=1' "$T/watch.out" && break
        sleep 0.05
    done
    local t0 elapsed
    t0=$(now_ms)
    kill -TERM "$SERVER_PID"
    wait "$SERVER_PID"
    elapsed=$(($(now_ms) - t0))
    SERVER_PID=
    echo "shutdown took ${elapsed} ms"
    [ "$elapsed" -lt 1000 ]
    local rc=0
    wait "$watch" || rc=$?
    [ "$rc" = 1 ]
    grep -q "UNAVAILABLE: the plugin is shutting down" "$T/watch.err"
    assert_file_not_exists "$REG_SOCK"
    assert_file_not_exists "$DRA_SOCK"
}

@test "shutdown: a prepare still running is cancelled after the grace period, cleanly" {
    start_server
    "$STANDIN" prepare --endpoint "$DRA_SOCK" ns/slow-a/us >"$T/slow.out" 2>"$T/slow.err" &
    local slow=$!
    sleep 0.3
    kill -TERM "$SERVER_PID"
    local rc=0
    wait "$slow" || rc=$?
    [ "$rc" = 3 ]
    grep -q "UNAVAILABLE" "$T/slow.err"
    # The server waits for the handler to return, then exits cleanly.
    wait "$SERVER_PID"
    SERVER_PID=
    grep -q "cancelling 1 call(s) still open" "$T/server.log"
}

@test "sockets: a stale socket file is replaced; parents are 0750; a regular file is refused" {
    mkdir -p "$PLUGIN_DIR"
    /usr/bin/python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$DRA_SOCK"
    [ -S "$DRA_SOCK" ]
    start_server
    run "$STANDIN" prepare --endpoint "$DRA_SOCK" ns/c1/u1
    assert_success
    [ "$(stat -c %a "$REG_DIR")" = 750 ]
    [ "$(stat -c %a "$DRA_SOCK")" = 660 ]
    kill -TERM "$SERVER_PID"
    wait "$SERVER_PID"
    SERVER_PID=
    echo "not a socket" >"$DRA_SOCK"
    run "$SERVER" --registry-dir "$REG_DIR" --plugin-dir "$PLUGIN_DIR"
    assert_failure
    assert_output --partial "$DRA_SOCK exists and is not a socket; not removing it"
    [ "$(cat "$DRA_SOCK")" = "not a socket" ]
}

@test "wire: an independent grpcio client sees the kubelet's paths and field numbers" {
    start_server
    run /usr/bin/python3 "$BATS_TEST_DIRNAME/wire_check.py" "$REG_SOCK" "$DRA_SOCK" "$DRIVER"
    assert_success
    assert_line "wire check passed"
}

@test "kubelet-standin: usage errors exit 2, --help 0, no plugin 3" {
    run "$STANDIN" --help
    assert_success
    assert_output --partial "watch-health"
    run "$STANDIN" prepare --help
    assert_success
    run "$STANDIN" frobnicate
    assert_failure 2
    run "$STANDIN" prepare --endpoint "$T/none.sock" not-a-claim
    assert_failure 2
    assert_output --partial 'claim "not-a-claim" is not NAMESPACE/NAME/UID'
    run "$STANDIN" prepare --api v2 --endpoint "$T/none.sock" a/b/c
    assert_failure 2
    run "$STANDIN" prepare --endpoint "$T/none.sock" a/b/c
    assert_failure 3
    assert_output --partial "UNAVAILABLE"
    run "$STANDIN" watch-health --endpoint "$T/none.sock" --timeout 2
    assert_failure 3
}

@test "prepare/unprepare: a claim repeated in one request is done and answered once" {
    start_server
    run "$STANDIN" prepare --endpoint "$DRA_SOCK" ns/c1/u1 ns/fail-c2/u2 ns/c1/u1 ns/fail-c2/u2 ns/c3/u3
    assert_failure 1
    assert_equal "${#lines[@]}" 3
    assert_line --index 0 --partial "claim=u1 pool=node-a device=gpu-0"
    assert_line --index 1 "claim=u2 error=claim ns/fail-c2 (uid u2): fake failure"
    assert_line --index 2 --partial "claim=u3 pool=node-a device=gpu-0"
    run "$STANDIN" unprepare --api v1beta1 --endpoint "$DRA_SOCK" ns/c1/u1 ns/c1/u1 ns/c3/u3
    assert_success
    assert_equal "${#lines[@]}" 2
    assert_line --index 0 "claim=u1 ok"
    assert_line --index 1 "claim=u3 ok"
    run grep -c "] prepared claim ns/c1 (uid u1)" "$T/server.log"
    assert_output 1
    run grep -c "] unprepared claim ns/c1 (uid u1)" "$T/server.log"
    assert_output 1
    run grep "NodePrepareResources (v1): " "$T/server.log"
    assert_output --partial "NodePrepareResources (v1): 3 claim(s), 1 failed"
    run grep "NodeUnprepareResources (v1beta1): " "$T/server.log"
    assert_output --partial "NodeUnprepareResources (v1beta1): 2 claim(s), 0 failed"
}

@test "hostile: a NUL byte inside a claim field is refused naming the claim and field" {
    start_server
    run /usr/bin/python3 "$BATS_TEST_DIRNAME/hostile_requests.py" "$DRA_SOCK" nul-uid
    assert_success
    assert_line "nul-uid passed"
    run grep -c "] prepared claim ns/c1 (uid uid-1)" "$T/server.log"
    assert_output 1
}

@test "hostile: claims per request are limited; failed claims are logged as a count" {
    start_server
    run /usr/bin/python3 "$BATS_TEST_DIRNAME/hostile_requests.py" "$DRA_SOCK" claim-limit
    assert_success
    assert_line "claim-limit passed"
    # 512 failed claims: the first 5 on a line each, then one count.
    run grep -c "^E.*NodePrepareResources (v1): claim ns/ (uid u" "$T/server.log"
    assert_output 5
    run grep -c "NodePrepareResources (v1): 512 of 512 claim(s) failed; the first 5 are logged" "$T/server.log"
    assert_output 1
}

@test "hostile: health streams have their own budget and never starve prepare" {
    start_server
    run /usr/bin/python3 "$BATS_TEST_DIRNAME/hostile_requests.py" "$DRA_SOCK" streams
    assert_success
    assert_line "streams passed"
}

@test "wire: a unary answer is one write: response HEADERS, DATA and trailers in one read" {
    start_server
    # Raw HTTP/2: grpc core reads a registered method's request before the
    # call reaches us, and the initial metadata goes out with the answer, so
    # the client wakes once per call (even when the handler takes 1.5 s).
    run /usr/bin/python3 "$BATS_TEST_DIRNAME/h2_calls.py" "$DRA_SOCK" one-write
    assert_success
    assert_line "one-write passed"
}

@test "protocol: a call without a request message is INVALID_ARGUMENT; an empty one is served" {
    start_server
    run /usr/bin/python3 "$BATS_TEST_DIRNAME/h2_calls.py" "$DRA_SOCK" no-message
    assert_success
    assert_line "no-message passed"
    run /usr/bin/python3 "$BATS_TEST_DIRNAME/hostile_requests.py" "$DRA_SOCK" no-message
    assert_success
    assert_line "no-message passed"
    # The same on the registration socket, whose methods are registered too.
    run "$STANDIN" call --endpoint "$REG_SOCK" --method /pluginregistration.Registration/GetInfo
    assert_success
    run "$STANDIN" call --endpoint "$REG_SOCK" --method /pluginregistration.Registration/Nope
    assert_failure 3
    assert_line "status=UNIMPLEMENTED"
    assert_line "message=unknown method /pluginregistration.Registration/Nope"
}

@test "health: a stream gets its response headers at once, then its first message promptly" {
    start_server
    run /usr/bin/python3 "$BATS_TEST_DIRNAME/h2_calls.py" "$DRA_SOCK" stream
    assert_success
    assert_line "stream passed"
    "$STANDIN" watch-health --endpoint "$DRA_SOCK" --count 1 --timeout 20 >"$T/watch.out" &
    local watch=$! t0
    t0=$(now_ms)
    wait "$watch"
    [ $(($(now_ms) - t0)) -lt 3000 ]
    assert_file_contains "$T/watch.out" "^--- update=1 devices=2"
}

@test "trace: -v 3 logs a registered unary call's timeline" {
    start_server 3
    run "$STANDIN" prepare --endpoint "$DRA_SOCK" ns/c1/u1
    assert_success
    run "$STANDIN" unprepare --endpoint "$DRA_SOCK" ns/c1/u1
    assert_success
    run grep -E "rpc /k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/Node(Prepare|Unprepare)Resources on dra: [0-9.]+ ms from arrival to sent: request read [0-9.]+, to a worker [0-9.]+, handler [0-9.]+, reply sent [0-9.]+" "$T/server.log"
    assert_equal "${#lines[@]}" 2
}

@test "hostile: unary calls over their budget are RESOURCE_EXHAUSTED at once" {
    TEST_WORKERS=1 start_server
    run /usr/bin/python3 "$BATS_TEST_DIRNAME/hostile_requests.py" "$DRA_SOCK" unary-limit
    # 255 slow prepares are still queued behind the one worker: no clean
    # shutdown to wait for.
    kill -KILL "$SERVER_PID"
    wait "$SERVER_PID" || true
    SERVER_PID=
    assert_success
    assert_line "unary-limit passed"
}

@test "threads: slow unprepares that come together are all answered, each on its own call" {
    start_server
    # Each takes FAKE_PREPARE_SLOW_MS (1.5 s).  One the poller runs holds up
    # the reading of the socket until it is done (grpc core's poll engine,
    # docs/grpc.md): at most one after another, 4.5 s for three, never lost
    # or cut short.
    local start pids=() i
    start=$(date +%s%3N)
    for i in 1 2 3; do
        "$STANDIN" unprepare --endpoint "$DRA_SOCK" "ns/slowun-$i/u$i" >"$T/un$i.out" &
        pids+=($!)
    done
    for i in 0 1 2; do wait "${pids[$i]}"; done
    local took=$(($(date +%s%3N) - start))
    for i in 1 2 3; do grep -q "claim=u$i ok" "$T/un$i.out"; done
    [ "$took" -ge 1500 ] || fail "three slow unprepares took ${took} ms: the fake's delay did not apply"
    [ "$took" -lt 9000 ] || fail "three slow unprepares took ${took} ms"
}
