#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# apiserver-standin: flags, nodes, resourceclaims (+/status), deviceclasses,
# routing errors, and a clean shutdown.

setup() {
    load helpers
    start_standin --node node-1,node-2
}

teardown() {
    stop_standin
}

@test "--help, bad flags and bad node names" {
    run "$STANDIN" --help
    assert_success
    assert_output --partial "Usage: apiserver-standin [flags]"
    assert_output --partial "--drop-device-taints"
    run "$STANDIN" --bogus
    assert_failure 2
    assert_output "apiserver-standin: unknown flag --bogus (see --help)"
    run "$STANDIN" --port 70000
    assert_failure 2
    assert_output "apiserver-standin: --port must be from 0 to 65535 (see --help)"
    run "$STANDIN" extra
    assert_failure 2
    assert_output "apiserver-standin: takes no arguments (see --help)"
    run "$STANDIN" --port 0 --node Bad_Name
    assert_failure 2
    assert_output --partial "--node: \"Bad_Name\" is not a valid node name"
    run "$STANDIN" --tls-cert-file /x
    assert_failure 2
    assert_output "apiserver-standin: --tls-cert-file and --tls-key-file go together (see --help)"
}

@test "listens on 127.0.0.1 only and prints its URL" {
    run cat "$BATS_TEST_TMPDIR/stdout"
    assert_output "$URL"
    # The listening socket in /proc/net/tcp: local address 0100007F = 127.0.0.1.
    local hexport
    hexport=$(printf '%04X' "$(cat "$PORT_FILE")")
    run awk -v p=":$hexport" '$2 ~ p"$" && $4 == "0A" {print $2}' /proc/net/tcp
    assert_output "0100007F:$hexport"
}

@test "nodes: --node pre-creates, POST assigns uid/resourceVersion/creationTimestamp, 404 Status" {
    api GET /api/v1/nodes/node-2
    expect 200 '.kind == "Node"' '.apiVersion == "v1"' '.metadata.uid | test("^[0-9a-f-]{36}$")'
    api POST /api/v1/nodes '{"metadata":{"name":"node-3","uid":"mine"}}'
    expect 201 '.metadata.uid != "mine"' '.metadata.resourceVersion | test("^[0-9]+$")' \
        '.metadata.creationTimestamp | test("^[0-9-]+T[0-9:]+Z$")'
    api GET /api/v1/nodes/nope
    expect 404 '.kind == "Status"' '.status == "Failure"' '.reason == "NotFound"' '.code == 404' \
        '.message == "nodes \"nope\" not found"' '.details.name == "nope"' '.details.kind == "nodes"'
}

@test "claims: create, AlreadyExists, namespace mismatch, get, list" {
    api POST "$CLAIMS" '{"metadata":{"name":"c1"},"spec":{},"status":{"reservedFor":[]}}'
    expect 201 '.metadata.namespace == "default"' '.metadata.generation == 1' '.status == null' \
        '.kind == "ResourceClaim"' '.apiVersion == "resource.k8s.io/v1"'
    api POST "$CLAIMS" '{"metadata":{"name":"c1"},"spec":{}}'
    expect 409 '.reason == "AlreadyExists"' \
        '.message == "resourceclaims.resource.k8s.io \"c1\" already exists"' \
        '.details.group == "resource.k8s.io"'
    api POST "$CLAIMS" '{"metadata":{"name":"c2","namespace":"other"}}'
    expect 400 '.reason == "BadRequest"' '.message | test("namespace of the provided object")'
    api POST /apis/resource.k8s.io/v1/namespaces/other/resourceclaims '{"metadata":{"name":"c1"}}'
    expect 201
    api GET "$CLAIMS/c1"
    expect 200 '.metadata.name == "c1"'
    api GET "$CLAIMS"
    expect 200 '.kind == "ResourceClaimList"' '.items | length == 1' '.items[0].kind == null' \
        '.metadata.resourceVersion | test("^[0-9]+$")'
    api GET /apis/resource.k8s.io/v1/resourceclaims
    expect 200 '[.items[].metadata.namespace] == ["default", "other"]'
    api POST "$CLAIMS" '{"metadata":{}}'
    expect 422 '.reason == "Invalid"' \
        '.message == "ResourceClaim.resource.k8s.io \"\" is invalid: metadata.name: Required value: name or generateName is required"'
    api POST "$CLAIMS" '{"metadata":{"name":"c3","resourceVersion":"5"}}'
    expect 500 '.message | test("resourceVersion should not be set on objects to be created")'
    api POST "$CLAIMS" '{"apiVersion":"resource.k8s.io/v1beta1","metadata":{"name":"c4"}}'
    expect 400 '.message | test("does not match the expected API version")'
}

