#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Partitioned and shared GPUs.  Partitionable devices (KEP-4815): a GPU in
# dynamic MIG mode is published with a counter set, and the whole GPU and
# each placement of each MIG profile consume from it, so the scheduler never
# hands out two that overlap.  Consumable capacity (KEP-5075): a GPU shared
# by memory is allocated to several claims, each with its own shareID and the
# memory it consumed.
#
# Needs a node whose driver publishes such devices: the kind clusters have
# *-worker3 (manifests/base/fakehw.yaml: an A100-SXM4-80GB in dynamic MIG
# mode and an H100-SXM5-80GB shared by memory), tainted
# fakehw.example.com/partitions:NoSchedule so that the other scenarios'
# pods stay off it; the pods here tolerate the taint.  Without such a node
# the scenarios are skipped with the reason.  Each uses one GPU's whole
# capacity, hence "serial".  Claims for partitions use
# CONFORMANCE_MIG_DEVICE_CLASS (NVIDIA's mig.nvidia.com; by default the
# class of the other claims), the whole GPU and shares CONFORMANCE_DEVICE_CLASS.
# A partition that has no UUID before it is made (NVIDIA's dynamic MIG
# devices) is told apart by what CONFORMANCE_SMI -L lists in its container.
# bats file_tags=partitions

load lib/helpers

# The serial scenarios here all need the node with partitionable or shared GPUs: with JOBS > 1
# they run one at a time, so the other job runs another file's scenarios
# instead of waiting for this node's lock.
setup_file() { export BATS_NO_PARALLELIZE_WITHIN_FILE=true; }
setup() { scenario_setup; }
teardown() { scenario_teardown; }

# The attribute lookup the fake driver and NVIDIA's driver agree on: bare
# names (type, profile, parentUUID, uuid) in the driver's domain.
# shellcheck disable=SC2016 # jq variables
JQ_ATTR='def attr($a): (.attributes[$a] // .attributes["\($d)/\($a)"]) | (.string // .version // .int // .bool);'

