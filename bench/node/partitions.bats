#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# MIG partitions against API servers that refuse or drop what the plugin
# publishes (counters, partitionTypeAttribute): whole GPUs or partitions
# without the attribute, and one log line that says why.
# White-box: these read fakehw-kubelet-plugin's own log, so they live beside
# the benchmarks, not in the conformance kit (whose node environment they use).
# shellcheck disable=SC2016,SC2154 # jq filters and eval'd checks; $output, $status come from run

load ../../conformance/node/lib/node_suite
load ../../conformance/node/lib/partitions

@test "partitions: a server that refuses counters gets whole GPUs only, said once in the log [fake-driver,fakehw]" {
    mig_up 2 1 --partitionable-devices refuse
    # Two whole A100s, the H100's two static instances and the T4.
    wait_pool_published 5
    run -0 slices '[.[] | select(.spec.sharedCounters)] | length'
    assert_output 0
    run -0 slices '[.[].spec.devices[]?.name]'
    assert_output '["gpu-0","gpu-1","gpu-3","gpu-2-mig-3g40gb-0","gpu-2-mig-3g40gb-4"]'
    assert_equal "$(grep -c 'refused partitionable devices' "$PLUGIN_LOG")" 1
    fakehw_flip gpu-0 unhealthy
    wait_for 10 "the taint" eval '[[ $(slices "[.[].spec.devices[]? | select(.taints) | .name]") == "[\"gpu-0\"]" ]]'
    assert_equal "$(grep -c 'refused partitionable devices' "$PLUGIN_LOG")" 1
}

@test "partitions: a server that drops counters (gate off) gets whole GPUs only [fake-driver,fakehw]" {
    mig_up 1 0 --partitionable-devices drop
    wait_pool_published 2
    run -0 slices '[.[].spec.devices[]?.name]'
    assert_output '["gpu-0","gpu-1"]'
    run -0 grep -c 'dropped (stored a slice without) partitionable devices' "$PLUGIN_LOG"
    assert_output 1
}

@test "partitions: a server that drops partitionTypeAttribute gets partitions without it, said once, and no re-publishing [fake-driver,fakehw]" {
    mig_up 1 0 --drop-partition-type-attribute
    wait_pool_published 20
    run -0 slices '[.[] | .spec | has("partitionTypeAttribute")]'
    assert_output '[false,false]'
    run -0 slices '[.[].spec.devices[]? | select(.consumesCounters)] | length'
    assert_output 19
    run -0 grep -c 'the API server dropped spec.partitionTypeAttribute' "$PLUGIN_LOG"
    assert_output 1
    # A flip is one write of the device slice; a publisher that kept
    # comparing what it sent with what was stored would write again and again.
    standin_clear_requests
    fakehw_flip gpu-0-mig-3g40gb-4 unhealthy "XID 94"
    wait_for 10 "the partition's taint" eval '[[ $(slices "[.[].spec.devices[]? | select(.taints) | .name]") == "[\"gpu-0-mig-3g40gb-4\"]" ]]'
    sleep 2
    local writes
    writes=$(standin_requests | jq -s '[.[] | select(.method != "GET" and (.path | contains("/resourceslices")))] | length')
    assert_equal "$writes" 1
    run -0 grep -c 'the API server dropped spec.partitionTypeAttribute' "$PLUGIN_LOG"
    assert_output 1
}
