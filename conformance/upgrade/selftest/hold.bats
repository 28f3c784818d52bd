#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The upgrade kit's own logic with no cluster: where the held workloads go
# for an inventory like the kind clusters', what hold_compare calls a
# disturbance, how the availability log is summed up, and the templates.

# shellcheck disable=SC2030,SC2031,SC2034
load ../../cluster/selftest/selftest

setup() {
    selftest_setup
    # shellcheck source=SCRIPTDIR/../hold.bash
    source "$SELFTEST_DIR/../../upgrade/hold.bash"
    CONFORMANCE_DRIVER=gpu.fakehw.example.com
    D=$CONFORMANCE_DRIVER
}

# slice NODE DEVICE_JSON...: one ResourceSlice of pool NODE on NODE.
slice() {
    local node=$1
    shift
    jq -cn --arg n "$node" --argjson devs "$(printf '%s\n' "$@" | jq -cs .)" --arg d "$D" \
        '{spec: {driver: $d, nodeName: $n, pool: {name: $n, generation: 1}, devices: $devs}}'
}

# dev NAME UUID PRODUCT [EXTRA_JSON]
dev() {
    jq -cn --arg n "$1" --arg u "$2" --arg p "$3" --argjson x "${4:-{\}}" \
        '{name: $n, attributes: {uuid: {string: $u}, productName: {string: $p}}} + $x'
}

kind_inventory() {
    {
        slice w1 "$(dev gpu-0 U0 A100)" "$(dev gpu-1 U1 A100)" "$(dev gpu-2 U2 A100)" "$(dev gpu-3 U3 A100)" \
            "$(dev gpu-4 U4 GB200 '{"bindingConditions": ["gpu.fakehw.example.com/attached"]}')"
        # A virtual GPU: a slice of its own that skips node operations.
        slice w1 "$(dev gpu-5 U5 T4)" | jq -c '.spec.skipNodeOperations = true'
        slice w2 "$(dev gpu-9 V9 T4)" | jq -c '.spec.skipNodeOperations = true'
        slice w2 "$(dev gpu-0 V0 H100)" "$(dev gpu-1 V1 H100)" "$(dev gpu-2 V2 L4)" "$(dev gpu-3 V3 L4)"
        slice w3 "$(dev gpu-0 W0 A100 '{"consumesCounters": [{"counterSet": "gpu-0"}]}')" \
            "$(dev gpu-0-mig-3g W0M3 A100 '{"consumesCounters": [{"counterSet": "gpu-0"}], "attributes": {"uuid": {"string": "W0M3"}, "profile": {"string": "3g.40gb"}}}')" \
            "$(dev gpu-0-mig-1g W0M1 A100 '{"consumesCounters": [{"counterSet": "gpu-0"}], "attributes": {"uuid": {"string": "W0M1"}, "profile": {"string": "1g.10gb"}}}')" \
            "$(dev gpu-1 W1 H100 '{"allowMultipleAllocations": true, "capacity": {"memory": {"value": "80Gi", "requestPolicy": {"default": "10Gi"}}}}')"
    } | jq -cs .
}

@test "hold plan: each kind of claim gets a device of the kind-like inventory" {
    run hold_plan "$(kind_inventory)" $'w1\nw2'
    assert_success
    assert_output "$(printf '%s\t%s\t%s\t%s\n' \
        template w1 U0 - shared w1 U1 - all w2 - H100 admin w2 - - \
        attach w1 U4 - partition w3 W0M1 - share w3 W1 10Gi)"
}

@test "hold plan: what the inventory has no room for is skipped with the reason" {
    run hold_plan "$(slice w1 "$(dev gpu-0 U0 A100)" | jq -cs .)" w1
    assert_success
    assert_line --index 0 $'template\tw1\tU0\t-'
    assert_line --partial $'skip\tshared\tno schedulable node has two devices'
    assert_line --partial $'skip\tall\tno second schedulable node'
    assert_line --partial $'skip\tattach\tno device has bindingConditions'
    assert_line --partial $'skip\tpartition\t'
    assert_line --partial $'skip\tshare\t'
}

@test "hold plan: All mode is not placed where one value covers every device of the node" {
    local inv
    inv=$({
        slice w1 "$(dev gpu-0 U0 A100)" "$(dev gpu-1 U1 A100)"
        slice w2 "$(dev gpu-0 V0 L4)" "$(dev gpu-1 V1 L4)"
    } | jq -cs .)
    run hold_plan "$inv" $'w1\nw2'
    assert_line --partial $'skip\tall\t'
    # A tainted node (not in NODES) never gets the plain-device workloads.
    run hold_plan "$inv" w2
    assert_line --index 0 $'template\tw2\tV0\t-'
}

@test "free device: a plain one no claim holds, else a shared one, never a partition or an attachable one" {
    local inv
    inv=$(kind_inventory)
    run free_device_in "$inv" '["w1/gpu-0", "w1/gpu-1"]' w1
    assert_output U2
    run free_device_in "$inv" '["w1/gpu-0", "w1/gpu-1", "w1/gpu-2", "w1/gpu-3"]' w1
    assert_output ""
    run free_device_in "$inv" '["w3/gpu-1"]' w3
    assert_output W1
    run free_device_in "$inv" '[]' nowhere
    assert_output ""
}

