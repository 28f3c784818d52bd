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
OVERLAP_SECONDS=15

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

# rollout_done DS [OLD_POD...]: one Ready driver pod per node the DaemonSet
# wants, no other driver pod (none starting, none terminating) and none of
# OLD_POD left.  Read from the pods: the DaemonSet's own status was seen to
# keep updatedNumberScheduled at 0 after its pods were all replaced.
rollout_done() {
    local ds=$1 desired json
    shift
    desired=$(ds_json "$ds" | jq -r '.status.desiredNumberScheduled // 0') || return 1
    json=$(kc get pods -n "$CONFORMANCE_DRIVER_NAMESPACE" -l "$CONFORMANCE_DRIVER_POD_SELECTOR" -o json) || return 1
    jq -e --argjson want "$desired" --args '. as $r | $ARGS.positional as $old
        | ([$r.items[] | select(.metadata.deletionTimestamp == null
            and any(.status.conditions[]?; .type == "Ready" and .status == "True"))] | length) == $want
        and ($r.items | length) == $want
        and all($r.items[]; .metadata.name as $n | $old | index($n) | not)' "$@" <<<"$json" >/dev/null || {
        printf 'DaemonSet %s wants %s pods; driver pods:\n' "$ds" "$desired"
        jq -r '.items[] | "\(.metadata.name) on \(.spec.nodeName): \(.status.phase)\(if .metadata.deletionTimestamp then " (terminating)" else "" end)"' <<<"$json"
        return 1
    }
}

# await_rollout DS [OLD_POD...]
await_rollout() {
    wait_for "DaemonSet $1 to finish its rollout" "$CONFORMANCE_RESTART_TIMEOUT" rollout_done "$@" >/dev/null
}

# all_driver_pods: the names of every driver pod.
all_driver_pods() {
    kc get pods -n "$CONFORMANCE_DRIVER_NAMESPACE" -l "$CONFORMANCE_DRIVER_POD_SELECTOR" -o json |
        jq -r '.items[].metadata.name'
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

# stuck_update IMAGE: a driver pod with IMAGE that is not Ready, beside a
# Ready one on the same node; prints "<node> <the Ready pod>".
stuck_update() {
    local json
    json=$(kc get pods -n "$CONFORMANCE_DRIVER_NAMESPACE" -l "$CONFORMANCE_DRIVER_POD_SELECTOR" -o json) || return 1
    jq -er --arg c "$CONFORMANCE_PLUGIN_CONTAINER" --arg img "$1" '
        [.items[] | select(.metadata.deletionTimestamp == null) | {node: .spec.nodeName, name: .metadata.name,
            ready: any(.status.conditions[]?; .type == "Ready" and .status == "True"),
            image: ([.spec.containers[] | select(.name == $c) | .image][0])}]
        | group_by(.node)[]
        | select(any(.[]; .image == $img and (.ready | not)) and any(.[]; .image != $img and .ready))
        | "\(.[0].node) \([.[] | select(.image != $img and .ready) | .name][0])"' <<<"$json" || {
        jq -r '.items[] | "driver pod \(.metadata.name) on \(.spec.nodeName): \(.status.phase)"' <<<"$json"
        return 1
    }
}

# slice_versions NODE: "<slice> <resourceVersion>" of the driver's slices of NODE.
slice_versions() {
    kc get resourceslices --field-selector "spec.driver=$CONFORMANCE_DRIVER,spec.nodeName=$1" -o json |
        jq -r '.items[] | "\(.metadata.name) \(.metadata.resourceVersion)"' | sort
}

# start_claim_pod POD NODE: pod POD on NODE with a claim from template
# one-gpu; it tolerates the kind worker with MIG and shared GPUs.
start_claim_pod() {
    create_from pod-tolerating POD="$1" CLAIM_SOURCE=resourceClaimTemplateName CLAIM=one-gpu \
        AFFINITY="$(pin_to "$2")"
}

# claim_pod POD [NODE]: start_claim_pod on NODE (the test node), Ready.
claim_pod() {
    start_claim_pod "$1" "${2:-$TEST_NODE}" || return 1
    wait_pod_ready "$TEST_NAMESPACE" "$1"
}

# At most this many nodes get pods before the update (see overlap_nodes).
MAX_OVERLAP_NODES=4

