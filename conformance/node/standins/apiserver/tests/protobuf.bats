#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# apiserver-standin: the protobuf media type (what client-go sends for
# built-in types).  Bodies are made and read by protoc from the upstream
# .proto files (pbtool.py), not by the stand-in's own code.

setup() {
    load helpers
    start_standin --node node-1
    PB="python3 $BATS_TEST_DIRNAME/pbtool.py"
    SLICE_MSG=k8s.io.api.resource.v1.ResourceSlice
    STATUS_MSG=k8s.io.apimachinery.pkg.apis.meta.v1.Status
}

teardown() {
    stop_standin
}

PROTO=application/vnd.kubernetes.protobuf

# pb METHOD PATH [BODY_FILE]: a request with a protobuf body that accepts
# protobuf first (ACCEPT overrides); sets STATUS, CTYPE, the answer in
# $BATS_TEST_TMPDIR/answer and, when it is JSON, BODY.
pb() {
    local method=$1 path=$2 file=${3:-} out
    local args=(-s -o "$BATS_TEST_TMPDIR/answer" -w '%{http_code} %{content_type}' -X "$method"
        -H "Accept: ${ACCEPT:-$PROTO, application/json}")
    [[ -z $file ]] || args+=(-H "Content-Type: $PROTO" --data-binary "@$file")
    out=$(curl "${args[@]}" "$URL$path")
    STATUS=${out%% *}
    CTYPE=${out#* }
    BODY=
    [[ $CTYPE != application/json ]] || BODY=$(cat "$BATS_TEST_TMPDIR/answer")
}

# decoded MESSAGE: the last answer as protobuf text ("kind=.. apiVersion=.." first).
decoded() {
    $PB decode "$1" <"$BATS_TEST_TMPDIR/answer"
}

# encode KIND MESSAGE FILE: text format on stdin into an enveloped body.
encode() {
    $PB encode "$1" "${4:-resource.k8s.io/v1}" "$2" >"$3"
}

# A ResourceSlice as the Go marshaller writes it: every non-pointer field is
# on the wire, zero or not.
slice_text() {
    cat <<EOF
metadata { name: "$1" generateName: "" namespace: "" selfLink: "" uid: "" resourceVersion: ""
  generation: 0 creationTimestamp {} }
spec { driver: "gpu.example.com" pool { name: "node-1" generation: 0 resourceSliceCount: 1 }
  nodeName: "node-1"
  devices { name: "gpu-0" bindsToNode: false
    attributes { key: "index" value { int: 0 } }
    attributes { key: "productName" value { string: "NVIDIA A100" } }
    attributes { key: "blank" value { string: "" } }
    capacity { key: "memory" value { value { string: "80Gi" } } } }
}
EOF
}

@test "GET and LIST answer protobuf when Accept prefers it: envelope, kind, fields" {
    api POST "$SLICES" "$(slice s1 node-1 gpu.example.com \
        '[{"name":"gpu-0","attributes":{"index":{"int":0},"model":{"string":"A100"}},"capacity":{"memory":{"value":"80Gi"}}}]')"
    expect 201
    pb GET "$SLICES/s1"
    [[ $STATUS == 200 && $CTYPE == "$PROTO" ]] || { echo "$STATUS $CTYPE"; return 1; }
    run decoded "$SLICE_MSG"
    assert_success
    assert_line --index 0 "kind=ResourceSlice apiVersion=resource.k8s.io/v1"
    assert_output --partial 'name: "s1"'
    assert_output --partial 'driver: "gpu.example.com"'
    assert_output --regexp 'key: "index"[[:space:]]+value \{[[:space:]]+int: 0'
    assert_output --regexp 'key: "memory"[[:space:]]+value \{[[:space:]]+value \{[[:space:]]+string: "80Gi"'
    # creationTimestamp is a Time: seconds, no nanos.
    assert_output --regexp 'creationTimestamp \{[[:space:]]+seconds: [0-9]{10}[[:space:]]+\}'

    pb GET "$SLICES"
    [[ $STATUS == 200 ]]
    run decoded k8s.io.api.resource.v1.ResourceSliceList
    assert_line --index 0 "kind=ResourceSliceList apiVersion=resource.k8s.io/v1"
    assert_output --partial 'items {'
    assert_output --regexp 'metadata \{[[:space:]]+resourceVersion: "[0-9]+"'
}

@test "a protobuf ResourceSlice is stored as the JSON a Go client means" {
    slice_text s2 | encode ResourceSlice "$SLICE_MSG" "$BATS_TEST_TMPDIR/s2.pb"
    pb POST "$SLICES" "$BATS_TEST_TMPDIR/s2.pb"
    [[ $STATUS == 201 && $CTYPE == "$PROTO" ]] || { echo "$STATUS $CTYPE"; return 1; }
    run decoded "$SLICE_MSG"
    assert_output --regexp 'uid: "[0-9a-f-]{36}"'
    api GET "$SLICES/s2"
    # omitempty zeros left out, required and pointer zeros (bindsToNode is a
    # *bool) kept, as encoding/json
    # writes the Go object; the server sets uid, generation, creationTimestamp.
    expect 200 '.metadata | has("generateName") | not' '.metadata | has("namespace") | not' \
        '.metadata.generation == 1' '.metadata.creationTimestamp | test("^20[0-9-]+T[0-9:]+Z$")' \
        '.spec.pool.generation == 0' '.spec.devices[0].attributes.index == {"int": 0}' \
        '.spec.devices[0].attributes.blank == {"string": ""}' \
        '.spec.devices[0].attributes.productName.string == "NVIDIA A100"' \
        '.spec.devices[0].capacity.memory.value == "80Gi"' '.spec.devices[0].bindsToNode == false'
}

@test "validation errors come back as a protobuf Status with the field" {
    slice_text bad | sed 's/attributes { key: "index" value { int: 0 } }/attributes { key: "index" value { int: 0 string: "x" } }/' |
        encode ResourceSlice "$SLICE_MSG" "$BATS_TEST_TMPDIR/bad.pb"
    pb POST "$SLICES" "$BATS_TEST_TMPDIR/bad.pb"
    [[ $STATUS == 422 && $CTYPE == "$PROTO" ]] || { echo "$STATUS $CTYPE"; return 1; }
    run decoded "$STATUS_MSG"
    assert_line --index 0 "kind=Status apiVersion=v1"
    assert_output --partial 'reason: "Invalid"'
    assert_output --partial 'code: 422'
    assert_output --partial 'field: "spec.devices[0].attributes[index]"'
    # A 404 is a protobuf Status too.
    pb GET "$SLICES/missing"
    [[ $STATUS == 404 ]]
    run decoded "$STATUS_MSG"
    assert_output --partial 'reason: "NotFound"'
}

@test "bodies that are not a readable envelope are 400 and say why" {
    local ACCEPT=application/json
    printf 'k8s\0\n\x05\n\x03' >"$BATS_TEST_TMPDIR/trunc.pb"
    pb POST "$SLICES" "$BATS_TEST_TMPDIR/trunc.pb"
    expect 400 '.reason == "BadRequest"' '.message | test("envelope .* malformed")'
    echo 'metadata { name: "x" }' | encode Pod k8s.io.api.core.v1.Pod "$BATS_TEST_TMPDIR/pod.pb" v1
    pb POST "$SLICES" "$BATS_TEST_TMPDIR/pod.pb"
    expect 400 '.message | test("no kind \"Pod\" is registered for version \"v1\"")'
    # A field of the wrong wire type names its path.
    printf 'k8s\0\n\x23\n\x12resource.k8s.io/v1\x12\x0dResourceSlice\x12\x04\x12\x02\x08\x01' \
        >"$BATS_TEST_TMPDIR/wire.pb"
    pb POST "$SLICES" "$BATS_TEST_TMPDIR/wire.pb"
    expect 400 '.message | test("decoding ResourceSlice: spec.driver: wrong wire type")'
    # The error of a client that accepts protobuf is protobuf.
    ACCEPT=
    printf '{"metadata":{}}' >"$BATS_TEST_TMPDIR/json.pb"
    pb POST "$SLICES" "$BATS_TEST_TMPDIR/json.pb"
    [[ $STATUS == 400 ]]
    run decoded "$STATUS_MSG"
    assert_output --partial 'magic bytes'
    api GET "$SLICES"
    expect 200 '.items == []'
}

@test "a protobuf watch streams length-delimited WatchEvents with enveloped objects" {
    slice_text w1 | encode ResourceSlice "$SLICE_MSG" "$BATS_TEST_TMPDIR/w1.pb"
    pb POST "$SLICES" "$BATS_TEST_TMPDIR/w1.pb"
    [[ $STATUS == 201 ]]
    curl -s -N -D "$BATS_TEST_TMPDIR/headers" -H "Accept: $PROTO;stream=watch" \
        "$URL$SLICES?watch=true&timeoutSeconds=2" -o "$BATS_TEST_TMPDIR/stream" &
    local watcher=$!
    sleep 0.5
    api DELETE "$SLICES/w1"
    expect 200
    wait "$watcher"
    run grep -i '^content-type:' "$BATS_TEST_TMPDIR/headers"
    assert_output --partial "$PROTO;stream=watch"
    run $PB frames "$SLICE_MSG" <"$BATS_TEST_TMPDIR/stream"
    assert_success
    assert_line --index 0 "type=ADDED kind=ResourceSlice"
    assert_line "type=DELETED kind=ResourceSlice"
    assert_output --partial 'name: "w1"'
}

@test "Accept: highest q wins, transformations and unknown types are passed over, none is 406" {
    api POST "$CLASSES" '{"metadata":{"name":"c"}}'
    local accept want got
    while IFS='|' read -r accept want; do
        got=$(curl -s -o /dev/null -w '%{http_code} %{content_type}' -H "Accept: $accept" "$URL$CLASSES/c")
        [[ $got == "$want" ]] || { echo "Accept: $accept -> $got, want $want"; return 1; }
    done <<EOF
application/json|200 application/json
*/*|200 application/json
$PROTO|200 $PROTO
$PROTO;q=0.5, application/json|200 application/json
application/json;as=Table;v=v1;g=meta.k8s.io, $PROTO|200 $PROTO
application/yaml, $PROTO|200 $PROTO
application/yaml|406 application/json
text/html;q=0, application/json;q=0|406 application/json
EOF
}

@test "DeviceClass config: inlined DeviceConfiguration and RawExtension parameters both ways" {
    api POST "$CLASSES" '{"metadata":{"name":"gpu"},"spec":{"selectors":[{"cel":{"expression":"device.driver == \"gpu.example.com\""}}],"config":[{"opaque":{"driver":"gpu.example.com","parameters":{"kind":"GpuConfig","sharing":{"strategy":"TimeSlicing"}}}}]}}'
    expect 201
    pb GET "$CLASSES/gpu"
    run decoded k8s.io.api.resource.v1.DeviceClass
    assert_output --regexp 'config \{[[:space:]]+deviceConfiguration \{[[:space:]]+opaque \{[[:space:]]+driver: "gpu.example.com"'
    assert_output --partial 'raw: "{\"kind\":\"GpuConfig\",\"sharing\":{\"strategy\":\"TimeSlicing\"}}"'
    cat <<'EOF' | encode DeviceClass k8s.io.api.resource.v1.DeviceClass "$BATS_TEST_TMPDIR/c2.pb"
metadata { name: "gpu2" }
spec { config { deviceConfiguration { opaque { driver: "gpu.example.com"
  parameters { raw: "{\"kind\":\"GpuConfig\",\"n\":2}" } } } } }
EOF
    pb POST "$CLASSES" "$BATS_TEST_TMPDIR/c2.pb"
    [[ $STATUS == 201 ]]
    api GET "$CLASSES/gpu2"
    expect 200 '.spec.config[0].opaque == {"driver":"gpu.example.com","parameters":{"kind":"GpuConfig","n":2}}'
}

@test "claim status in protobuf: allocation, conditions with times, DeleteOptions preconditions" {
    api POST "$CLAIMS" '{"metadata":{"name":"c1"},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu"}}]}}}'
    expect 201
    local uid
    uid=$(jq -r .metadata.uid <<<"$BODY")
    cat <<EOF | encode ResourceClaim k8s.io.api.resource.v1.ResourceClaim "$BATS_TEST_TMPDIR/st.pb"
metadata { name: "c1" namespace: "default" uid: "$uid" }
spec { devices { requests { name: "gpu" exactly { deviceClassName: "gpu" allocationMode: "ExactCount" count: 1 } } } }
status {
  allocation { devices { results { request: "gpu" driver: "gpu.example.com" pool: "node-1" device: "gpu-0" } } }
  devices { driver: "gpu.example.com" pool: "node-1" device: "gpu-0"
    conditions { type: "Ready" status: "True" observedGeneration: 1 lastTransitionTime { seconds: 1795000000 }
      reason: "Prepared" message: "" } }
}
EOF
    pb PUT "$CLAIMS/c1/status" "$BATS_TEST_TMPDIR/st.pb"
    [[ $STATUS == 200 ]] || { decoded "$STATUS_MSG"; return 1; }
    api GET "$CLAIMS/c1"
    expect 200 '.status.allocation.devices.results[0].device == "gpu-0"' \
        '.status.devices[0].conditions[0].lastTransitionTime == "2026-11-18T11:06:40Z"' \
        '.status.devices[0].conditions[0].message == ""'
    # A PATCH is JSON whatever client-go's default: protobuf is 415.
    printf 'k8s\0' >"$BATS_TEST_TMPDIR/patch.pb"
    pb PATCH "$CLAIMS/c1" "$BATS_TEST_TMPDIR/patch.pb"
    [[ $STATUS == 415 ]]
    # DeleteOptions in protobuf, with a uid precondition that does not hold.
    echo 'preconditions { uid: "00000000-0000-0000-0000-000000000000" }' |
        encode DeleteOptions k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions "$BATS_TEST_TMPDIR/del.pb"
    pb DELETE "$CLAIMS/c1" "$BATS_TEST_TMPDIR/del.pb"
    [[ $STATUS == 409 ]] || { echo "$STATUS"; decoded "$STATUS_MSG"; return 1; }
    api GET "$CLAIMS/c1"
    expect 200
}
