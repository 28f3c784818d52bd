#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# fakehw-podresources against a fake kubelet PodResources server written in
# Python with grpcio and hand-encoded messages (fake_podresources.py): the
# method paths, field numbers and the output of List and Get.

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

TESTS=$(cd "$(dirname "$BATS_TEST_FILENAME")" && pwd)
CLIENT=${FAKEHW_BIN:?}/fakehw-podresources

setup() {
    /usr/bin/python3 -c 'import grpc' 2>/dev/null || skip "python3-grpcio is not installed"
    SOCK=$BATS_TEST_TMPDIR/kubelet.sock
    /usr/bin/python3 "$TESTS/fake_podresources.py" "$SOCK" "$TESTS/pods.json" \
        >"$BATS_TEST_TMPDIR/server.out" 2>&1 &
    SERVER=$!
    local i
    for ((i = 0; i < 100; i++)); do
        [[ -S $SOCK ]] && grep -q listening "$BATS_TEST_TMPDIR/server.out" && return 0
        sleep 0.1
    done
    cat "$BATS_TEST_TMPDIR/server.out" >&2
    return 1
}

teardown() {
    [[ -z ${SERVER-} ]] || { kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true; }
}

@test "list: one row per device of every pod's claims, pods without claims left out" {
    run -0 "$CLIENT" --socket "$SOCK"
    assert_line --index 0 --regexp '^NAMESPACE +POD +CONTAINER +CLAIM +DRIVER +POOL +DEVICE +CDI-DEVICES$'
    assert_line --index 1 --regexp '^default +trainer +main +trainer-gpu-x7k2p +gpu\.fakehw\.example\.com +node-a +gpu-0 +k8s\.gpu\.fakehw\.example\.com/gpu=uid-1-gpu-0,gpu\.fakehw\.example\.com/metadata=uid-1_gpu$'
    assert_line --index 2 --regexp '^default +trainer +main +trainer-gpu-x7k2p +gpu\.fakehw\.example\.com +node-a +gpu-3 +k8s\.gpu\.fakehw\.example\.com/gpu=uid-1-gpu-3$'
    assert_line --index 3 --regexp '^team-b +shared +a +slice +gpu\.fakehw\.example\.com +node-a +gpu-1 +-$'
    assert_line --index 4 --regexp '^team-b +shared +a +empty +- +- +- +-$'
    assert_equal "${#lines[@]}" 5
    refute_output --partial nginx
    refute_output --partial sidecar
}

@test "list --json: pods, containers, claims and devices with share IDs" {
    run -0 "$CLIENT" --socket "$SOCK" --json list
    run -0 jq -c '.pods[] | [.namespace, .name, ([.containers[].name] | join(","))]' <<<"$output"
    assert_output "$(printf '%s\n' '["default","trainer","main"]' '["team-b","shared","a"]')"
    run -0 "$CLIENT" --socket "$SOCK" --json
    assert_equal "$(jq -c '.pods[1].containers[0].claims[0].devices[0]' <<<"$output")" \
        '{"driver":"gpu.fakehw.example.com","pool":"node-a","device":"gpu-1","cdiDevices":[],"shareID":"5b1ad0e4-1d38-4a8c-9a8c-1a6c2f3d4e5f"}'
    assert_equal "$(jq -c '.pods[0].containers[0].claims[0] | [.namespace, .name, [.devices[].device]]' <<<"$output")" \
        '["default","trainer-gpu-x7k2p",["gpu-0","gpu-3"]]'
}

@test "get: one pod by namespace/name; an unknown pod is the kubelet's NOT_FOUND" {
    run -0 "$CLIENT" --socket "$SOCK" get team-b/shared
    assert_line --index 1 --regexp '^team-b +shared +a +slice '
    assert_equal "${#lines[@]}" 3
    run -0 "$CLIENT" --socket "$SOCK" --json get default/trainer
    assert_equal "$(jq -r '[.pods[].name] | join(",")' <<<"$output")" trainer
    run -0 "$CLIENT" --socket "$SOCK" get web/nginx
    assert_output "(no DRA devices)"
    run -1 "$CLIENT" --socket "$SOCK" get default/nobody
    assert_output --partial "/v1.PodResourcesLister/Get: NOT_FOUND: pod nobody not found in default"
}

@test "bad usage, an absent socket, one nobody listens on and a silent kubelet are explained" {
    run -2 "$CLIENT" --socket "$SOCK" get trainer
    assert_output --partial '"trainer" is not NAMESPACE/POD'
    run -2 "$CLIENT" --socket "$SOCK" watch
    assert_output --partial 'unknown command "watch"'
    run -2 "$CLIENT" --timeout 0
    assert_output --partial '--timeout 0: must be 1..3600 seconds'
    run -1 "$CLIENT" --socket "$BATS_TEST_TMPDIR/none.sock" --timeout 2
    assert_output "fakehw-podresources: cannot reach the kubelet's PodResources API at $BATS_TEST_TMPDIR/none.sock: there is no such socket. Is the kubelet running on this node, and is its PodResources API enabled? --socket (or PODRESOURCES_SOCKET) names another socket."
    # The default socket, when nothing is there, is named the same way.
    if [[ ! -e /var/lib/kubelet/pod-resources/kubelet.sock ]]; then
        run -1 env -u PODRESOURCES_SOCKET "$CLIENT" --timeout 2
        assert_output --partial "cannot reach the kubelet's PodResources API at /var/lib/kubelet/pod-resources/kubelet.sock: there is no such socket. Is the kubelet running"
    fi
    # A socket file that nobody listens on (the server is gone).
    /usr/bin/python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$BATS_TEST_TMPDIR/stale.sock"
    run -1 "$CLIENT" --socket "$BATS_TEST_TMPDIR/stale.sock" --timeout 2
    assert_output --partial "stale.sock: nothing listens there (a socket left by a kubelet that is gone?). Is the kubelet running"
    refute_output --partial "UNAVAILABLE"
    # A server that accepts and never answers: the deadline, named.
    /usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
time.sleep(30)' "$BATS_TEST_TMPDIR/silent.sock" &
    local silent=$!
    local i
    for ((i = 0; i < 50; i++)); do [[ -S $BATS_TEST_TMPDIR/silent.sock ]] && break; sleep 0.1; done
    run -1 "$CLIENT" --socket "$BATS_TEST_TMPDIR/silent.sock" --timeout 1
    kill "$silent"
    wait "$silent" 2>/dev/null || true
    assert_output --partial "silent.sock /v1.PodResourcesLister/List: the kubelet did not answer within 1 s (--timeout)"
}