# find_mig_gpu: a whole GPU that consumes counters and has at least two 3g
# partitions and a 7g one on the same counter set.  Sets MIG_NODE, MIG_POOL,
# MIG_GPU (its device name), MIG_UUID and MIG_3G (a 3g partition's name);
# skips with the reason when no node has one.
find_mig_gpu() {
    local slices line
    slices=$(driver_slices) || return 1
    line=$(jq -r --arg d "$CONFORMANCE_DRIVER" "$JQ_ATTR"'
        [.[] | select(.spec.nodeName != null) | .spec.nodeName as $n | .spec.pool.name as $p
         | .spec.devices[]? | select((.consumesCounters // []) | length > 0)
         | {node: $n, pool: $p, name, set: .consumesCounters[0].counterSet, type: attr("type"),
            profile: (attr("profile") // ""), uuid: attr("uuid")}]
        | group_by(.node + "/" + .set)
        | map(select((map(select(.type == "gpu")) | length) == 1 and
                     (map(select(.profile | startswith("3g."))) | length) >= 2 and
                     (map(select(.profile | startswith("7g."))) | length) >= 1))
        | first // empty
        | (map(select(.type == "gpu"))[0]) as $g | (map(select(.profile | startswith("3g.")))[0]) as $p3
        | [$g.node, $g.pool, $g.name, $g.uuid, $p3.name, $p3.profile] | @tsv' <<<"$slices") || return 1
    [[ -n $line ]] || skip "no node publishes a GPU in dynamic MIG mode with 3g and 7g partitions (fakehw: mig: {mode: dynamic} on an 80GB GPU; the kind clusters have one on *-worker3, manifests/base/fakehw.yaml)"
    IFS=$'\t' read -r MIG_NODE MIG_POOL MIG_GPU MIG_UUID MIG_3G MIG_3G_PROFILE <<<"$line"
    take_node_lock "$MIG_NODE" || return 1
}

# find_shared_gpu: a device published with allowMultipleAllocations and a
# memory requestPolicy.  Sets SHARED_NODE, SHARED_POOL, SHARED_GPU,
# SHARED_UUID and SHARED_MEMORY (its memory in bytes).
find_shared_gpu() {
    local slices line q
    slices=$(driver_slices) || return 1
    line=$(jq -r --arg d "$CONFORMANCE_DRIVER" "$JQ_ATTR"'
        [.[] | select(.spec.nodeName != null) | .spec.nodeName as $n | .spec.pool.name as $p
         | .spec.devices[]? | select(.allowMultipleAllocations == true and .capacity.memory.requestPolicy != null)
         | [$n, $p, .name, attr("uuid"), .capacity.memory.value]] | first // empty | @tsv' <<<"$slices") || return 1
    [[ -n $line ]] || skip "no node publishes a GPU shared by memory (fakehw: sharing: {memory: {default: ...}}; the kind clusters have one on *-worker3, manifests/base/fakehw.yaml)"
    IFS=$'\t' read -r SHARED_NODE SHARED_POOL SHARED_GPU SHARED_UUID q <<<"$line"
    take_node_lock "$SHARED_NODE" || return 1
    SHARED_MEMORY=$(quantity_value "$q") || return 1
}

# mig_claim CLAIM CEL: a claim for one partition, of the class of MIG devices.
mig_claim() {
    create_from claim-selector CLAIM="$1" DEVICE_CLASS="$CONFORMANCE_MIG_DEVICE_CLASS" CEL="$2"
}

# on_mig_gpu PROFILE: CEL for a partition of profile PROFILE of the MIG GPU.
on_mig_gpu() {
    printf '%s && %s\n' "$(cel_attribute_equals parentUUID string "$MIG_UUID")" \
        "$(cel_attribute_equals profile string "$1")"
}

# run_pod POD CLAIM: a pod on the node of the tested GPU using claim CLAIM.
run_pod() {
    create_from pod-tolerating POD="$1" CLAIM_SOURCE=resourceClaimName CLAIM="$2" AFFINITY="$(pin_to "$3")"
}

# The allocated device of a one-device claim, "<pool>\t<device>".
claim_device() {
    claim_results "$1" "$2" | cut -f1,2 | head -n 1
}

# requires: gate=DRAPartitionableDevices
# bats test_tags=partitionable, generic, serial
@test "partitions: two 3g partitions of one GPU are both allocated, with distinct MIG UUIDs" {
    require_gate DRAPartitionableDevices
    find_mig_gpu
    local ns=$TEST_NAMESPACE profile=$MIG_3G_PROFILE
    mig_claim p1 "$(on_mig_gpu "$profile")"
    mig_claim p2 "$(on_mig_gpu "$profile")"
    run_pod a p1 "$MIG_NODE"
    run_pod b p2 "$MIG_NODE"
    wait_pod_ready "$ns" a
    wait_pod_ready "$ns" b
    local d1 d2 u1 u2 m1 m2
    d1=$(claim_device "$ns" p1)
    d2=$(claim_device "$ns" p2)
    [[ -n $d1 && $d1 != "$d2" ]] || fail "the claims got [$d1] and [$d2]; want two partitions"
    # A partition made only when prepared has no uuid in the slice.
    u1=$(device_uuid "${d1%%$'\t'*}" "${d1#*$'\t'}" 2>/dev/null) || u1=
    u2=$(device_uuid "${d2%%$'\t'*}" "${d2#*$'\t'}" 2>/dev/null) || u2=
    if [[ -n $u1 || -n $u2 ]]; then
        [[ $u1 == MIG-* && $u2 == MIG-* && $u1 != "$u2" ]] || fail "partition UUIDs [$u1] [$u2]: want two distinct MIG-... UUIDs"
    fi
    has_smi || {
        [[ -n $u1 ]] || skip "the partitions publish no uuid and CONFORMANCE_SMI is empty: nothing tells their MIG UUIDs (set CONFORMANCE_SMI=nvidia-smi)"
        return 0
    }
    # Each container lists its partition alone, under the GPU.
    m1=$(assert_container_has_mig "$ns" a ctr "$MIG_UUID" "$profile" "$u1") || return 1
    m2=$(assert_container_has_mig "$ns" b ctr "$MIG_UUID" "$profile" "$u2") || return 1
    [[ $m1 != "$m2" ]] || fail "pods a and b both list MIG device $m1; want two distinct MIG UUIDs"
}

# requires: gate=DRAPartitionableDevices
# bats test_tags=partitionable, generic, serial
@test "partitions: with two 3g partitions taken, a 7g partition of that GPU stays pending" {
    require_gate DRAPartitionableDevices
    find_mig_gpu
    local ns=$TEST_NAMESPACE
    mig_claim p1 "$(on_mig_gpu "$MIG_3G_PROFILE")"
    mig_claim p2 "$(on_mig_gpu "$MIG_3G_PROFILE")"
    run_pod a p1 "$MIG_NODE"
    run_pod b p2 "$MIG_NODE"
    wait_pod_ready "$ns" a
    wait_pod_ready "$ns" b
    mig_claim full "$(printf '%s && %s.startsWith("7g.")' \
        "$(cel_attribute_equals parentUUID string "$MIG_UUID")" "$(cel_guarded attributes profile)")"
    run_pod c full "$MIG_NODE"
    assert_pod_stays_pending "$ns" c
}

# requires: gate=DRAPartitionableDevices
# bats test_tags=partitionable, generic, serial
@test "partitions: a claim for the whole GPU blocks its partitions" {
    require_gate DRAPartitionableDevices
    find_mig_gpu
    local ns=$TEST_NAMESPACE
    create_from claim-selector CLAIM=whole CEL="$(cel_attribute_equals uuid string "$MIG_UUID")"
    run_pod a whole "$MIG_NODE"
    wait_pod_ready "$ns" a
    [[ $(claim_device "$ns" whole) == "$MIG_POOL"$'\t'"$MIG_GPU" ]] || fail "claim whole did not get $MIG_POOL/$MIG_GPU"
    mig_claim part "$(printf '%s && %s.startsWith("1g.")' \
        "$(cel_attribute_equals parentUUID string "$MIG_UUID")" "$(cel_guarded attributes profile)")"
    run_pod b part "$MIG_NODE"
    assert_pod_stays_pending "$ns" b
}

# requires: fake-driver, gate=DRAPartitionableDevices, gate=DRADeviceTaints
# bats test_tags=partitionable, fake-only, serial
@test "partitions: an unhealthy partition is tainted alone, not its GPU or its siblings" {
    require_gate DRAPartitionableDevices
    require_gate DRADeviceTaints
    find_mig_gpu
    local tree
    tree=$(fakehw_device "$MIG_NODE" "$MIG_POOL" "$MIG_3G") || return 1
    flip_unhealthy "$MIG_NODE" "$tree" "$MIG_3G"
    wait_for "taint $(unhealthy_taint_key) on $MIG_POOL/$MIG_3G" "$CONFORMANCE_HEALTH_TIMEOUT" \
        device_has_unhealthy_taint "$MIG_POOL" "$MIG_3G" >/dev/null
    local slices tainted
    slices=$(driver_slices)
    tainted=$(jq -r --arg p "$MIG_POOL" --arg k "$(unhealthy_taint_key)" \
        '[.[] | select(.spec.pool.name == $p) | .spec.devices[]? | select(any(.taints[]?; .key == $k)) | .name] | join(" ")' <<<"$slices")
    [[ $tainted == "$MIG_3G" ]] || fail "tainted in pool $MIG_POOL: [$tainted]; want only $MIG_3G"
}

# requires: gate=DRAConsumableCapacity
# bats test_tags=consumable-capacity, generic, serial
@test "shares: two shares of one GPU get distinct shareIDs and the memory they asked for" {
    require_gate DRAConsumableCapacity
    find_shared_gpu
    local ns=$TEST_NAMESPACE cel
    cel=$(cel_attribute_equals uuid string "$SHARED_UUID")
    create_from claim-share CLAIM=s1 CEL="$cel" MEMORY=10Gi
    create_from claim-share CLAIM=s2 CEL="$cel" MEMORY=20Gi
    run_pod a s1 "$SHARED_NODE"
    run_pod b s2 "$SHARED_NODE"
    wait_pod_ready "$ns" a
    wait_pod_ready "$ns" b
    local r1 r2
    r1=$(claim_json "$ns" s1 | jq -c '.status.allocation.devices.results[0] | [.device, .shareID, .consumedCapacity.memory]')
    r2=$(claim_json "$ns" s2 | jq -c '.status.allocation.devices.results[0] | [.device, .shareID, .consumedCapacity.memory]')
    [[ $(jq -r '.[0]' <<<"$r1") == "$SHARED_GPU" && $(jq -r '.[0]' <<<"$r2") == "$SHARED_GPU" ]] ||
        fail "both claims must share $SHARED_GPU: $r1 $r2"
    [[ $(jq -r '.[1] // ""' <<<"$r1") != "" && $(jq -r '.[1]' <<<"$r1") != $(jq -r '.[1]' <<<"$r2") ]] ||
        fail "the shares need distinct shareIDs: $r1 $r2"
    [[ $(quantity_value "$(jq -r '.[2]' <<<"$r1")") == $((10 << 30)) && $(quantity_value "$(jq -r '.[2]' <<<"$r2")") == $((20 << 30)) ]] ||
        fail "consumedCapacity.memory: want 10Gi and 20Gi: $r1 $r2"
    if is_fake_driver; then
        # FAKEHW_DEVICE_<i>_NAME names the device as the driver publishes it.
        local env i
        env=$(kc exec -n "$ns" b -c ctr -- env) || fail "env in pod b failed"
        i=$(sed -n "s/^FAKEHW_DEVICE_\([0-9]*\)_NAME=$SHARED_GPU\$/\1/p" <<<"$env" | head -n 1)
        [[ -n $i && $(container_env "$ns" b ctr "FAKEHW_DEVICE_${i}_MEMORY") == $((20 << 30)) ]] ||
            fail "pod b's environment does not hold the 20Gi it was granted on $SHARED_POOL/$SHARED_GPU"
    fi
}

# requires: gate=DRAConsumableCapacity
# bats test_tags=consumable-capacity, generic, serial
@test "shares: a share larger than what is left of the GPU stays pending" {
    require_gate DRAConsumableCapacity
    find_shared_gpu
    ((SHARED_MEMORY > (61 << 30) && SHARED_MEMORY < (90 << 30))) ||
        skip "needs a shared GPU of 61Gi to 90Gi (an 80GB one); $SHARED_GPU has $SHARED_MEMORY bytes"
    local ns=$TEST_NAMESPACE cel
    cel=$(cel_attribute_equals uuid string "$SHARED_UUID")
    create_from claim-share CLAIM=s1 CEL="$cel" MEMORY=30Gi
    run_pod a s1 "$SHARED_NODE"
    wait_pod_ready "$ns" a
    create_from claim-share CLAIM=big CEL="$cel" MEMORY=60Gi
    run_pod b big "$SHARED_NODE"
    assert_pod_stays_pending "$ns" b
}