@test "claims: PUT conflicts, status is separate, spec is immutable, no-op keeps resourceVersion" {
    api POST "$CLAIMS" '{"metadata":{"name":"c1"},"spec":{"devices":{"requests":[]}}}'
    expect 201
    local claim=$BODY rv
    rv=$(jq -r .metadata.resourceVersion <<<"$claim")
    api PUT "$CLAIMS/c1" "$(jq -c '.metadata.labels = {a: "b"} | .status = {allocation: {}}' <<<"$claim")"
    expect 200 '.metadata.labels.a == "b"' '.status == null' ".metadata.resourceVersion != \"$rv\""
    local rv2
    rv2=$(jq -r .metadata.resourceVersion <<<"$BODY")
    api PUT "$CLAIMS/c1" "$(jq -c '.metadata.labels = {a: "c"}' <<<"$claim")"
    expect 409 '.reason == "Conflict"' \
        '.message == "Operation cannot be fulfilled on resourceclaims.resource.k8s.io \"c1\": the object has been modified; please apply your changes to the latest version and try again"'
    api GET "$CLAIMS/c1"
    local same=$BODY
    api PUT "$CLAIMS/c1" "$same"
    expect 200 ".metadata.resourceVersion == \"$rv2\""
    api PUT "$CLAIMS/c1" "$(jq -c '.spec.devices.requests = [{name: "x"}]' <<<"$same")"
    expect 422 '.details.causes[0].field == "spec"' '.message | test("field is immutable")'
    api PUT "$CLAIMS/c2" "$(jq -c '.metadata.name = "c2"' <<<"$same")"
    expect 404
    api PUT "$CLAIMS/c1" "$(jq -c '.metadata.name = "c9"' <<<"$same")"
    expect 400 '.message == "the name of the object (c9) does not match the name on the URL (c1)"'
}

@test "claims: status through PUT and PATCH (merge, strategic, json patch), validated" {
    api POST "$CLAIMS" '{"metadata":{"name":"c1"},"spec":{}}'
    local alloc='{"status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"node-1","device":"gpu-0"}]}}}}'
    api PATCH "$CLAIMS/c1/status" "$alloc" application/merge-patch+json
    expect 200 '.status.allocation.devices.results[0].device == "gpu-0"' '.metadata.generation == 1'
    api PATCH "$CLAIMS/c1/status" \
        '{"status":{"devices":[{"driver":"gpu.example.com","pool":"node-1","device":"gpu-0","conditions":[]}]}}' \
        application/strategic-merge-patch+json
    expect 200 '.status.devices | length == 1' '.status.allocation != null'
    api PATCH "$CLAIMS/c1/status" '[{"op":"replace","path":"/status/devices/0/device","value":"gpu-7"}]' \
        application/json-patch+json
    expect 422 '.details.causes[0].field == "status.devices[0]"' \
        '.details.causes[0].message == "Invalid value: \"gpu.example.com/node-1/gpu-7\": must be an allocated device in the claim"'
    api PATCH "$CLAIMS/c1/status" '[{"op":"test","path":"/metadata/name","value":"zz"}]' \
        application/json-patch+json
    expect 422 '.message | test("test /metadata/name")'
    api PATCH "$CLAIMS/c1/status" '{"metadata":{"resourceVersion":"1"},"status":{}}' \
        application/merge-patch+json
    expect 409 '.reason == "Conflict"'
    # shellcheck disable=SC2016 # a literal $patch directive
    api PATCH "$CLAIMS/c1/status" '{"status":{"$patch":"replace"}}' application/strategic-merge-patch+json
    # shellcheck disable=SC2016
    expect 400 '.message | test("\\$patch")'
    api PATCH "$CLAIMS/c1/status" '{}' application/apply-patch+yaml
    expect 415 '.reason == "UnsupportedMediaType"' '.message | test("server-side apply")'
    api PATCH "$CLAIMS/c1/status" '{}' text/plain
    expect 415
    # The spec part of a /status write is ignored, as on the real server.
    api GET "$CLAIMS/c1"
    api PUT "$CLAIMS/c1/status" "$(jq -c '.spec = {x: 1} | .status.reservedFor = [{resource: "pods", name: "p", uid: "u1"}]' <<<"$BODY")"
    expect 200 '.spec == {}' '.status.reservedFor[0].uid == "u1"'
    api DELETE "$CLAIMS/c1"
    expect 200 '.metadata.name == "c1"'
    api GET "$CLAIMS/c1"
    expect 404
}

