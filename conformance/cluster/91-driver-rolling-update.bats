#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Driver rolling update: the kubelet plugin's DaemonSet is updated as an
# operator does it, with maxSurge, so the new plugin pod starts beside the
# old one on each node and the kubelet (1.33+) talks to both through their
# own sockets (the rolling-update registration of
# k8s.io/dynamic-resource-allocation/kubeletplugin).  Claims prepared before
# the update stay prepared, a prepare and an unprepare during the overlap
# work, slices are not rewritten, and an update whose pod cannot start leaves
# the old instance serving.  Needs a DaemonSet with maxSurge; skipped
# otherwise.  Disruptive, hence "serial".
# bats file_tags=driver-rolling-update

load lib/helpers

setup() { scenario_setup; }
teardown() { scenario_teardown; }

# How long the DaemonSet keeps both pods after the new one is Ready
# (spec.minReadySeconds, set for the update and restored after): the window
# in which the overlap is exercised.
OVERLAP_SECONDS=40

# driver_daemonset NODE: the DaemonSet that owns NODE's driver pod.
driver_daemonset() {
    local pod
    pod=$(driver_pod_on_node "$1") || return 1
    kc get pod -n "$CONFORMANCE_DRIVER_NAMESPACE" "$pod" -o json |
        jq -er '[.metadata.ownerReferences[]? | select(.kind == "DaemonSet") | .name][0]
            // error("the driver pod is not owned by a DaemonSet")'
}

ds_json() {
    kc get daemonset -n "$CONFORMANCE_DRIVER_NAMESPACE" "$1" -o json
}

# require_surge DS: skips unless DS updates with maxSurge > 0.
require_surge() {
    local surge
    surge=$(ds_json "$1" | jq -r '.spec.updateStrategy.rollingUpdate.maxSurge // 0') ||
        fail "cannot read DaemonSet $CONFORMANCE_DRIVER_NAMESPACE/$1"
    [[ $surge != 0 && $surge != 0% ]] ||
        skip "DaemonSet $CONFORMANCE_DRIVER_NAMESPACE/$1 updates without maxSurge, so its plugin instances never overlap (a driver built on kubeletplugin enables that with RollingUpdate(podUID))"
}

# patch_ds DS JSON: a strategic merge patch of the DaemonSet.
patch_ds() {
    kc patch daemonset -n "$CONFORMANCE_DRIVER_NAMESPACE" "$1" -p "$2" >/dev/null
}

# rollout_done DS: every node runs the DaemonSet's current template, and
# only that: no old pod is left.
rollout_done() {
    local json
    json=$(ds_json "$1") || return 1
    jq -e '.status.observedGeneration >= .metadata.generation
        and .status.updatedNumberScheduled == .status.desiredNumberScheduled
        and .status.numberAvailable == .status.desiredNumberScheduled
        and .status.currentNumberScheduled == .status.desiredNumberScheduled' <<<"$json" >/dev/null || {
        jq -r '"DaemonSet \(.metadata.name): \(.status | tojson)"' <<<"$json"
        return 1
    }
    [[ $(node_driver_pods "$TEST_NODE" | wc -l) == 1 ]] || {
        printf 'node %s still has driver pods:\n%s\n' "$TEST_NODE" "$(node_driver_pods "$TEST_NODE")"
        return 1
    }
}

await_rollout() {
    wait_for "DaemonSet $1 to finish its rollout" "$CONFORMANCE_RESTART_TIMEOUT" rollout_done "$1" >/dev/null
}

# node_driver_pods NODE: "<name> <ready> <image of the plugin container>" of
# each driver pod on NODE that is not being deleted.
node_driver_pods() {
    kc get pods -n "$CONFORMANCE_DRIVER_NAMESPACE" -l "$CONFORMANCE_DRIVER_POD_SELECTOR" \
        --field-selector "spec.nodeName=$1" -o json |
        jq -r --arg c "$CONFORMANCE_PLUGIN_CONTAINER" '.items[] | select(.metadata.deletionTimestamp == null)
            | "\(.metadata.name) \(any(.status.conditions[]?; .type == "Ready" and .status == "True"))"
              + " \([.spec.containers[] | select(.name == $c) | .image][0] // "-")"'
}

