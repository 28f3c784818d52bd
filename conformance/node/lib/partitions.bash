# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# MIG partitions in the node environment: a fakehw config with dynamic and
# static MIG GPUs, and the node brought up with it.  Used by
# conformance/node/tests/plugin_partitions.bats and the driver's own
# white-box tests (bench/node/partitions.bats); needs node_env.

# mig_config DYNAMIC STATIC: DYNAMIC A100-80GBs in dynamic MIG mode, then
# STATIC H100s cut into two 3g.40gb instances, then one T4 (no MIG).
mig_config() {
    {
        printf 'nodes:\n- name: %s\n  devices:\n' "$NODE"
        (($1 == 0)) || printf '  - {count: %s, profile: A100-SXM4-80GB, mig: {mode: dynamic}}\n' "$1"
        (($2 == 0)) || printf '  - {count: %s, profile: H100-SXM5-80GB, mig: {mode: static, instances: [{profile: 3g.40gb}, {profile: 3g.40gb}]}}\n' "$2"
        printf '  - {profile: T4}\n'
    } >"$FAKEHW_CONFIG"
}

mig_up() {
    mig_config "$1" "$2"
    fakehw_start
    api_start "${@:3}"
    plugin_start
    kubelet_register
}
