#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# apiserver-standin: ResourceSlice semantics the driver depends on:
# generateName, field selectors, resourceVersion conflicts, preconditions,
# delete collection, validation (422), taints and --drop-device-taints,
# partitionable devices, consumable capacity and partitionTypeAttribute.

setup() {
    load helpers
    start_standin --node node-1
}

teardown() {
    stop_standin
}

@test "generateName: prefix + 5 characters of the real server's alphabet" {
    api POST "$SLICES" "$(slice gpu.example.com- node-1 gpu.example.com)"
    expect 201 '.metadata.name | test("^gpu\\.example\\.com-[bcdfghjklmnpqrstvwxz2456789]{5}$")' \
        '.metadata.generateName == "gpu.example.com-"' '.metadata.generation == 1'
    api POST "$SLICES" "$(slice gpu.example.com- node-1 gpu.example.com)"
    expect 201
    api GET "$SLICES"
    expect 200 '.items | length == 2' '.items[0].metadata.name != .items[1].metadata.name'
}

@test "field selectors: spec.nodeName, spec.driver, both, !=, and unsupported labels" {
    api POST "$SLICES" "$(slice a node-1 gpu.example.com)"
    api POST "$SLICES" "$(slice b node-2 gpu.example.com)"
    api POST "$SLICES" "$(slice c node-1 other.example.com)"
    api GET "$SLICES?fieldSelector=spec.nodeName%3Dnode-1"
    expect 200 '[.items[].metadata.name] == ["a", "c"]'
    api GET "$SLICES?fieldSelector=spec.driver%3Dgpu.example.com"
    expect 200 '[.items[].metadata.name] == ["a", "b"]'
    api GET "$SLICES?fieldSelector=spec.nodeName%3Dnode-1%2Cspec.driver%3Dgpu.example.com"
    expect 200 '[.items[].metadata.name] == ["a"]'
    api GET "$SLICES?fieldSelector=spec.driver!%3Dgpu.example.com"
    expect 200 '[.items[].metadata.name] == ["c"]'
    api GET "$SLICES?fieldSelector=metadata.name%3Db"
    expect 200 '[.items[].metadata.name] == ["b"]'
    api GET "$SLICES?fieldSelector=spec.pool.name%3Dnode-1"
    expect 400 '.reason == "BadRequest"' \
        '.message == "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.pool.name"'
    api GET "$SLICES?fieldSelector=metadata.namespace%3Dx"
    expect 400
    api GET "$SLICES?labelSelector=a%3Db"
    expect 400 '.message | test("labelSelector")'
    api GET "$CLAIMS?fieldSelector=spec.x%3Dy"
    expect 400 '.message == "\"spec.x\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""'
}

@test "PUT: resourceVersion conflict, generation on spec change, immutable fields" {
    api POST "$SLICES" "$(slice s1 node-1 gpu.example.com)"
    local s1=$BODY
    api PUT "$SLICES/s1" "$(jq -c '.spec.pool.generation = 2' <<<"$s1")"
    expect 200 '.metadata.generation == 2' '.spec.pool.generation == 2'
    api PUT "$SLICES/s1" "$(jq -c '.spec.pool.generation = 3' <<<"$s1")"
    expect 409 '.reason == "Conflict"' '.code == 409' '.details.name == "s1"'
    api GET "$SLICES/s1"
    api PUT "$SLICES/s1" "$(jq -c '.spec.nodeName = "node-2" | .spec.pool.name = "node-2"' <<<"$BODY")"
    expect 422 '[.details.causes[].field] == ["spec.nodeName", "spec.pool.name"]' \
        '.details.causes[0].message == "Invalid value: \"node-2\": field is immutable"'
    # Without a resourceVersion the update is unconditional.
    api PUT "$SLICES/s1" "$(jq -c 'del(.metadata.resourceVersion) | .spec.pool.generation = 9' <<<"$s1")"
    expect 200 '.spec.pool.generation == 9'
}