@test "deviceclasses: create, get, delete" {
    api POST "$CLASSES" '{"metadata":{"name":"gpu.example.com"},"spec":{"config":[{"opaque":{"driver":"gpu.example.com","parameters":{"kind":"GpuConfig"}}}]}}'
    expect 201 '.kind == "DeviceClass"' '.metadata.namespace == null'
    api GET "$CLASSES/gpu.example.com"
    expect 200 '.spec.config[0].opaque.parameters.kind == "GpuConfig"'
    api DELETE "$CLASSES/gpu.example.com"
    expect 200
    api DELETE "$CLASSES/gpu.example.com"
    expect 404 '.message == "deviceclasses.resource.k8s.io \"gpu.example.com\" not found"'
}

@test "CBOR and YAML bodies are 415 with a message that says JSON and protobuf only" {
    local t
    for t in application/cbor "application/yaml; charset=utf-8"; do
        api POST "$CLASSES" 'metadata: {name: x}' "$t"
        expect 415 '.reason == "UnsupportedMediaType"' \
            ".message | startswith(\"apiserver-standin reads JSON and protobuf request bodies, not ${t%%;*} \")"
    done
    # Nothing was stored, and JSON still works.
    api POST "$CLASSES" '{"metadata":{"name":"after"}}'
    expect 201
    api GET "$CLASSES"
    expect 200 '.items | length == 1'
}

@test "finalizers hold a delete until they are removed" {
    api POST "$CLASSES" '{"metadata":{"name":"held","finalizers":["example.com/x"]}}'
    api DELETE "$CLASSES/held"
    expect 202 '.metadata.deletionTimestamp != null'
    api GET "$CLASSES/held"
    expect 200
    api PATCH "$CLASSES/held" '{"metadata":{"finalizers":null}}' application/merge-patch+json
    expect 200
    api GET "$CLASSES/held"
    expect 404
}

@test "unknown paths are 404, wrong methods 405, big bodies 413" {
    api GET /apis/resource.k8s.io/v1/devicetaintrules
    expect 404 '.message == "the server could not find the requested resource"'
    api GET /api/v1/pods
    expect 404
    api GET "$CLAIMS/c1/binding"
    expect 404
    api PUT "$SLICES" '{}'
    expect 405 '.reason == "MethodNotAllowed"'
    api POST /apis/resource.k8s.io/v1/resourceclaims '{}'
    expect 405
    head -c 3200000 /dev/zero | tr '\0' 'x' >"$BATS_TEST_TMPDIR/big"
    STATUS=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary @"$BATS_TEST_TMPDIR/big" "$URL$CLASSES")
    [ "$STATUS" = 413 ]
}

@test "SIGTERM: exits 0 and removes its port file" {
    kill -TERM "$STANDIN_PID"
    local rc=0
    wait "$STANDIN_PID" || rc=$?
    STANDIN_PID=
    [ "$rc" -eq 0 ]
    [ ! -e "$PORT_FILE" ]
}
