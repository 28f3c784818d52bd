#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The claim device-status writer against the API server stand-in: Ready
# conditions and data after prepare, health flips and recovery, fakehw gone,
# other drivers' entries kept, conflicts and server errors retried, claims
# that are gone skipped.  publish-test-driver runs the writer; prepared claims
# come from its --claims-file.

bats_load_library bats-support
bats_load_library bats-assert
load ../../publish/tests/publish_helpers

CLAIMS=/apis/resource.k8s.io/v1/namespaces/default/resourceclaims

setup() {
    TREE=$BATS_TEST_TMPDIR/tree
    CLAIMS_FILE=$BATS_TEST_TMPDIR/claims
    [[ -x $(publish_driver_bin) ]] || fail "$(publish_driver_bin) is not built (make $(publish_driver_bin))"
    make_tree "$TREE" 4
    start_standin
}

teardown() {
    [[ ${BATS_TEST_COMPLETED:-} == 1 ]] || dump_logs
    stop_all
}

# create_claim NAME DEVICE...: a claim allocated to DEVICEs of this driver
# and node, plus eth0 of another driver with its own status entry.
create_claim() {
    local name=$1 results d
    shift
    api POST "$CLAIMS" "$(jq -nc --arg n "$name" '{apiVersion:"resource.k8s.io/v1",kind:"ResourceClaim",
        metadata:{name:$n,namespace:"default"},
        spec:{devices:{requests:[{name:"gpu",exactly:{deviceClassName:"gpu.fakehw.example.com"}}]}}}')" >/dev/null
    results=$(for d in "$@"; do
        jq -nc --arg drv "$DRIVER" --arg p "$NODE" --arg d "$d" '{request:"gpu",driver:$drv,pool:$p,device:$d}'
    done | jq -sc --arg p "$NODE" '. + [{request:"gpu",driver:"nic.example.com",pool:$p,device:"eth0"}]')
    curl -sS -X PATCH -H 'Content-Type: application/merge-patch+json' --data "$(jq -nc --argjson r "$results" --arg p "$NODE" \
        '{status:{allocation:{devices:{results:$r}},
          devices:[{driver:"nic.example.com",pool:$p,device:"eth0",
            conditions:[{type:"Ready",status:"True",reason:"LinkUp",message:"",lastTransitionTime:"2025-01-01T00:00:00Z"}]}]}}')" \
        "$API$CLAIMS/$name/status" | jq -e .status.allocation >/dev/null
}

# record_claim NAME DEVICE...: lists the claim (its current uid) as prepared.
record_claim() {
    local name=$1 uid d
    shift
    uid=$(api GET "$CLAIMS/$name" | jq -r .metadata.uid)
    for d in "$@"; do
        echo "default $name $uid $NODE $d" >>"$CLAIMS_FILE"
    done
}

make_claim() {
    create_claim "$@"
    record_claim "$@"
}

# The Ready condition of DEVICE in claim NAME, as "status reason".
ready_of() {
    api GET "$CLAIMS/$1" | jq -r --arg d "$2" --arg drv "$DRIVER" \
        '.status.devices[]? | select(.driver == $drv and .device == $d) | .conditions[] | select(.type == "Ready") | "\(.status) \(.reason)"'
}

ready_is() { # ready_is CLAIM DEVICE "STATUS REASON"
    [[ $(ready_of "$1" "$2") == "$3" ]]
}