@test "DELETE: preconditions and delete collection by field selector" {
    api POST "$SLICES" "$(slice a node-1 gpu.example.com)"
    local uid rv
    uid=$(jq -r .metadata.uid <<<"$BODY")
    rv=$(jq -r .metadata.resourceVersion <<<"$BODY")
    api DELETE "$SLICES/a" '{"preconditions":{"resourceVersion":"999"}}'
    expect 409 '.message == "Operation cannot be fulfilled on resourceslices.resource.k8s.io \"a\": Precondition failed: ResourceVersion in precondition: 999, ResourceVersion in object meta: '"$rv"'"'
    api DELETE "$SLICES/a" "{\"preconditions\":{\"uid\":\"$uid\",\"resourceVersion\":\"$rv\"}}"
    expect 200 '.metadata.name == "a"'
    api POST "$SLICES" "$(slice b node-1 gpu.example.com)"
    api POST "$SLICES" "$(slice c node-1 gpu.example.com)"
    api POST "$SLICES" "$(slice d node-2 gpu.example.com)"
    api DELETE "$SLICES?fieldSelector=spec.nodeName%3Dnode-1%2Cspec.driver%3Dgpu.example.com"
    expect 200 '.kind == "ResourceSliceList"' '[.items[].metadata.name] == ["b", "c"]'
    api GET "$SLICES"
    expect 200 '[.items[].metadata.name] == ["d"]'
}

@test "validation: the fields and limits the real server checks, as 422 with field paths" {
    api POST "$SLICES" '{"metadata":{"name":"x"},"spec":{"pool":{"name":"p","resourceSliceCount":1}}}'
    # shellcheck disable=SC2016 # backquotes are part of the message
    expect 422 '.reason == "Invalid"' \
        '[.details.causes[].field] == ["spec.driver", "spec"]' \
        '.details.causes[1].message | test("exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required")'
    api POST "$SLICES" "$(slice x node-1 gpu.example.com | jq -c '.spec.allNodes = true')"
    expect 422 '.details.causes[0].message | test("multiple fields are set")'
    api POST "$SLICES" "$(slice x node-1 gpu.example.com | jq -c 'del(.spec.pool.resourceSliceCount)')"
    expect 422 '.details.causes[0].field == "spec.pool.resourceSliceCount"'
    api POST "$SLICES" "$(slice x node-1 gpu.example.com "$(devices 129)")"
    expect 422 '.details.causes[0] == {"reason":"FieldValueTooMany","message":"Too many: 129: must have at most 128 items","field":"spec.devices"}'
    api POST "$SLICES" "$(slice x node-1 gpu.example.com "$(devices 128)")"
    expect 201
    api POST "$SLICES" "$(slice y node-1 gpu.example.com "$(devices 65 '{taints: [{key: "k", effect: "NoSchedule"}]}')")"
    expect 422 '.details.causes[0].message | test("must have at most 64 items")'
    api POST "$SLICES" "$(slice y node-1 gpu.example.com "$(devices 1 '{attributes: ([range(33)] | map({key: "a\(.)", value: {int: .}}) | from_entries)}')")"
    expect 422 '.details.causes[0].field == "spec.devices[0]"' \
        '.details.causes[0].message == "Too many: 33: the total number of attributes and capacities must not exceed 32"'
    api POST "$SLICES" "$(slice y node-1 gpu.example.com '[{"name":"gpu-0","attributes":{"a":{"int":1,"bool":true},"b":{},"c":{"string":"'"$(printf 'x%.0s' {1..65})"'"},"d":{"version":"1.2"}}}]')"
    expect 422 '[.details.causes[].field] == ["spec.devices[0].attributes[a]", "spec.devices[0].attributes[b]", "spec.devices[0].attributes[c].string", "spec.devices[0].attributes[d].version"]' \
        '.details.causes[2].message == "Too long: may not be more than 64 bytes"'
    api POST "$SLICES" "$(slice y node-1 gpu.example.com '[{"name":"gpu-0","taints":[{"key":"k","effect":"PreferNoSchedule"}]},{"name":"gpu-0"}]')"
    expect 422 '.details.causes[0].message == "Unsupported value: \"PreferNoSchedule\": supported values: \"NoExecute\", \"NoSchedule\", \"None\""' \
        '.details.causes[1] == {"reason":"FieldValueDuplicate","message":"Duplicate value: \"gpu-0\"","field":"spec.devices[1].name"}'
    api POST "$SLICES" "$(slice Bad node-1 gpu.example.com)"
    expect 422 '.details.causes[0].field == "metadata.name"'
}

