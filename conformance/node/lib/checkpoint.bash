# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# The fake driver's checkpoint (checkpoint.json and checkpoint.journal in the
# plugin's directory, docs/prepare.md) and a plugin restart in the node
# environment.  Used by conformance/node/tests/plugin_prepare.bats (in its
# fake-driver branches) and the driver's own white-box tests
# (bench/node/restart.bats); needs node_env and $JOURNAL.

# checkpoint_claims: the claims the fake driver's checkpoint holds:
# checkpoint.json with the changes of checkpoint.journal applied (each line is
# "crc32:<hex> <JSON>"; docs/prepare.md).
checkpoint_claims() {
    {
        jq -c .claims "$CHECKPOINT"
        [[ ! -s $JOURNAL ]] || cut -d' ' -f2- "$JOURNAL"
    } | jq -cs 'reduce .[1:][] as $c (.[0];
        if $c.op == "prepared" then .[$c.uid] = $c.record else del(.[$c.uid]) end)'
}

# plugin_restart: starts the plugin again (after plugin_kill9 or plugin_stop)
# and waits until it is registered and has published its pool.
plugin_restart() {
    plugin_start
    kubelet_register
    wait_pool_published
}
