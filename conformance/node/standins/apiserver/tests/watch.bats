#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# apiserver-standin: watches (chunked JSON event lines), from a list's
# resourceVersion, with the initial state, with field selectors, and 410.

setup() {
    load helpers
    start_standin --node node-1
}

teardown() {
    stop_standin
}

# watch_bg PATH_AND_QUERY: streams a watch into $BATS_TEST_TMPDIR/watch; WATCH_PID.
watch_bg() {
    curl -sN -D "$BATS_TEST_TMPDIR/headers" --max-time 10 "$URL$1" >"$BATS_TEST_TMPDIR/watch" &
    WATCH_PID=$!
}

# watch_has REGEX: waits (10 s at most) until a line of the watch matches.
watch_has() {
    local i
    for ((i = 0; i < 100; i++)); do
        grep -q -- "$1" "$BATS_TEST_TMPDIR/watch" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "the watch never sent a line matching $1" >&2
    return 1
}

# watch_events_until REGEX: once a line of the watch matches, ends it and
# prints [type, name] per event: a test that waits for its last event
# rather than for the watch's timeout, however slow the host.
watch_events_until() {
    watch_has "$1" || return 1
    kill "$WATCH_PID" 2>/dev/null || true
    wait "$WATCH_PID" 2>/dev/null || true
    jq -c '[.type, .object.metadata.name]' "$BATS_TEST_TMPDIR/watch"
}

# watch_events: waits for the watch to end (not under `run`: a subshell
# cannot wait for it) and prints [type, name] per event.
watch_events() {
    wait "$WATCH_PID"
    jq -c '[.type, .object.metadata.name]' "$BATS_TEST_TMPDIR/watch"
}

@test "a watch from a list's resourceVersion gets the later changes, chunked" {
    api POST "$SLICES" "$(slice before node-1 gpu.example.com)"
    api GET "$SLICES"
    local rv
    rv=$(jq -r .metadata.resourceVersion <<<"$BODY")
    watch_bg "$SLICES?watch=true&resourceVersion=$rv&timeoutSeconds=9"
    api POST "$SLICES" "$(slice s1 node-1 gpu.example.com)"
    api PUT "$SLICES/s1" "$(jq -c '.spec.pool.generation = 2' <<<"$BODY")"
    api DELETE "$SLICES/s1"
    watch_events_until '"DELETED"' >"$BATS_TEST_TMPDIR/events"
    run cat "$BATS_TEST_TMPDIR/events"
    assert_output '["ADDED","s1"]
["MODIFIED","s1"]
["DELETED","s1"]'
    run grep -i '^transfer-encoding: chunked' "$BATS_TEST_TMPDIR/headers"
    assert_success
    # Each event object is complete, kind and apiVersion included.
    run jq -r '.object.kind' "$BATS_TEST_TMPDIR/watch"
    assert_output "ResourceSlice
ResourceSlice
ResourceSlice"
}

@test "a watch without resourceVersion starts with the current objects" {
    api POST "$SLICES" "$(slice a node-1 gpu.example.com)"
    api POST "$SLICES" "$(slice b node-1 gpu.example.com)"
    watch_bg "$SLICES?watch=true&timeoutSeconds=1"
    watch_events >"$BATS_TEST_TMPDIR/events"
    run cat "$BATS_TEST_TMPDIR/events"
    assert_output '["ADDED","a"]
["ADDED","b"]'
}

@test "a watch with a field selector sees only its objects" {
    watch_bg "$SLICES?watch=1&resourceVersion=0&timeoutSeconds=9&fieldSelector=spec.nodeName%3Dnode-1"
    api POST "$SLICES" "$(slice mine node-1 gpu.example.com)"
    api POST "$SLICES" "$(slice theirs node-2 gpu.example.com)"
    # One more of node-1's after theirs: once it is there, theirs was
    # either sent already or never will be.
    api POST "$SLICES" "$(slice mine-last node-1 gpu.example.com)"
    watch_events_until '"mine-last"' >"$BATS_TEST_TMPDIR/events"
    run cat "$BATS_TEST_TMPDIR/events"
    assert_output '["ADDED","mine"]
["ADDED","mine-last"]'
}

@test "a resourceVersion older than the history ends the watch with a 410 ERROR event" {
    stop_standin
    start_standin --watch-history 2
    local i
    for i in 1 2 3 4; do api POST "$SLICES" "$(slice "s$i" node-1 gpu.example.com)"; done
    watch_bg "$SLICES?watch=true&resourceVersion=1&timeoutSeconds=5"
    wait "$WATCH_PID"
    run jq -c '[.type, .object.code, .object.reason]' "$BATS_TEST_TMPDIR/watch"
    assert_output '["ERROR",410,"Expired"]'
    run jq -r .object.message "$BATS_TEST_TMPDIR/watch"
    assert_output "too old resource version: 1 (3)"
    # From a version still in the history the events replay.
    watch_bg "$SLICES?watch=true&resourceVersion=2&timeoutSeconds=1"
    watch_events >"$BATS_TEST_TMPDIR/events"
    run cat "$BATS_TEST_TMPDIR/events"
    assert_output '["ADDED","s3"]
["ADDED","s4"]'
}

@test "bad watch parameters are 400" {
    api GET "$SLICES?watch=true&resourceVersion=abc"
    expect 400 '.message | test("invalid resource version")'
    api GET "$SLICES?watch=true&fieldSelector=spec.foo%3Dx"
    expect 400 '.message | test("field label not supported")'
}

@test "a watch-list request: the current objects, a BOOKMARK that ends them, then changes" {
    api POST "$SLICES" "$(slice s1 node-1 gpu.example.com)"
    api POST "$SLICES" "$(slice s2 node-2 gpu.example.com)"
    local q="allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true"
    watch_bg "$SLICES?watch=true&$q&fieldSelector=spec.nodeName%3Dnode-1&timeoutSeconds=8"
    # The change comes after the initial events, however loaded the machine.
    watch_has '"BOOKMARK"'
    api POST "$SLICES" "$(slice s3 node-1 gpu.example.com)"
    local rv3
    rv3=$(jq -r .metadata.resourceVersion <<<"$BODY")
    watch_has '"s3"'
    kill "$WATCH_PID"
    wait "$WATCH_PID" || true
    run jq -c '[.type, .object.metadata.name // .object.metadata.annotations]' "$BATS_TEST_TMPDIR/watch"
    assert_output '["ADDED","s1"]
["BOOKMARK",{"k8s.io/initial-events-end":"true"}]
["ADDED","s3"]'
    # The bookmark carries the resourceVersion the initial events are of, and the kind.
    run jq -r 'select(.type == "BOOKMARK") | .object | "\(.kind) \(.apiVersion) \(.metadata.resourceVersion)"' \
        "$BATS_TEST_TMPDIR/watch"
    assert_output "ResourceSlice resource.k8s.io/v1 $((rv3 - 1))"
    # Without its companions it is refused, as the real server does.
    api GET "$SLICES?watch=true&sendInitialEvents=true&allowWatchBookmarks=true"
    expect 422 '.message | test("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")'
    api GET "$SLICES?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
    expect 422 '.message | test("sendInitialEvents requires setting allowWatchBookmarks to true")'
    api GET "$SLICES?watch=true&sendInitialEvents=maybe"
    expect 400
}