@test "validation: 1.38's qualified names, per-device node selectors and versions that fit int64" {
    api POST "$SLICES" "$(slice q node-1 gpu.example.com '[{"name":"gpu-0","attributes":{"a/b/c":{"int":1},"/x":{"int":1},"example.com/":{"int":1},"ok.example.com/model":{"string":"m"}},"capacity":{"x/y/z":{"value":"1"}}}]')"
    expect 422 '[.details.causes[] | "\(.field): \(.message)"] | sort == [
        "spec.devices[0].attributes[/x]: Invalid value: \"\": the domain must not be empty",
        "spec.devices[0].attributes[a/b/c]: Invalid value: \"a/b/c\": must not contain more than one slash",
        "spec.devices[0].attributes[example.com/]: Invalid value: \"\": the name must not be empty",
        "spec.devices[0].capacity[x/y/z]: Invalid value: \"x/y/z\": must not contain more than one slash"]'
    api POST "$SLICES" "$(slice q node-1 gpu.example.com '[{"name":"gpu-0","nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["node-1"]}]},{"matchFields":[{"key":"metadata.name","operator":"In","values":["node-2"]}]}]}}]' |
        jq -c 'del(.spec.nodeName) | .spec.perDeviceNodeSelection = true')"
    expect 422 '.details.causes[0].field == "spec.devices[0].nodeSelector.nodeSelectorTerms"' \
        '.details.causes[0].message | endswith(": must have exactly one node selector term")'
    api POST "$SLICES" "$(slice q node-1 gpu.example.com '[{"name":"gpu-0","attributes":{"a":{"version":"1234567890123456789.0.0"},"b":{"version":"1.0.0-1234567890123456789"},"c":{"version":"1.0.0-01"},"d":{"version":"123456789012345678.0.0-rc.123456789012345678+0000000000000000000"}}}]')"
    expect 422 '[.details.causes[].field] == ["spec.devices[0].attributes[a].version", "spec.devices[0].attributes[b].version", "spec.devices[0].attributes[c].version"]'
}

@test "taints get timeAdded; --drop-device-taints drops them like a server without DRADeviceTaints" {
    local devs='[{"name":"gpu-0","taints":[{"key":"gpu.example.com/unhealthy","value":"true","effect":"NoSchedule"}]}]'
    api POST "$SLICES" "$(slice t node-1 gpu.example.com "$devs")"
    expect 201 '.spec.devices[0].taints[0].timeAdded | test("^[0-9-]+T[0-9:]+Z$")'
    stop_standin
    start_standin --drop-device-taints
    api POST "$SLICES" "$(slice t node-1 gpu.example.com "$devs")"
    expect 201 '.spec.devices[0].taints == null' '.spec.devices[0].name == "gpu-0"'
    api PUT "$SLICES/t" "$(jq -c ".spec.devices = $devs" <<<"$BODY")"
    expect 200 '.spec.devices[0].taints == null'
}

# counter_slice NAME SETS_JSON: a slice of counter sets only.
counter_slice() {
    slice "$1" node-1 gpu.example.com | jq -c --argjson sets "$2" 'del(.spec.devices) | .spec.sharedCounters = $sets'
}

@test "partitionable devices: sharedCounters and consumesCounters validated as the real server does" {
    local set='{"name":"gpu-0-counter-set","counters":{"memory":{"value":"80Gi"},"memory-slice-0":{"value":"1"}}}'
    api POST "$SLICES" "$(counter_slice c "[$set]")"
    expect 201 '.spec.sharedCounters[0].counters.memory.value == "80Gi"'
    # Devices or counter sets in one slice, not both (1.35+; message as 1.37.2 words it).
    api POST "$SLICES" "$(slice x node-1 gpu.example.com | jq -c --argjson s "[$set]" '.spec.sharedCounters = $s')"
    # shellcheck disable=SC2016 # backquotes of the API message, not a command
    expect 422 '.details.causes[0] == {"reason":"FieldValueInvalid","message":"Invalid value: \"\": only one of `sharedCounters` or `devices` is allowed","field":"spec"}'
    api POST "$SLICES" "$(counter_slice x "$(jq -nc '[range(9) as $i | {name: "s\($i)", counters: {memory: {value: "1"}}}]')")"
    expect 422 '.details.causes[0] == {"reason":"FieldValueTooMany","message":"Too many: 9: must have at most 8 items","field":"spec.sharedCounters"}'
    api POST "$SLICES" "$(counter_slice x "[$set,$set]")"
    expect 422 '.details.causes[0].reason == "FieldValueDuplicate"' '.details.causes[0].field == "spec.sharedCounters[1]"'
    api POST "$SLICES" "$(counter_slice x '[{"name":"Bad_Name","counters":{"m":{"value":"1"}}},{"name":"ok","counters":{}},{"name":"ok2","counters":{"memory":{"value":"lots"}}}]')"
    expect 422 '[.details.causes[].field] == ["spec.sharedCounters[0].name", "spec.sharedCounters[1].counters", "spec.sharedCounters[2].counters[memory].value"]'
    api POST "$SLICES" "$(counter_slice x "$(jq -nc '[{name: "s", counters: ([range(33)] | map({key: "c\(.)", value: {value: "1"}}) | from_entries)}]')")"
    expect 422 '.details.causes[0].field == "spec.sharedCounters[0].counters"' '.details.causes[0].message | test("at most 32")'
    # A device that consumes counters lowers the limit to 64 devices.
    local cc='{consumesCounters: [{counterSet: "gpu-0-counter-set", counters: {memory: {value: "10Gi"}}}]}'
    api POST "$SLICES" "$(slice y node-1 gpu.example.com "$(devices 64 "$cc")")"
    expect 201
    api POST "$SLICES" "$(slice z node-1 gpu.example.com "$(devices 65 "$cc")")"
    expect 422 '.details.causes[0].field == "spec.devices"' '.details.causes[0].message | startswith("Too many: 65: must have at most 64 items")'
    api POST "$SLICES" "$(slice z node-1 gpu.example.com "$(devices 1 '{consumesCounters: [{counterSet: "a", counters: {m: {value: "1"}}}, {counterSet: "b", counters: {m: {value: "1"}}}, {counterSet: "c", counters: {m: {value: "1"}}}]}')")"
    expect 422 '.details.causes[0].field == "spec.devices[0].consumesCounters"' '.details.causes[0].message | test("at most 2")'
    api POST "$SLICES" "$(slice z node-1 gpu.example.com "$(devices 1 '{consumesCounters: [{counterSet: "", counters: {}}]}')")"
    expect 422 '[.details.causes[].field] == ["spec.devices[0].consumesCounters[0].counterSet", "spec.devices[0].consumesCounters[0].counters"]'
}