# overlap_nodes: the nodes whose update the first scenario can watch: the
# test node first, then every other Ready node with devices of the driver
# that a pod-tolerating pod may use (no NoSchedule or NoExecute taint but
# the one it tolerates), at most MAX_OVERLAP_NODES.  The DaemonSet updates
# its nodes one at a time in an order of its own, and every node it takes
# before a watched one would hold its overlap (minReadySeconds) for
# nothing.
overlap_nodes() {
    local with usable
    with=$(driver_slices | jq -r '[.[] | .spec.nodeName // empty] | unique[]') || return 1
    usable=$(kc get nodes -o json | schedulable_nodes fakehw.example.com/partitions) || return 1
    { printf '%s\n' "$TEST_NODE"; grep -xF -f <(printf '%s\n' "$with") <<<"$usable"; } |
        awk 'NF && !seen[$0]++' | head -n "$MAX_OVERLAP_NODES"
}

# first_overlap OLD_POD...: the index of the first OLD_POD (one per watched
# node, in the order of OVERLAP_NODES) beside which a second driver pod runs
# Ready.
first_overlap() {
    local i
    for i in "${!OVERLAP_NODES[@]}"; do
        if overlapping "${OVERLAP_NODES[i]}" "${@:i+1:1}" >/dev/null; then
            echo "$i"
            return 0
        fi
    done
    printf 'no watched node has two Ready driver pods yet: %s\n' "${OVERLAP_NODES[*]}"
    return 1
}

# release_pod POD: deletes the test's pod POD and waits until it and its
# generated claim are gone, which needs the claim's unprepare to succeed.
release_pod() {
    local claim
    claim=$(pod_claim_name "$TEST_NAMESPACE" "$1" gpu) || return 1
    delete_pod "$TEST_NAMESPACE" "$1"
    wait_gone pod -n "$TEST_NAMESPACE" "$1"
    wait_gone resourceclaim -n "$TEST_NAMESPACE" "$claim"
}

# restore_ds DS PATCH: puts the DaemonSet back and waits for its rollout.
restore_ds() {
    patch_ds "$1" "$2"
    await_rollout "$1"
}

# requires: none
# bats test_tags=generic, serial, all-nodes, disruptive
@test "driver rolling update: both instances serve during the overlap; claims stay prepared; slices stay" {
    local ns=$TEST_NAMESPACE ds min_ready i node
    use_test_node
    ds=$(driver_daemonset "$TEST_NODE") || skip "the driver pod of $TEST_NODE has no DaemonSet to update"
    require_surge "$ds"
    await_rollout "$ds"
    create_from claim-template TEMPLATE=one-gpu COUNT=1
    # On every watched node: a pod that runs through the update (keep-I)
    # and one released during the overlap (before-I).
    mapfile -t OVERLAP_NODES < <(overlap_nodes)
    ((${#OVERLAP_NODES[@]} > 0)) || fail "no node to watch the update on"
    for i in "${!OVERLAP_NODES[@]}"; do
        start_claim_pod "keep-$i" "${OVERLAP_NODES[i]}"
        start_claim_pod "before-$i" "${OVERLAP_NODES[i]}"
    done
    local -a claims devices versions old_node_pods old_pods
    for i in "${!OVERLAP_NODES[@]}"; do
        wait_pod_ready "$ns" "keep-$i"
        wait_pod_ready "$ns" "before-$i"
        claims[i]=$(pod_claim_name "$ns" "keep-$i" gpu)
        devices[i]=$(claim_devices "$ns" "${claims[i]}")
        versions[i]=$(slice_versions "${OVERLAP_NODES[i]}")
        old_node_pods[i]=$(driver_pod_on_node "${OVERLAP_NODES[i]}")
    done
    mapfile -t old_pods < <(all_driver_pods)

    min_ready=$(ds_json "$ds" | jq '.spec.minReadySeconds // 0')
    defer restore_ds "$ds" "{\"spec\":{\"minReadySeconds\":$min_ready}}"
    # A changed template annotation is what `kubectl rollout restart` does.
    patch_ds "$ds" "$(jq -cn --argjson s $OVERLAP_SECONDS --arg t "$(date -u +%FT%TZ)" \
        '{spec: {minReadySeconds: $s, template: {metadata: {annotations:
            {"conformance.fakehw.example.com/restarted-at": $t}}}}}')"
    i=$(wait_for "a second driver pod beside the old one on one of ${OVERLAP_NODES[*]}, both Ready" \
        "$CONFORMANCE_RESTART_TIMEOUT" first_overlap "${old_node_pods[@]}") || return 1
    node=${OVERLAP_NODES[i]}

    # During the overlap: a prepare (new pod) and an unprepare (pod gone,
    # its generated claim deleted, which needs the unprepare to succeed).
    claim_pod during "$node"
    release_pod "before-$i"
    driver_pod_ready "$node" "${old_node_pods[i]}" ||
        fail "the overlap on $node ended before the prepare and the unprepare were done (minReadySeconds $OVERLAP_SECONDS)"
    # The overlap that matters was this node's: the nodes still to come
    # need not hold theirs (minReadySeconds changes no pod template).
    patch_ds "$ds" "{\"spec\":{\"minReadySeconds\":$min_ready}}"

    await_rollout "$ds" "${old_pods[@]}"
    for i in "${!OVERLAP_NODES[@]}"; do
        pod_is_ready "$ns" "keep-$i" >/dev/null || fail "pod keep-$i is no longer Ready after the rolling update"
        assert_same "restarts of the running container of keep-$i" 0 "$(container_restarts "$ns" "keep-$i" ctr)"
        assert_same "devices of keep-$i's claim" "${devices[i]}" "$(claim_devices "$ns" "${claims[i]}")"
        assert_claim_reserved_for "$ns" "${claims[i]}" "keep-$i"
        assert_same "the slices of ${OVERLAP_NODES[i]} and their resourceVersions" "${versions[i]}" \
            "$(slice_versions "${OVERLAP_NODES[i]}")"
    done

    # The new instance alone prepares and unprepares.
    claim_pod after "$node"
    if is_fake_driver; then
        assert_container_sees_claim "$ns" after ctr "$(pod_claim_name "$ns" after gpu)"
    fi
    release_pod during
}

