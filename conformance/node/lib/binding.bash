# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Binding conditions (KEP-5007) in the node environment: a node with
# attachable fake GPUs, the test playing the scheduler (allocations with the
# binding conditions copied from the slice) and the conditions read back.
# Used by conformance/node/tests/plugin_binding.bats and the driver's own
# white-box tests (bench/node/binding.bats); needs node_env.
# shellcheck disable=SC2016,SC2034 # jq filters; the variables are the tests'

# The condition types the fake driver publishes.
ATTACHED=$DRIVER/attached
FAILED=$DRIVER/attach-failed

# binding_node: gpu-0 plain, gpu-1 attaches after 1s, gpu-2 at once with its
# first attach scripted to fail; the stand-in, the plugin, the pool.
binding_node() {
    cat >"$FAKEHW_CONFIG" <<EOC
nodes:
- name: $NODE
  devices:
  - {profile: A100-SXM4-80GB}
  - {profile: H100-SXM5-80GB, attach: {delay: 1s}}
  - {profile: H100-SXM5-80GB, attach: {failure: next}}
EOC
    node_start 3
}

# bound_results DEVICE ALLOCATED_AT: one allocation result for DEVICE with the
# binding conditions the slice publishes, as the scheduler copies them.
bound_results() {
    printf '[{"request":"gpu","driver":"%s","pool":"%s","device":"%s","bindingConditions":["%s"],"bindingFailureConditions":["%s"]}]' \
        "$DRIVER" "$POOL" "$1" "$ATTACHED" "$FAILED"
}

# allocate NAME DEVICE TIME: writes the claim's allocation at TIME (RFC 3339).
allocate() {
    api PATCH "$RESOURCE_API/namespaces/$NODE_NS/resourceclaims/$1/status" \
        "{\"status\":{\"allocation\":{\"allocationTimestamp\":\"$3\",\"devices\":{\"results\":$(bound_results "$2")}}}}" >/dev/null
}

# deallocate NAME: what the scheduler does after a binding failure.
deallocate() {
    api PATCH "$RESOURCE_API/namespaces/$NODE_NS/resourceclaims/$1/status" \
        '{"status":{"allocation":null,"devices":null}}' >/dev/null
}

# conditions NAME DEVICE: "type status reason" of each condition of DEVICE in
# the claim's status.devices, one per line, sorted.
conditions() {
    claim_get "$1" | jq -r --arg d "$2" --arg driver "$DRIVER" \
        '[.status.devices[]? | select(.driver == $driver and .device == $d) | .conditions[]? | "\(.type) \(.status) \(.reason)"] | sort | .[]'
}

# conditions_are NAME DEVICE TEXT: the conditions of DEVICE print as TEXT.
conditions_are() {
    output_is "conditions of $2 in claim $1" "$3" conditions "$1" "$2"
}

attach_is() {
    [[ $(device_attr "$1" attach) == "$2" ]]
}

# patches_of NAME: how many PATCHes of the claim's status the stand-in saw.
patches_of() {
    standin_requests | jq -s --arg p "$RESOURCE_API/namespaces/$NODE_NS/resourceclaims/$1/status" \
        '[.[] | select(.method == "PATCH" and (.path | startswith($p)))] | length'
}