# overlapping NODE OLD: OLD and another driver pod both run Ready on NODE.
overlapping() {
    local pods
    pods=$(node_driver_pods "$1") || return 1
    if grep -q "^$2 true " <<<"$pods" && grep -v "^$2 " <<<"$pods" | grep -q ' true '; then
        return 0
    fi
    printf 'driver pods on %s:\n%s\n' "$1" "$pods"
    return 1
}

# driver_pod_ready NODE POD: driver pod POD still runs Ready on NODE.
driver_pod_ready() {
    node_driver_pods "$1" | grep -q "^$2 true " || {
        printf 'driver pod %s is no longer Ready on %s\n' "$2" "$1"
        return 1
    }
}

# stuck_update NODE OLD IMAGE: a driver pod other than OLD, with IMAGE, is on
# NODE and not Ready.
stuck_update() {
    local pods
    pods=$(node_driver_pods "$1") || return 1
    grep -v "^$2 " <<<"$pods" | grep -q " false $3\$" || {
        printf 'driver pods on %s:\n%s\n' "$1" "$pods"
        return 1
    }
}

# slice_versions NODE: "<slice> <resourceVersion>" of the driver's slices of NODE.
slice_versions() {
    kc get resourceslices --field-selector "spec.driver=$CONFORMANCE_DRIVER,spec.nodeName=$1" -o json |
        jq -r '.items[] | "\(.metadata.name) \(.metadata.resourceVersion)"' | sort
}

# claim_pod POD: pod POD on the test node with a claim from template one-gpu.
claim_pod() {
    create_from pod POD="$1" CLAIM_SOURCE=resourceClaimTemplateName CLAIM=one-gpu AFFINITY="$(pin_to "$TEST_NODE")"
    wait_pod_ready "$TEST_NAMESPACE" "$1"
}

# restore_ds DS PATCH: puts the DaemonSet back and waits for its rollout.
restore_ds() {
    patch_ds "$1" "$2"
    await_rollout "$1"
}

# requires: none
# bats test_tags=generic, serial, disruptive
@test "driver rolling update: both instances serve during the overlap; claims stay prepared; slices stay" {
    local ns=$TEST_NAMESPACE ds old_pod min_ready claim devices versions
    use_test_node
    ds=$(driver_daemonset "$TEST_NODE") || skip "the driver pod of $TEST_NODE has no DaemonSet to update"
    require_surge "$ds"
    await_rollout "$ds"
    create_from claim-template TEMPLATE=one-gpu COUNT=1
    claim_pod keep
    claim_pod before
    claim=$(pod_claim_name "$ns" keep gpu)
    devices=$(claim_devices "$ns" "$claim")
    versions=$(slice_versions "$TEST_NODE")
    old_pod=$(driver_pod_on_node "$TEST_NODE")

    min_ready=$(ds_json "$ds" | jq '.spec.minReadySeconds // 0')
    defer restore_ds "$ds" "{\"spec\":{\"minReadySeconds\":$min_ready}}"
    # A changed template annotation is what `kubectl rollout restart` does.
    patch_ds "$ds" "$(jq -cn --argjson s $OVERLAP_SECONDS --arg t "$(date -u +%FT%TZ)" \
        '{spec: {minReadySeconds: $s, template: {metadata: {annotations:
            {"conformance.fakehw.example.com/restarted-at": $t}}}}}')"
    wait_for "a second driver pod beside $old_pod on $TEST_NODE, both Ready" "$CONFORMANCE_RESTART_TIMEOUT" \
        overlapping "$TEST_NODE" "$old_pod" >/dev/null

    # During the overlap: a prepare (new pod) and an unprepare (pod gone,
    # its generated claim deleted, which needs the unprepare to succeed).
    claim_pod during
    local before_claim
    before_claim=$(pod_claim_name "$ns" before gpu)
    delete_pod "$ns" before
    wait_gone pod -n "$ns" before
    wait_gone resourceclaim -n "$ns" "$before_claim"
    driver_pod_ready "$TEST_NODE" "$old_pod" ||
        fail "the overlap ended before the prepare and the unprepare were done (minReadySeconds $OVERLAP_SECONDS)"

    await_rollout "$ds"
    is_gone pod -n "$CONFORMANCE_DRIVER_NAMESPACE" "$old_pod" >/dev/null ||
        fail "the old driver pod $old_pod is still there after the rollout"
    pod_is_ready "$ns" keep >/dev/null || fail "pod keep is no longer Ready after the rolling update"
    assert_same "restarts of the running container" 0 "$(container_restarts "$ns" keep ctr)"
    assert_same "devices of the running pod's claim" "$devices" "$(claim_devices "$ns" "$claim")"
    assert_claim_reserved_for "$ns" "$claim" keep
    assert_same "the node's slices and their resourceVersions" "$versions" "$(slice_versions "$TEST_NODE")"

    # The new instance alone prepares and unprepares.
    claim_pod after
    if is_fake_driver; then
        assert_container_sees_claim "$ns" after ctr "$(pod_claim_name "$ns" after gpu)"
    fi
    claim=$(pod_claim_name "$ns" during gpu)
    delete_pod "$ns" during
    wait_gone pod -n "$ns" during
    wait_gone resourceclaim -n "$ns" "$claim"
}