baseline() {
    jq -cn '{
        pods: {"h/a": {uid: "p1", node: "w1", ready: true, containers: {ctr: {id: "c://1", restarts: 0}}}},
        claims: {"h/x": {uid: "k1", allocated: true, results: ["d/w1/gpu-0"], reservedFor: ["p1"]}},
        nodes: {w1: ["w1/gpu-0", "w1/gpu-1"]},
        uuids: {"h/a/ctr": ["U0"]}}'
}

@test "hold compare: the same state passes; each kind of disturbance is named" {
    local a
    a=$(baseline)
    run hold_compare "$a" "$a"
    assert_success
    assert_output ""
    run hold_compare "$a" "$(jq -c '.pods["h/a"].containers.ctr.restarts = 1' <<<"$a")"
    assert_failure
    assert_output "pod h/a container ctr restarted (0 -> 1)"
    run hold_compare "$a" "$(jq -c '.pods["h/a"].containers.ctr.id = "c://2"' <<<"$a")"
    assert_output --partial "container ctr was replaced"
    run hold_compare "$a" "$(jq -c '.pods["h/a"].uid = "p2"' <<<"$a")"
    assert_output --partial "pod h/a was replaced"
    run hold_compare "$a" "$(jq -c '.pods["h/a"].ready = false' <<<"$a")"
    assert_output "pod h/a is not Ready"
    run hold_compare "$a" "$(jq -c 'del(.pods["h/a"])' <<<"$a")"
    assert_output "pod h/a is gone"
    run hold_compare "$a" "$(jq -c '.claims["h/x"].allocated = false' <<<"$a")"
    assert_output "claim h/x is no longer allocated"
    run hold_compare "$a" "$(jq -c '.claims["h/x"].results = ["d/w1/gpu-1"]' <<<"$a")"
    assert_output "claim h/x devices changed: d/w1/gpu-0 -> d/w1/gpu-1"
    run hold_compare "$a" "$(jq -c '.claims["h/x"].reservedFor = []' <<<"$a")"
    assert_output --partial "claim h/x reservedFor changed"
    run hold_compare "$a" "$(jq -c '.nodes.w1 = ["w1/gpu-0"]' <<<"$a")"
    assert_output "node w1 devices changed: missing [w1/gpu-1], new []"
    run hold_compare "$a" "$(jq -c '.nodes = {}' <<<"$a")"
    assert_output "node w1 publishes no device of the driver"
    run hold_compare "$a" "$(jq -c '.uuids["h/a/ctr"] = ["U9"]' <<<"$a")"
    assert_output "container h/a/ctr sees [U9], it saw [U0]"
}

@test "hold compare: an aspect limits what is compared" {
    local a b
    a=$(baseline)
    b=$(jq -c '.nodes = {} | .pods["h/a"].ready = false' <<<"$a")
    run hold_compare "$a" "$b" claims
    assert_success
    run hold_compare "$a" "$b" pods
    assert_output "pod h/a is not Ready"
}

@test "availability: a sample the API server refuses is unreachable, not a gap" {
    # Only the namespace query is refused (the authorizer right after an
    # API server restart); every other query answers.
    kc() {
        if [[ $* == "get namespaces "* ]]; then
            echo 'Error from server (Forbidden): namespaces is forbidden' >&2
            return 1
        fi
        kubectl "$@"
    }
    run hold_sample "$(baseline)"
    assert_success
    assert_output unreachable
}

@test "availability: gaps last until the next sample; API outages are counted apart" {
    run availability_summary <<<$'100 ok\n102 unreachable\n106 gap pod h/a is not Ready\n109 gap pod h/a is not Ready\n110 ok\n120 gap claim h/x is gone\n121 ok'
    assert_success
    assert_equal "$(jq -c 'del(.gaps)' <<<"$output")" \
        '{"samples":7,"seconds":21,"secondsWithoutDevices":5,"longestGapSeconds":4,"apiUnreachableSeconds":4}'
    assert_equal "$(jq -r '.gaps[0].what' <<<"$output")" "pod h/a is not Ready"
    run availability_summary </dev/null
    assert_equal "$(jq -c .secondsWithoutDevices <<<"$output")" 0
}

@test "templates: the All-mode and template selectors render to valid claims" {
    CONFORMANCE_DRIVER=gpu.fakehw.example.com CONFORMANCE_DEVICE_CLASS=gpu.fakehw.example.com
    TEST_NAMESPACE=h
    run render_template claim-all-selector CLAIM=all CEL='device.attributes["d"].x == "y"'
    assert_success
    assert_equal "$(python3 -c 'import sys, yaml
print(yaml.safe_load(sys.stdin)["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"])' <<<"$output")" All
    run render_template claim-template-selector TEMPLATE=t CEL='true'
    assert_success
    assert_output --partial 'kind: ResourceClaimTemplate'
    assert_output --partial 'expression: |-'
}