@test "a prepared claim gets Ready and data; flips turn Ready False and back; other drivers' entries stay" {
    make_claim c1 gpu-1 gpu-2
    start_driver --claims-file "$CLAIMS_FILE"
    wait_for 10 ready_is c1 gpu-1 "True DeviceHealthy"
    wait_for 5 ready_is c1 gpu-2 "True DeviceHealthy"
    run api GET "$CLAIMS/c1"
    local claim=$output since
    assert_equal "$(jq -c '.status.devices[] | select(.device == "gpu-2") | .data' <<<"$claim")" \
        '{"uuid":"GPU-00000002-1111-2222-3333-444444444444","productName":"NVIDIA H100 80GB HBM3","memory":"81559Mi"}'
    assert_equal "$(jq -c '.status.devices[0]' <<<"$claim")" \
        '{"driver":"nic.example.com","pool":"node-1","device":"eth0","conditions":[{"type":"Ready","status":"True","reason":"LinkUp","message":"","lastTransitionTime":"2025-01-01T00:00:00Z"}]}'
    since=$(jq -r '.status.devices[] | select(.device == "gpu-1") | .conditions[0].lastTransitionTime' <<<"$claim")

    flip "$TREE" 2 unhealthy "XID 79: GPU has fallen off the bus"
    wait_for 5 ready_is c1 gpu-2 "False XID79"
    run api GET "$CLAIMS/c1"
    assert_equal "$(jq -r '.status.devices[] | select(.device == "gpu-2") | .conditions[0].message' <<<"$output")" \
        "XID 79: GPU has fallen off the bus"
    # The other device's condition did not move.
    assert_equal "$(jq -r '.status.devices[] | select(.device == "gpu-1") | .conditions[0].lastTransitionTime' <<<"$output")" "$since"
    assert_equal "$(jq -r '.status.devices[0].device' <<<"$output")" eth0

    flip "$TREE" 2 healthy
    wait_for 5 ready_is c1 gpu-2 "True DeviceHealthy"
}

@test "a reason that is not UTF-8 (a hand-made tree) still turns Ready False, with the bytes cleaned" {
    make_claim c1 gpu-2
    start_driver --claims-file "$CLAIMS_FILE"
    wait_for 10 ready_is c1 gpu-2 "True DeviceHealthy"
    flip "$TREE" 2 unhealthy $'XID 79: \xff\xfe bus \xe2\x82'
    wait_for 5 ready_is c1 gpu-2 "False XID79"
    run api GET "$CLAIMS/c1"
    assert_equal "$(jq -r '.status.devices[] | select(.device == "gpu-2") | .conditions[0].message' <<<"$output")" \
        "XID 79: ?? bus ??"
    run grep -c "out of memory" "$BATS_TEST_TMPDIR/driver.log"
    assert_output 0
}

@test "fakehw gone: every held device turns FakehwUnavailable, and Ready again when it returns" {
    make_claim c1 gpu-0
    start_driver --claims-file "$CLAIMS_FILE"
    wait_for 10 ready_is c1 gpu-0 "True DeviceHealthy"
    mv "$TREE" "$TREE.away"
    wait_for 5 ready_is c1 gpu-0 "False FakehwUnavailable"
    mv "$TREE.away" "$TREE"
    wait_for 5 ready_is c1 gpu-0 "True DeviceHealthy"
}

@test "status writes are retried through conflicts and server errors" {
    make_claim c1 gpu-3
    api POST /standin/faults '{"status":409,"method":"PATCH","count":3}' >/dev/null
    api POST /standin/faults '{"status":503,"method":"PATCH","count":4}' >/dev/null
    start_driver --claims-file "$CLAIMS_FILE"
    wait_for 20 ready_is c1 gpu-3 "True DeviceHealthy"
    wait_for 2 status_at_least .claim_status.conflicts 3
    (($(status_field .claim_status.failures) >= 1))
    assert_equal "$(status_field .claim_status.given_up)" 0
    # The slices were published all along.
    run pool_is 4 1
    assert_success
}

@test "a claim that is gone or was replaced is skipped, the others are written" {
    make_claim c1 gpu-0
    api DELETE "$CLAIMS/c1" >/dev/null
    # c2 is deleted and made again: the prepared uid is the old one.
    make_claim c2 gpu-1
    api DELETE "$CLAIMS/c2" >/dev/null
    create_claim c2 gpu-1
    make_claim c3 gpu-2
    start_driver --claims-file "$CLAIMS_FILE"
    wait_for 10 ready_is c3 gpu-2 "True DeviceHealthy"
    wait_for 5 status_is .claim_status.queued 0
    assert_equal "$(ready_of c2 gpu-1)" ""
    assert_equal "$(status_field .claim_status.given_up)" 0
    assert_equal "$(status_field .claim_status.failures)" 0
}

@test "--device-status=false writes nothing" {
    make_claim c1 gpu-0
    start_driver --claims-file "$CLAIMS_FILE" --device-status=false
    wait_for 10 pool_is 4 1
    sleep 0.5
    assert_equal "$(ready_of c1 gpu-0)" ""
}
