#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# MIG partitions (KEP-4815 partitionable devices): the counter sets and the
# devices that consume them for dynamic-mode GPUs, static instances as plain
# devices, per-partition health, the fallback to whole GPUs when the API
# server refuses counters, and prepare of a partition.  Tagged [fakehw]: the
# MIG layout comes from the fakehw config (docs/fakehw.md).
# shellcheck disable=SC2016,SC2154 # jq filters; $output, $status come from run

load ../lib/node_suite
load ../lib/partitions

# A dynamic A100-80GB offers 18 placements (7 + 4 + 3 + 2 + 1 + 1).
@test "partitions: a dynamic-MIG GPU gets a counter set; it and its placements consume from it [fakehw]" {
    mig_up 1 0
    wait_pool_published $((1 + 18 + 1))
    run -0 slices
    local all=$output
    # Counter sets first, in a slice of their own; devices in the next.
    assert_equal "$(jq -c '[.[] | [(.spec.sharedCounters // [] | length), (.spec.devices // [] | length)]]' <<<"$all")" '[[1,0],[0,20]]'
    assert_equal "$(jq -cS '.[0].spec.sharedCounters[0]' <<<"$all")" \
        "$(jq -ncS '{name: "gpu-0-counter-set", counters: ({memory: {value: "80Gi"}} + ([range(8)] | map({key: "memory-slice-\(.)", value: {value: "1"}}) | from_entries))}')"
    # The whole GPU takes every counter.
    assert_equal "$(jq -cS '.[1].spec.devices[] | select(.name == "gpu-0") | .consumesCounters' <<<"$all")" \
        "$(jq -cS '[{counterSet: .[0].spec.sharedCounters[0].name, counters: .[0].spec.sharedCounters[0].counters}]' <<<"$all")"
    # A 3g.40gb at placement 4: its memory and memory slices 4..7.
    local p
    p=$(jq -cS '.[1].spec.devices[] | select(.name == "gpu-0-mig-3g40gb-4")' <<<"$all")
    assert_equal "$(jq -cS .consumesCounters <<<"$p")" \
        '[{"counterSet":"gpu-0-counter-set","counters":{"memory":{"value":"40Gi"},"memory-slice-4":{"value":"1"},"memory-slice-5":{"value":"1"},"memory-slice-6":{"value":"1"},"memory-slice-7":{"value":"1"}}}]'
    assert_equal "$(jq -c '[.attributes.type.string, .attributes.profile.string, .attributes.parentUUID.string, .attributes.uuid.string, .capacity.memory.value]' <<<"$p")" \
        "[\"mig\",\"3g.40gb\",\"$(device_attr gpu-0 uuid)\",\"$(device_attr gpu-0-mig-3g40gb-4 uuid)\",\"40Gi\"]"
    [[ $(device_attr gpu-0-mig-3g40gb-4 uuid) == MIG-* ]]
    # Every placement NVIDIA documents for the A100 80GB, and no other.
    assert_equal "$(jq -c '[.[1].spec.devices[] | select(.attributes.type.string == "mig") | .attributes.profile.string] | group_by(.) | map([.[0], length])' <<<"$all")" \
        '[["1g.10gb",7],["1g.20gb",4],["2g.20gb",3],["3g.40gb",2],["4g.40gb",1],["7g.80gb",1]]'
    # The T4 (MIG off) is a plain device.
    assert_equal "$(jq -c '.[1].spec.devices[] | select(.name == "gpu-1") | [.attributes.type.string, has("consumesCounters")]' <<<"$all")" '["gpu",false]'
}