# requires: none
# bats test_tags=generic, serial, disruptive
@test "driver rolling update: a new version that cannot start leaves the old instance serving" {
    local ns=$TEST_NAMESPACE ds old_pod image broken versions claim
    use_test_node
    ds=$(driver_daemonset "$TEST_NODE") || skip "the driver pod of $TEST_NODE has no DaemonSet to update"
    require_surge "$ds"
    await_rollout "$ds"
    old_pod=$(driver_pod_on_node "$TEST_NODE")
    image=$(node_driver_pods "$TEST_NODE" | awk -v p="$old_pod" '$1 == p {print $3}')
    [[ -n $image && $image != - ]] || fail "driver pod $old_pod has no container $CONFORMANCE_PLUGIN_CONTAINER"
    # A registry name that cannot resolve (.invalid, RFC 2606): the pull fails at once.
    broken=fakehw-dra-conformance.invalid/never:0
    versions=$(slice_versions "$TEST_NODE")

    defer restore_ds "$ds" "$(jq -cn --arg c "$CONFORMANCE_PLUGIN_CONTAINER" --arg i "$image" \
        '{spec: {template: {spec: {containers: [{name: $c, image: $i}]}}}}')"
    patch_ds "$ds" "$(jq -cn --arg c "$CONFORMANCE_PLUGIN_CONTAINER" --arg i "$broken" \
        '{spec: {template: {spec: {containers: [{name: $c, image: $i}]}}}}')"
    wait_for "the updated driver pod on $TEST_NODE to be stuck beside $old_pod" "$CONFORMANCE_RESTART_TIMEOUT" \
        stuck_update "$TEST_NODE" "$old_pod" "$broken" >/dev/null

    create_from claim-template TEMPLATE=one-gpu COUNT=1
    claim_pod during
    if is_fake_driver; then
        assert_container_sees_claim "$ns" during ctr "$(pod_claim_name "$ns" during gpu)"
    fi
    claim=$(pod_claim_name "$ns" during gpu)
    delete_pod "$ns" during
    wait_gone pod -n "$ns" during
    wait_gone resourceclaim -n "$ns" "$claim"
    driver_pod_ready "$TEST_NODE" "$old_pod" || fail "the old driver pod stopped serving during a stuck update"
    assert_same "the node's slices and their resourceVersions" "$versions" "$(slice_versions "$TEST_NODE")"
}