@test "--partitionable-devices drop removes counters like DRAPartitionableDevices off; refuse answers 422" {
    local set='[{"name":"s","counters":{"memory":{"value":"1"}}}]'
    local cc='{consumesCounters: [{counterSet: "s", counters: {memory: {value: "1"}}}]}'
    stop_standin
    start_standin --partitionable-devices drop
    api POST "$SLICES" "$(counter_slice c "$set")"
    expect 201 '.spec.sharedCounters == null'
    api POST "$SLICES" "$(slice d node-1 gpu.example.com "$(devices 2 "$cc")")"
    expect 201 '[.spec.devices[] | has("consumesCounters")] == [false, false]' '(.spec.devices | length) == 2'
    stop_standin
    start_standin --partitionable-devices refuse
    api POST "$SLICES" "$(counter_slice c "$set")"
    expect 422 '.details.causes[0] == {"reason":"FieldValueForbidden","message":"Forbidden: disabled by feature gate DRAPartitionableDevices","field":"spec.sharedCounters"}'
    api POST "$SLICES" "$(slice d node-1 gpu.example.com "$(devices 2 "$cc")")"
    expect 422 '[.details.causes[].field] == ["spec.devices[0].consumesCounters", "spec.devices[1].consumesCounters"]'
    api POST "$SLICES" "$(slice p node-1 gpu.example.com)"
    expect 201
}

