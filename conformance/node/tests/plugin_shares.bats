#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Consumable capacity (KEP-5075): a GPU the fakehw config shares by memory is
# published with allowMultipleAllocations and a requestPolicy; claims that
# got shares of it (shareID, consumedCapacity) are prepared each with its own
# CDI device, env and device status entry, and unpreparing one leaves the
# others prepared.  Tagged [fakehw]: the sharing comes from the fakehw config.
# shellcheck disable=SC2016,SC2154 # jq filters; $output, $status come from run

load ../lib/node_suite

# One shared A100 80GB (gpu-0) and one plain (gpu-1).
shares_up() {
    printf 'nodes:\n- name: %s\n  devices:\n  - {profile: A100-SXM4-80GB, sharing: {memory: {default: 10Gi, min: 1Gi, step: 1Gi}}}\n  - {profile: A100-SXM4-80GB}\n' \
        "$NODE" >"$FAKEHW_CONFIG"
    fakehw_start
    api_start "$@"
    plugin_start
    kubelet_register
    wait_pool_published 2
}

# share_claim NAME SHARE_ID MEMORY: a claim allocated a share of gpu-0.
share_claim() {
    claim_create "$1" &&
        claim_allocate_results "$1" "$(printf '[{"request":"gpu","driver":"%s","pool":"%s","device":"gpu-0","shareID":"%s","consumedCapacity":{"memory":"%s"}}]' \
            "$DRIVER" "$POOL" "$2" "$3")"
}

spec_env_of() {
    jq -r --arg n "$2=" '[.. | objects | .env? // empty | .[]] | .[] | select(startswith($n)) | ltrimstr($n)' \
        "$CDI_ROOT/k8s.$DRIVER-gpu_$1.json"
}

@test "shares: a shared GPU is published with allowMultipleAllocations and a memory requestPolicy [fakehw]" {
    shares_up
    run -0 slices '[.[].spec.devices[] | {name, multi: .allowMultipleAllocations, memory: .capacity.memory}]'
    assert_equal "$output" '[{"name":"gpu-0","multi":true,"memory":{"value":"80Gi","requestPolicy":{"default":"10Gi","validRange":{"min":"1Gi","max":"80Gi","step":"1Gi"}}}},{"name":"gpu-1","multi":null,"memory":{"value":"80Gi"}}]'
    assert_equal "$(device_attr gpu-0 memorySharing)" "$((10 << 30)) $((1 << 30)) $((1 << 30))"
}

@test "shares: two shares of one GPU prepare apart; unpreparing one leaves the other [fake-driver,fakehw]" {
    shares_up
    local a=7c6a1f2e-0000-4000-8000-00000000000a b=7c6a1f2e-0000-4000-8000-00000000000b
    share_claim c1 "$a" 10Gi
    local u1=$CLAIM_UID
    share_claim c2 "$b" 20Gi
    local u2=$CLAIM_UID
    run -0 prepare_json "$(ref c1)" "$(ref c2)"
    local answer=$output
    assert_equal "$(jq -c '[.claims[] | .devices[] | [.device, .share_id]] | sort' <<<"$answer")" \
        "$(jq -nc --arg a "$a" --arg b "$b" '[["gpu-0", $a], ["gpu-0", $b]] | sort')"
    # Each its own CDI device, env and granted memory.
    assert_equal "$(jq -r '[.claims[].devices[].cdi[]] | unique | length' <<<"$answer")" 4
    assert_equal "$(spec_env_of "$u1" FAKEHW_DEVICE_0_SHARE_ID)" "$a"
    assert_equal "$(spec_env_of "$u1" FAKEHW_DEVICE_0_MEMORY)" "$((10 << 30))"
    assert_equal "$(spec_env_of "$u2" FAKEHW_DEVICE_0_SHARE_ID)" "$b"
    assert_equal "$(spec_env_of "$u2" FAKEHW_DEVICE_0_MEMORY)" "$((20 << 30))"
    assert_equal "$(spec_env_of "$u2" FAKEHW_DEVICE_0_UUID)" "$(device_attr gpu-0 uuid)"
    # fakegpu-smi with c2's env shows the GPU with the memory c2 was granted...
    local env=()
    mapfile -t env < <(jq -r '[.. | objects | .env? // empty | .[]] | .[]' "$CDI_ROOT/k8s.$DRIVER-gpu_$u2.json")
    run -0 env -i "${env[@]}" "$NODE_BIN/fakegpu-smi" --root "$MNT" --query-gpu=uuid,memory.total --format=csv,noheader
    assert_output "$(device_attr gpu-0 uuid), 20480 MiB"
    # ...and -L lists exactly that share, with its shareID and that memory.
    run -0 env -i "${env[@]}" "$NODE_BIN/fakegpu-smi" --root "$MNT" -L
    assert_output "GPU 0: $(device_attr gpu-0 productName) (UUID: $(device_attr gpu-0 uuid))
  Share $b: 20480 MiB"
    # Each claim's status names its share.
    wait_for 10 "the device status entries" eval '[[ $(claim_get c2 | jq -r ".status.devices[0].shareID") == "$b" ]]'
    assert_equal "$(claim_get c1 | jq -r '.status.devices[0].shareID')" "$a"
    run -0 unprepare_claims "$(ref c1)"
    # The unprepared claim's spec goes right after the answer.
    wait_for 5 "c1's CDI spec gone" eval "[[ ! -e \$CDI_ROOT/k8s.\$DRIVER-gpu_$u1.json ]]"
    [[ -e $CDI_ROOT/k8s.$DRIVER-gpu_$u2.json ]]
    run -0 prepare_json "$(ref c2)"
    assert_equal "$(jq -r ".claims[0].devices[0].share_id" <<<"$output")" "$b"
}

@test "shares: a bad consumedCapacity fails that claim with the reason [fake-driver,fakehw]" {
    shares_up
    share_claim c1 7c6a1f2e-0000-4000-8000-00000000000a lots
    run prepare_json "$(ref c1)"
    assert_output --partial 'consumedCapacity.memory'
}

@test "shares: a server without consumable capacity stores the GPU unshared; the plugin keeps publishing [fakehw]" {
    shares_up --drop-consumable-capacity
    run -0 slices '[.[].spec.devices[] | has("allowMultipleAllocations")]'
    assert_output '[false,false]'
    fakehw_flip gpu-1 unhealthy
    wait_for 10 "the taint" eval '[[ $(slices "[.[].spec.devices[] | select(.taints) | .name]") == "[\"gpu-1\"]" ]]'
}