@test "partitions: counter sets at most 8 per slice, counting devices at most 64 per slice, every consumed counter exists [fakehw]" {
    mig_up 9 0
    wait_pool_published $((9 * 19 + 1)) 20
    run -0 slices
    local all=$output
    assert_equal "$(jq -c '[.[] | .spec.sharedCounters // [] | length] | map(select(. > 0))' <<<"$all")" '[8,1]'
    run -0 jq -e 'all(.[]; (.spec.devices // []) | length <= 64) and all(.[]; (.spec.sharedCounters != null) != (.spec.devices != null))' <<<"$all"
    # Every consumesCounters names a counter set of the pool and counters it has.
    run -0 jq -e '
        ([.[].spec.sharedCounters // [] | .[] | {key: .name, value: .counters}] | from_entries) as $sets |
        [.[].spec.devices // [] | .[] | .consumesCounters // [] | .[] |
            ($sets[.counterSet] // null) as $set | $set != null and all(.counters | keys[]; $set[.] != null)] |
        length == 9 * 19 and all' <<<"$all"
    assert_equal "$(jq -c '[.[].spec.sharedCounters // [] | .[].name] | unique | length' <<<"$all")" 9
}

@test "partitions: a static-MIG GPU publishes its instances as plain devices, not itself [fakehw]" {
    mig_up 0 1
    wait_pool_published 3
    run -0 slices '[.[].spec.devices[]? | {name, type: .attributes.type.string, profile: .attributes.profile.string, parent: .attributes.parentUUID.string, counters: has("consumesCounters")}]'
    assert_equal "$output" "$(jq -nc --arg p "$(device_attr gpu-0 uuid)" '[
        {name: "gpu-1", type: "gpu", profile: null, parent: null, counters: false},
        {name: "gpu-0-mig-3g40gb-0", type: "mig", profile: "3g.40gb", parent: $p, counters: false},
        {name: "gpu-0-mig-3g40gb-4", type: "mig", profile: "3g.40gb", parent: $p, counters: false}]')"
    run -0 slices '[.[] | select(.spec.sharedCounters)] | length'
    assert_output 0
}

@test "partitions: an unhealthy partition is tainted alone; an unhealthy GPU taints its partitions too [fakehw]" {
    mig_up 1 0
    wait_pool_published 20
    fakehw_flip gpu-0-mig-3g40gb-4 unhealthy "XID 94"
    wait_for 10 "the partition's taint" eval '[[ $(slices "[.[].spec.devices[]? | select(.taints) | .name]") == "[\"gpu-0-mig-3g40gb-4\"]" ]]'
    fakehw_flip gpu-0 unhealthy "XID 79"
    wait_for 10 "the GPU's and every partition's taint" eval '[[ $(slices "[.[].spec.devices[]? | select(.taints) | .name] | length") == 19 ]]'
    # The partition's reason is its GPU's, so its taint names the same XID.
    run -0 slices '.[].spec.devices[]? | select(.name == "gpu-0-mig-1g10gb-0") | .taints[0].value' -r
    assert_output XID-79
    assert_equal "$(device_attr gpu-0-mig-1g10gb-0 healthReason)" "parent gpu-0 is unhealthy: XID 79"
}

# partitionTypeAttribute (1.37, gate DRAPartitionableDevicesType): the
# standin validates it as the real server (on by default here).
@test "partitions: slices of counted devices name profile as their partitionTypeAttribute; the whole GPU is \"full\" [fake-driver,fakehw]" {
    mig_up 1 0
    wait_pool_published 20
    run -0 slices '[.[] | .spec.partitionTypeAttribute]'
    assert_output "$(jq -nc --arg a "$DRIVER/profile" '[null, $a]')"
    # Every device that consumes counters carries a profile; the T4 none.
    run -0 slices '[.[1].spec.devices[] | select(.consumesCounters) | .attributes.profile.string] | [length, (map(select(. == null)) | length), .[0]]'
    assert_output '[19,0,"full"]'
    run -0 slices '.[1].spec.devices[] | select(.name == "gpu-1") | .attributes | has("profile")'
    assert_output false
}

@test "partitions: prepare of a partition gives its MIG UUID and its parent's device node [fake-driver,fakehw]" {
    mig_up 1 0
    wait_pool_published 20
    claim_new c1 gpu-0-mig-3g40gb-4
    run -0 prepare_json "$(ref c1)"
    local answer=$output
    assert_equal "$(jq -r '.claims[0].devices[0].device' <<<"$answer")" gpu-0-mig-3g40gb-4
    local spec=$CDI_ROOT/k8s.$DRIVER-gpu_$CLAIM_UID.json
    run -0 jq -r '[.. | objects | .env? // empty | .[]] | .[]' "$spec"
    assert_line "FAKEHW_VISIBLE_DEVICES=$(device_attr gpu-0-mig-3g40gb-4 uuid)"
    run -0 jq -r '[.. | objects | .deviceNodes? // empty | .[] | "\(.path) \(.hostPath)"] | unique | .[]' "$spec"
    assert_output "/dev/fakegpu$(device_attr gpu-0 minor) $(device_attr gpu-0 devicePath)"
    # The container's tree: what the spec mounts (the partition and its GPU),
    # copied to a plain directory; fakegpu-smi there with the spec's env lists
    # the GPU with exactly that partition under it.
    local root=$BATS_TEST_TMPDIR/container-tree m env=()
    mkdir -p "$root/devices"
    while read -r m; do
        cp -r "$m" "$root/devices/"
    done < <(jq -r '[.. | objects | .mounts? // empty | .[] | .hostPath | select(contains("/devices/"))] | unique | .[]' "$spec")
    run -0 ls "$root/devices"
    assert_output $'gpu-0\ngpu-0-mig-3g40gb-4'
    mapfile -t env < <(jq -r '[.. | objects | .env? // empty | .[]] | .[]' "$spec")
    run -0 env -i "${env[@]}" "$NODE_BIN/fakegpu-smi" --root "$root" -L
    assert_output "GPU 0: NVIDIA A100-SXM4-80GB (UUID: $(device_attr gpu-0 uuid))
  MIG 3g.40gb     Device  0: (UUID: $(device_attr gpu-0-mig-3g40gb-4 uuid))"
}