@test "partitionTypeAttribute: validated as the 1.37.2 server does; --drop-partition-type-attribute drops it" {
    local cc='{consumesCounters: [{counterSet: "s", counters: {memory: {value: "1"}}}]}'
    local typed bare
    # A counted device and a plain one: only the counted one needs the attribute.
    typed=$(jq -nc --argjson c "$(jq -nc "$cc")" '[{name: "gpu-0", attributes: {"gpu.example.com/profile": {string: "full"}}} + $c,
        {name: "gpu-1", attributes: {profile: {string: "3g.40gb"}}} + $c, {name: "gpu-2"}]')
    api POST "$SLICES" "$(slice ok node-1 gpu.example.com "$typed" | jq -c '.spec.partitionTypeAttribute = "gpu.example.com/profile"')"
    expect 201 '.spec.partitionTypeAttribute == "gpu.example.com/profile"'
    # A bare name in another domain does not count: gpu-1's profile is
    # gpu.example.com's, the field names example.org's.
    api POST "$SLICES" "$(slice x node-1 gpu.example.com "$typed" | jq -c '.spec.partitionTypeAttribute = "example.org/profile"')"
    # shellcheck disable=SC2016 # backquotes of the API message, not a command
    expect 422 '[.details.causes[].field] == ["spec.devices[0].attributes[example.org/profile]", "spec.devices[1].attributes[example.org/profile]"]' \
        '.details.causes[0] == {"reason":"FieldValueRequired","message":"Required value: device consumes counters and `partitionTypeAttribute` names this attribute, so it must be set","field":"spec.devices[0].attributes[example.org/profile]"}'
    bare=$(jq -c '.[1].attributes.profile = {int: 3}' <<<"$typed")
    api POST "$SLICES" "$(slice x node-1 gpu.example.com "$bare" | jq -c '.spec.partitionTypeAttribute = "gpu.example.com/profile"')"
    # shellcheck disable=SC2016 # backquotes of the API message, not a command
    expect 422 '[.details.causes[].field] == ["spec.devices[1].attributes[gpu.example.com/profile]"]' '.details.causes[0].message | endswith("must be a string value because `partitionTypeAttribute` names this attribute")'
    # Not fully qualified.
    api POST "$SLICES" "$(slice x node-1 gpu.example.com "$typed" | jq -c '.spec.partitionTypeAttribute = "profile"')"
    expect 422 '[.details.causes[].field] == ["spec.partitionTypeAttribute"]' '.details.causes[0].message == "Invalid value: \"profile\": a fully qualified name must be a domain and a name separated by a slash"'
    # Only on a slice with a device that consumes counters.
    api POST "$SLICES" "$(slice x node-1 gpu.example.com | jq -c '.spec.partitionTypeAttribute = "gpu.example.com/profile"')"
    expect 422 '.details.causes[0] == {"reason":"FieldValueInvalid","message":"Invalid value: \"gpu.example.com/profile\": may only be set on a slice which declares devices that consume counters","field":"spec.partitionTypeAttribute"}'
    stop_standin
    start_standin --drop-partition-type-attribute
    api POST "$SLICES" "$(slice d node-1 gpu.example.com "$typed" | jq -c '.spec.partitionTypeAttribute = "gpu.example.com/profile"')"
    expect 201 '.spec | has("partitionTypeAttribute") | not' '[.spec.devices[] | has("consumesCounters")] == [true, true, false]'
    # A server without partitionable devices drops it with them.
    stop_standin
    start_standin --partitionable-devices drop
    api POST "$SLICES" "$(slice d node-1 gpu.example.com "$typed" | jq -c '.spec.partitionTypeAttribute = "gpu.example.com/profile"')"
    expect 201 '.spec | has("partitionTypeAttribute") | not'
}

@test "consumable capacity: requestPolicy validated as the real server does; --drop-consumable-capacity drops it" {
    local pol='{"default":"10Gi","validRange":{"min":"1Gi","max":"140Gi","step":"1Gi"}}'
    local dev
    dev=$(jq -nc --argjson p "$pol" '[{name: "gpu-0", allowMultipleAllocations: true, capacity: {memory: {value: "143771Mi", requestPolicy: $p}}}]')
    api POST "$SLICES" "$(slice ok node-1 gpu.example.com "$dev")"
    expect 201 '.spec.devices[0].capacity.memory.requestPolicy.validRange.max == "140Gi"'
    api POST "$SLICES" "$(slice x node-1 gpu.example.com "$(jq -c 'del(.[0].allowMultipleAllocations)' <<<"$dev")")"
    expect 422 '.details.causes[0] == {"reason":"FieldValueForbidden","message":"Forbidden: allowMultipleAllocations must be true","field":"spec.devices[0].capacity[memory].requestPolicy"}'
    # max off the step grid (the real 1.37.2 server refuses 143771Mi with 1Gi steps).
    api POST "$SLICES" "$(slice x node-1 gpu.example.com "$(jq -c '.[0].capacity.memory.requestPolicy.validRange.max = "143771Mi"' <<<"$dev")")"
    expect 422 '.details.causes[0].field == "spec.devices[0].capacity[memory].requestPolicy.validRange.step"' \
        '.details.causes[0].message | endswith("value is not a multiple of a given step (1Gi) from (1Gi)")'
    api POST "$SLICES" "$(slice x node-1 gpu.example.com "$(jq -c '.[0].capacity.memory.requestPolicy.default = "512Mi"' <<<"$dev")")"
    expect 422 '.details.causes[0].field == "spec.devices[0].capacity[memory].requestPolicy.validRange.default"'
    api POST "$SLICES" "$(slice x node-1 gpu.example.com "$(jq -c 'del(.[0].capacity.memory.requestPolicy.default)' <<<"$dev")")"
    expect 422 '.details.causes[0].field == "spec.devices[0].capacity[memory].requestPolicy.default"'
    stop_standin
    start_standin --drop-consumable-capacity
    api POST "$SLICES" "$(slice d node-1 gpu.example.com "$dev")"
    expect 201 '.spec.devices[0] | has("allowMultipleAllocations") | not' '.spec.devices[0].capacity.memory == {"value": "143771Mi"}'
}
