#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# What must hold after each step of a cluster upgrade (the control plane, then
# each node's kubelet): the workloads placed by `run.sh create` before the
# upgrade (hold.bash) run on in the same containers with the same devices,
# their claims stay allocated and reserved, every node publishes the same
# devices, and each node's kubelet and the driver still work together: a new
# claim is prepared, its health reaches the pod and it is released.
#
#   UPGRADE_STATE_DIR  where `run.sh create` wrote hold.json (required)
#   UPGRADE_NODES      nodes whose kubelet this step upgraded, for the new-
#                      claim check (default: every node with devices)
# bats file_tags=upgrade

load hold

setup() {
    scenario_setup
    [[ -n ${UPGRADE_STATE_DIR:-} && -f $UPGRADE_STATE_DIR/hold.json ]] ||
        fail "UPGRADE_STATE_DIR=${UPGRADE_STATE_DIR:-} holds no hold.json: run conformance/upgrade/run.sh create first"
    BASELINE=$(<"$UPGRADE_STATE_DIR/hold.json")
}
teardown() { scenario_teardown; }

# compare_now ASPECT [quick]: hold_compare of the baseline and the cluster now.
compare_now() {
    local now
    now=$(hold_state "${2:-}") || return 1
    hold_compare "$BASELINE" "$now" "$1"
}

# requires: none
# bats test_tags=generic
@test "upgrade: every held pod runs on in the same containers, never restarted" {
    wait_for "the held pods to run as before the upgrade" "$CONFORMANCE_RESTART_TIMEOUT" compare_now pods quick >/dev/null
}

# requires: none
# bats test_tags=generic
@test "upgrade: every held claim keeps its devices and stays reserved for its pods" {
    wait_for "the held claims to be as before the upgrade" "$CONFORMANCE_RESTART_TIMEOUT" compare_now claims quick >/dev/null
}

# requires: none
# bats test_tags=generic
@test "upgrade: every node publishes the same devices again" {
    wait_for "every node's devices to be published as before the upgrade" "$CONFORMANCE_RESTART_TIMEOUT" \
        compare_now nodes quick >/dev/null
}

# requires: fake-driver
# bats test_tags=fake-only
@test "upgrade: every held container still sees exactly its claim's GPUs" {
    compare_now uuids
}

# free_device NODE: a free device of NODE (free_device_in, hold.bash); a
# device held only with admin access is free for others.
free_device() {
    local slices taken
    slices=$(driver_slices) || return 1
    taken=$(kc get resourceclaims -A -o json | jq -c --arg d "$CONFORMANCE_DRIVER" \
        '[.items[].status.allocation.devices.results[]? | select(.driver == $d and ((.adminAccess // false) | not)) | "\(.pool)/\(.device)"]') || return 1
    free_device_in "$slices" "$taken" "$1"
}

# requires: none
# bats test_tags=generic, serial
@test "upgrade: on each upgraded node a new claim is prepared, reports health and is released" {
    local ns=$TEST_NAMESPACE node uuid n=0 nodes pod claim device rest
    nodes=${UPGRADE_NODES:-$(driver_slices | jq -r '[.[].spec.nodeName // empty] | unique[]')}
    for node in $nodes; do
        uuid=$(free_device "$node") || fail "cannot read the devices of node $node"
        if [[ -z $uuid ]]; then
            printf '# node %s: no free device without counters or binding conditions; not checked\n' "$node" >&3
            continue
        fi
        n=$((n + 1))
        pod=new-$n
        create_from claim-template-selector TEMPLATE="$pod" CEL="$(cel_attribute_equals "$CONFORMANCE_UNIQUE_ATTRIBUTE" string "$uuid")"
        create_from pod-tolerating POD="$pod" CLAIM_SOURCE=resourceClaimTemplateName CLAIM="$pod" AFFINITY="$(pin_to "$node")"
        wait_pod_ready "$ns" "$pod"
        claim=$(pod_claim_name "$ns" "$pod" gpu) || fail "pod $pod has no claim gpu"
        IFS=$'\t' read -r _ device rest < <(claim_results "$ns" "$claim")
        is_fake_driver && assert_container_sees_claim "$ns" "$pod" ctr "$claim"
        # The kubelet's health stream from the driver: reopened after the
        # kubelet restarted (the kubelet reports generated claims from 1.35).
        local health="health not checked (fake driver, ResourceHealthStatus and a 1.35+ control plane needed)"
        if is_fake_driver && ! gate_missing ResourceHealthStatus >/dev/null && server_minor_at_least 35 &&
            [[ $(fakehw_health "$node" "$device" 2>/dev/null) == healthy ]]; then
            health="its health flip reached the pod (Unhealthy, then Healthy)"
            flip_unhealthy "$node" "$device"
            wait_for "allocatedResourcesStatus Unhealthy in pod $pod on $node" "$CONFORMANCE_HEALTH_TIMEOUT" \
                pod_device_health "$ns" "$pod" ctr Unhealthy >/dev/null
            fakehw_flip "$node" "$device" healthy
            wait_for "allocatedResourcesStatus Healthy in pod $pod on $node" "$CONFORMANCE_HEALTH_TIMEOUT" \
                pod_device_health "$ns" "$pod" ctr Healthy >/dev/null
        fi
        delete_pod "$ns" "$pod"
        wait_gone resourceclaim -n "$ns" "$claim"
        printf '# node %s: %s prepared and released; %s\n' "$node" "$device" "$health" >&3
    done
    ((n > 0)) || skip "no node had a free device to claim"
}
