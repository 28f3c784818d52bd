#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# apiserver-standin: the /standin/ control API (faults, request log, token)
# and the --event-log file.

setup() {
    load helpers
    start_standin --node node-1
}

teardown() {
    stop_standin
}

fault() {
    api POST /standin/faults "$1"
}

@test "status faults: the next N requests get the status and a Status body" {
    fault '{"status":500,"count":2}'
    expect 201 '.id == 1' '.remaining == 2'
    api GET /api/v1/nodes/node-1
    expect 500 '.kind == "Status"' '.reason == "InternalError"' '.message == "apiserver-standin: injected fault (status 500)"'
    api GET /api/v1/nodes/node-1
    expect 500
    api GET /api/v1/nodes/node-1
    expect 200
    api GET /standin/faults
    expect 200 '.faults == []'
}

@test "429 with Retry-After, and method/path filters" {
    fault '{"status":429,"retryAfter":3,"method":"PUT","path":"/apis/resource.k8s.io/"}'
    api GET "$SLICES"
    expect 200
    run curl -s -D - -o /dev/null -X PUT -H 'Content-Type: application/json' -d '{}' "$URL$SLICES/x"
    assert_output --partial "HTTP/1.1 429"
    assert_output --partial "Retry-After: 3"
}

@test "close faults drop the connection, before or after the request takes effect" {
    fault '{"close":true}'
    run curl -s "$URL/api/v1/nodes/node-1"
    assert_failure 52 # curl: empty reply from server
    fault '{"close":true,"after":true,"method":"POST"}'
    run curl -s -X POST -d '{"metadata":{"name":"n9"}}' "$URL/api/v1/nodes"
    assert_failure 52
    api GET /api/v1/nodes/n9
    expect 200
}

@test "delay faults and faults that last for some seconds" {
    fault '{"delayMs":400}'
    local t0 t1
    t0=$(date +%s%N)
    api GET /api/v1/nodes/node-1
    t1=$(date +%s%N)
    expect 200
    (((t1 - t0) / 1000000 >= 390))
    fault '{"status":503,"seconds":2}'
    api GET /api/v1/nodes/node-1
    expect 503
    api GET /api/v1/nodes/node-1
    expect 503
    sleep 2.2
    api GET /api/v1/nodes/node-1
    expect 200
}

@test "bad fault specs are refused with the reason" {
    fault '{"status":200}'
    expect 400 '.message == "fault: status must be an integer from 400 to 599"'
    fault '{"count":2}'
    expect 400 '.message == "fault: give at least one of status, close or delayMs"'
    fault '{"status":500,"colour":"red"}'
    expect 400 '.message | startswith("fault: unknown key \"colour\"")'
    fault '{"status":500,"close":true}'
    expect 400
    fault 'nope'
    expect 400 '.message == "fault: the body is not valid JSON"'
    api DELETE /standin/faults
    expect 200
}

@test "the request log records method, path, query, status and time" {
    api DELETE /standin/requests
    fault '{"status":500,"count":1}'
    local before
    before=$(date +%s%N)
    api GET /api/v1/nodes/node-1
    api GET "$SLICES?fieldSelector=spec.nodeName%3Dnode-1"
    api GET /standin/requests
    expect 200 '.requests | length == 2' \
        '.requests[0] | .method == "GET" and .path == "/api/v1/nodes/node-1" and .status == 500 and .fault == "status"' \
        '.requests[1] | .query == "fieldSelector=spec.nodeName=node-1" and .status == 200' \
        ".requests[0].timeNs >= $before"
    api DELETE /standin/requests
    api GET /standin/requests
    expect 200 '.requests == []'
}

@test "--event-log: one line per mutating request with a realtime timestamp and the object" {
    stop_standin
    local log="$BATS_TEST_TMPDIR/events.jsonl"
    start_standin --event-log "$log"
    local before
    before=$(date +%s%N)
    api POST "$SLICES" "$(slice s1 node-1 gpu.example.com '[{"name":"gpu-0","taints":[{"key":"k","effect":"NoSchedule"}]}]')"
    api GET "$SLICES/s1"
    api DELETE "$SLICES/nope"
    run jq -c '[.method, .path, .status, .resource, .name, (.object.spec.devices[0].taints[0].key // null)]' "$log"
    assert_output '["POST","/apis/resource.k8s.io/v1/resourceslices",201,"resourceslices","s1","k"]
["DELETE","/apis/resource.k8s.io/v1/resourceslices/nope",404,"resourceslices","nope",null]'
    run jq -e "select(.timeNs < $before)" "$log"
    assert_failure
}

@test "--token requires the bearer token on API requests; PUT /standin/token changes it" {
    stop_standin
    start_standin --token s3cret --node node-1
    api GET /api/v1/nodes/node-1
    expect 401 '.reason == "Unauthorized"'
    run curl -s -H 'Authorization: Bearer s3cret' "$URL/api/v1/nodes/node-1"
    assert_output --partial '"name":"node-1"'
    api PUT /standin/token '{"token":"n3w"}'
    expect 200
    run curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer s3cret' "$URL/api/v1/nodes/node-1"
    assert_output 401
    run curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer n3w' "$URL/api/v1/nodes/node-1"
    assert_output 200
    api GET /standin/nope
    expect 404
}
