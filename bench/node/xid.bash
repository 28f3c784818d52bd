# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# XIDs in the node environment (bench/node/xid.bats, nvidia_xid.bats): a
# fakehw config, the node brought up with a personality, fakehw xid, and
# checks of the taints and the claim's Ready condition.  Needs node_env.
# shellcheck disable=SC2016 # jq filters

# Two A100s (gpu-0, gpu-1), then an H100 cut into two 3g.40gb instances,
# which NVIDIA's driver publishes alone (not the GPU): in the nvidia
# personality gpu-2-mig-3g40gb-9-0 and gpu-2-mig-3g40gb-9-4.
xid_config() {
    {
        printf 'nodes:\n- name: %s\n  devices:\n' "$NODE"
        printf '  - {count: 2, profile: A100-SXM4-80GB}\n'
        printf '  - {profile: H100-SXM5-80GB, mig: {mode: static, instances: [{profile: 3g.40gb}, {profile: 3g.40gb}]}}\n'
        printf '%s' "${1-}"
    } >"$FAKEHW_CONFIG"
}

# xid_up PERSONALITY [PLUGIN FLAGS...]: fakehw, the API server and the
# plugin in PERSONALITY, registered.
xid_up() {
    [[ -s $FAKEHW_CONFIG ]] || xid_config ''
    fakehw_start
    api_start
    plugin_start --personality "$1" --driver-name '' "${@:2}"
    kubelet_register
    wait_pool_published 4
}

# xid_claim_prepared PERSONALITY DEVICE...: xid_up PERSONALITY, then claim
# c1 of the DEVICEs made and prepared.
xid_claim_prepared() {
    xid_up "$1"
    claim_new c1 "${@:2}"
    run -0 prepare_claims "$(ref c1)"
}

# wait_fatal_xid_on_stream DEVICE CODE OTHER: the health stream's latest
# says DEVICE is UNHEALTHY for the fatal XID CODE and OTHER is HEALTHY.
wait_fatal_xid_on_stream() {
    wait_for 10 "UNHEALTHY $1 on the health stream" health_latest_has \
        "^pool=$NODE device=$1 health=UNHEALTHY .* message=$1 reported XID $2, a fatal XID \(not one of the ignored XIDs\)$" \
        "^pool=$NODE device=$3 health=HEALTHY "
}

fakehw_xid() {
    "$NODE_BIN/fakehw" xid --mount "$MNT" "$@"
}

# condition_message CLAIM DEVICE: the message of the device's Ready condition.
condition_message() {
    claim_get "$1" | jq -r --arg d "$2" '.status.devices[] | select(.device == $d) | .conditions[] | select(.type == "Ready") | .message'
}