# requires: none
# bats test_tags=generic, serial, all-nodes, disruptive
@test "driver rolling update: a new version that cannot start leaves the old instance serving" {
    local ns=$TEST_NAMESPACE ds pod image policy broken versions node old_pod
    take_node_lock
    pod=$(driver_pods_json | jq -r '.items[0].metadata.name // empty')
    [[ -n $pod ]] || skip "no driver pods in $CONFORMANCE_DRIVER_NAMESPACE with $CONFORMANCE_DRIVER_POD_SELECTOR"
    use_test_node
    ds=$(driver_daemonset "$TEST_NODE") || skip "the driver pod of $TEST_NODE has no DaemonSet to update"
    require_surge "$ds"
    await_rollout "$ds"
    image=$(node_driver_pods "$TEST_NODE" | awk 'NR == 1 {print $3}')
    [[ -n $image && $image != - ]] || fail "the driver pods have no container $CONFORMANCE_PLUGIN_CONTAINER"
    policy=$(ds_json "$ds" | jq -r --arg c "$CONFORMANCE_PLUGIN_CONTAINER" \
        '[.spec.template.spec.containers[] | select(.name == $c) | .imagePullPolicy // "IfNotPresent"][0]')
    # An image that is never pulled (imagePullPolicy Never) and is not on
    # the nodes: the kubelet refuses it at once (ErrImageNeverPull), with or
    # without a registry or a name server in reach.
    broken=fakehw-dra-conformance.invalid/never:0

    defer restore_ds "$ds" "$(jq -cn --arg c "$CONFORMANCE_PLUGIN_CONTAINER" --arg i "$image" --arg p "$policy" \
        '{spec: {template: {spec: {containers: [{name: $c, image: $i, imagePullPolicy: $p}]}}}}')"
    patch_ds "$ds" "$(jq -cn --arg c "$CONFORMANCE_PLUGIN_CONTAINER" --arg i "$broken" \
        '{spec: {template: {spec: {containers: [{name: $c, image: $i, imagePullPolicy: "Never"}]}}}}')"
    # The DaemonSet picks the node to update first.
    read -r node old_pod < <(wait_for "an updated driver pod stuck beside a Ready old one" "$CONFORMANCE_RESTART_TIMEOUT" \
        stuck_update "$broken") || return 1
    [[ -n $old_pod ]] || fail "no stuck update found"
    versions=$(slice_versions "$node")

    create_from claim-template TEMPLATE=one-gpu COUNT=1
    claim_pod during "$node"
    if is_fake_driver; then
        assert_container_sees_claim "$ns" during ctr "$(pod_claim_name "$ns" during gpu)"
    fi
    release_pod during
    driver_pod_ready "$node" "$old_pod" || fail "the old driver pod $old_pod stopped serving during a stuck update"
    assert_same "the slices of node $node and their resourceVersions" "$versions" "$(slice_versions "$node")"
}
