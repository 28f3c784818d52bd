#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The per-test lifecycle without a cluster: tags read back from test files,
# the fake-only skip, the node lock, namespace names, deferred cleanup and
# the failure diagnostics.

# Tests set suite parameters as globals that the sourced helpers read.
# shellcheck disable=SC2016,SC2030,SC2031,SC2034,SC2154
load selftest

setup() {
    selftest_setup
    # A test file to read tags from (not named .bats: it is not a test here).
    cp "$SELFTEST_DIR/fixtures/sample.bats.txt" "$BATS_TEST_TMPDIR/sample.bats"
}

@test "tags: file and test tags are read back per test" {
    run test_tags "$BATS_TEST_TMPDIR/sample.bats" "area: first"
    assert_output $'area-one\ngeneric'
    run test_tags "$BATS_TEST_TMPDIR/sample.bats" "area: second, untagged"
    assert_output area-one
    run test_tags "$BATS_TEST_TMPDIR/sample.bats" "area: third"
    assert_output $'area-one\nfake-only\nserial'
    run test_tags "$BATS_TEST_TMPDIR/sample.bats" "area: fourth"
    assert_output $'area-two\ngeneric'
    run test_tags "$BATS_TEST_TMPDIR/sample.bats" "area: fifth"
    assert_failure
    assert_output --partial 'no test "area: fifth"'
}

@test "tags: serial takes the node lock exclusively, everything else shares it" {
    TEST_TAGS=$'area-one\nfake-only\nserial'
    assert_equal "$(lock_mode)" exclusive
    TEST_TAGS=$'area-one\ngeneric'
    assert_equal "$(lock_mode)" shared
}

@test "lock: an exclusive holder keeps others out, shared holders coexist" {
    export CONFORMANCE_LOCK_FILE=$BATS_TEST_TMPDIR/lock CONFORMANCE_LOCK_TIMEOUT=1
    acquire_node_lock shared
    # A second shared holder gets in; an exclusive one times out.
    run bash -c "source '$SUITE_DIR/lib/helpers.bash'; acquire_node_lock shared && echo shared-ok"
    assert_output shared-ok
    run bash -c "source '$SUITE_DIR/lib/helpers.bash'; acquire_node_lock exclusive"
    assert_failure
    assert_output --partial "waited 1s for exclusive use of the nodes' devices"
    release_node_lock
    run bash -c "source '$SUITE_DIR/lib/helpers.bash'; acquire_node_lock exclusive && echo exclusive-ok"
    assert_output exclusive-ok
}

@test "lock per node: serial scenarios of two nodes overlap; shared ones keep out both, and are kept out" {
    export CONFORMANCE_LOCK_FILE=$BATS_TEST_TMPDIR/lock CONFORMANCE_LOCK_TIMEOUT=1
    write_lock_nodes node-b node-a node-b
    assert_equal "$(cat "$CONFORMANCE_LOCK_FILE.nodes")" $'node-a\nnode-b'
    local try="source '$SUITE_DIR/lib/helpers.bash'; SCENARIO_LOCK_MODE"
    TEST_TAGS=serial SCENARIO_LOCK_MODE=exclusive
    take_node_lock node-a
    # Another node's serial scenario gets in; this node's and a shared one wait.
    run bash -c "TEST_TAGS=serial; $try=exclusive; take_node_lock node-b && echo b-ok"
    assert_output b-ok
    run bash -c "TEST_TAGS=serial; $try=exclusive; take_node_lock node-a"
    assert_failure
    assert_output --partial "waited 1s for exclusive use of node node-a's devices"
    run bash -c "TEST_TAGS=; $try=shared; take_node_lock && echo shared-ok"
    assert_failure
    assert_output --partial "waited 1s for shared use of the nodes' devices"
    # all-nodes, or a node the preflight did not list: every node's lock.
    run bash -c "TEST_TAGS=\$'serial\nall-nodes'; $try=exclusive; take_node_lock node-b"
    assert_failure
    assert_output --partial "waited 1s for exclusive use of the nodes' devices"
    run bash -c "TEST_TAGS=serial; $try=exclusive; take_node_lock node-z"
    assert_failure
    assert_output --partial "waited 1s for exclusive use of the nodes' devices"
    release_node_lock
    # A shared holder keeps every serial scenario out; shared ones coexist.
    TEST_TAGS='' SCENARIO_LOCK_MODE=shared
    take_node_lock
    run bash -c "TEST_TAGS=; $try=shared; take_node_lock && echo shared-ok"
    assert_output shared-ok
    run bash -c "TEST_TAGS=serial; $try=exclusive; take_node_lock node-b"
    assert_failure
    release_node_lock
    run bash -c "TEST_TAGS=serial; $try=exclusive; take_node_lock node-b && echo b-ok"
    assert_output b-ok
}

@test "test node: a serial scenario takes the first candidate node no one holds, a shared one the first; a filter narrows them" {
    export CONFORMANCE_LOCK_FILE=$BATS_TEST_TMPDIR/lock CONFORMANCE_LOCK_TIMEOUT=1
    write_lock_nodes worker-1 worker-2 control-plane
    local try="source '$SUITE_DIR/lib/helpers.bash'; TEST_TAGS=serial SCENARIO_LOCK_MODE=exclusive"
    run node_candidates
    assert_output $'worker-1\t4\nworker-2\t2'
    run node_candidates '.attributes.productName.string | test("H100")'
    assert_output $'worker-2\t2'
    # Nobody holds a node: the one with the most devices.
    run bash -c "$try; use_test_node && echo \"\$TEST_NODE \$CONFORMANCE_LOCK_FDS\""
    assert_output --regexp '^worker-1 [0-9]+ $'
    # worker-1 held by another serial scenario: worker-2, at once.
    TEST_TAGS=serial SCENARIO_LOCK_MODE=exclusive
    take_node_lock worker-1
    run bash -c "$try; use_test_node && echo \"\$TEST_NODE\""
    assert_output worker-2
    # A filter only worker-1 meets: wait for it (here: time out).
    run bash -c "$try; use_test_node '.name == \"gpu-3\"'"
    assert_failure
    assert_output --partial "waited 1s for exclusive use of node worker-1's devices"
    # Both held: the first candidate's lock is waited for.
    bash -c "$try; take_node_lock worker-2 && touch '$BATS_TEST_TMPDIR/held'
        until [[ -e '$BATS_TEST_TMPDIR/stop' ]]; do sleep 0.1; done" 3>&- &
    local holder=$! i
    for ((i = 0; i < 100; i++)); do [[ -e $BATS_TEST_TMPDIR/held ]] && break || sleep 0.1; done
    run bash -c "$try; use_test_node"
    assert_failure
    assert_output --partial "waited 1s for exclusive use of node worker-1's devices"
    touch "$BATS_TEST_TMPDIR/stop"
    wait "$holder"
    # A shared scenario takes the first candidate, sharing every node: it
    # waits for worker-1's holder.
    run bash -c "source '$SUITE_DIR/lib/helpers.bash'; TEST_TAGS=; SCENARIO_LOCK_MODE=shared; use_test_node"
    assert_failure
    assert_output --partial "waited 1s for shared use of the nodes' devices"
    release_node_lock
    run bash -c "source '$SUITE_DIR/lib/helpers.bash'; TEST_TAGS=; SCENARIO_LOCK_MODE=shared; use_test_node && echo \"\$TEST_NODE\""
    assert_output worker-1
}

@test "namespace: names are DNS labels that say prefix, file and test" {
    local name
    BATS_TEST_FILENAME=/x/20-shared-claims.bats BATS_TEST_NUMBER=7 name=$(new_namespace_name)
    [[ $name =~ ^dra-conf-shared-claims-7-[a-z0-9]{5}$ ]]
    BATS_TEST_FILENAME=/x/99-a-very-long-file-name-that-goes-on-and-on.bats BATS_TEST_NUMBER=123 name=$(new_namespace_name)
    is_dns_label "$name"
    CONFORMANCE_NAMESPACE_PREFIX=abcdefghijklmnopqrstuvwx BATS_TEST_FILENAME=/x/99-Upper_Case.bats name=$(new_namespace_name)
    is_dns_label "$name"
}

# Runs scenario_setup (or a command) as the suite would, in a subshell with
# its own bats identity; skip is a stub that prints the reason.
in_scenario() {
    local description=$1
    shift
    run bash -c "
        set -e
        source '$SUITE_DIR/lib/helpers.bash'
        skip() { echo \"SKIP: \$*\"; exit 0; }
        BATS_TEST_FILENAME='$BATS_TEST_TMPDIR/sample.bats' BATS_TEST_DESCRIPTION='$description'
        BATS_TEST_NUMBER=3 BATS_TEST_TMPDIR='$BATS_TEST_TMPDIR/t' CONFORMANCE_LOCK_FILE='$BATS_TEST_TMPDIR/lock'
        mkdir -p \"\$BATS_TEST_TMPDIR\"
        $*"
}

@test "scenario: a fake-only test is skipped for another driver, before any namespace" {
    export CONFORMANCE_FAKE_DRIVER=false CONFORMANCE_DRIVER=gpu.example.com
    in_scenario "area: third" 'scenario_setup; echo created $TEST_NAMESPACE'
    assert_success
    assert_output --partial "SKIP: fake-driver check; the driver under test (gpu.example.com) is not the fake driver"
    refute_output --partial created
    run kubectl_calls
    assert_output ""
}

@test "scenario: setup creates the test's labelled namespace" {
    export CONFORMANCE_FAKE_DRIVER=true CONFORMANCE_RUN_ID=run42
    in_scenario "area: third" 'scenario_setup; echo "ns=$TEST_NAMESPACE"'
    assert_success
    assert_line --regexp '^ns=dra-conf-sample-3-[a-z0-9]{5}$'
    run cat "$FAKE_CLUSTER/created-0.yaml"
    assert_line --regexp '^  name: dra-conf-sample-3-[a-z0-9]{5}$'
    assert_line '    conformance.fakehw.example.com/run: "run42"'
    assert_line '    app.kubernetes.io/part-of: fakehw-dra-conformance'
}

@test "scenario: teardown after a pass runs deferred steps last-first and waits for the namespace" {
    in_scenario "area: first" '
        scenario_setup
        defer echo "deferred one"
        defer echo "deferred two, with  spaces"
        track_cluster_object deviceclass my-class
        BATS_TEST_COMPLETED=1 scenario_teardown'
    assert_success
    assert_line --index 0 "deferred two, with  spaces"
    assert_line --index 1 "deferred one"
    refute_output --partial "diagnostics"
    run kubectl_calls
    assert_line "delete deviceclass my-class --ignore-not-found --wait=false"
    assert_line --regexp '^delete namespace dra-conf-sample-3-[a-z0-9]{5} --wait=false$'
    assert_line --regexp '^delete pods,resourceclaims --all -n dra-conf-sample-3-[a-z0-9]{5} --wait=false$'
    assert_line --regexp '^get pods -n dra-conf-sample-3-[a-z0-9]{5} -o json$'
    assert_line --regexp '^get resourceclaims -n dra-conf-sample-3-[a-z0-9]{5} -o json$'
    # The namespace's pods and claims are gone before a cluster object (a
    # taint rule) goes.
    run bash -c "grep -nE '^(get resourceclaims|delete deviceclass)' <<<\"\$1\" | cut -d' ' -f1-2" _ "$output"
    assert_line --index 0 --regexp '^[0-9]+:get resourceclaims$'
    assert_line --index 1 --regexp '^[0-9]+:delete deviceclass$'
}

@test "scenario: teardown after a failure prints diagnostics, still cleans up, and fails on a failed step" {
    cat >"$FAKE_CLUSTER/test-pods.json" <<'JSON'
{"items": [{"metadata": {"name": "pod-a"}, "spec": {"nodeName": "worker-2"},
  "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
    "message": "0/3 nodes are available: 1 cannot allocate all claims."}]}}]}
JSON
    cat >"$FAKE_CLUSTER/test-claims.json" <<'JSON'
{"items": [{"metadata": {"name": "two"}, "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.fakehw.example.com", "count": 2}}]}},
  "status": {}}]}
JSON
    in_scenario "area: first" '
        scenario_setup
        create_from claim CLAIM=two COUNT=2
        defer false
        BATS_TEST_COMPLETED= scenario_teardown'
    assert_failure
    assert_line --partial '==== diagnostics for "area: first"'
    assert_line "pod pod-a: phase Pending node worker-2"
    assert_line "  condition PodScheduled=False Unschedulable 0/3 nodes are available: 1 cannot allocate all claims."
    assert_line "claim two:"
    assert_line '  allocation: "none"'
    assert_line "---- resourceslices of gpu.fakehw.example.com"
    assert_line "slice worker-2-a: node worker-2 pool worker-2@1"
    # Driver logs only from the nodes the test's pods are on.
    assert_line "# pod fakehw-dra-fghij on worker-2, container plugin"
    refute_line "# pod fakehw-dra-abcde on worker-1, container plugin"
    assert_line --partial "log line of fakehw-dra-fghij container plugin"
    assert_line "# 01-claim.yaml"
    assert_line "cleanup step failed: false "
    run kubectl_calls
    assert_line --regexp '^delete namespace dra-conf-sample-3-[a-z0-9]{5} --wait=false$'
}

@test "scenario: teardown fails, naming them, when the namespace's claims do not go" {
    cat >"$FAKE_CLUSTER/test-claims.json" <<'JSON'
{"items": [{"metadata": {"name": "two"}, "spec": {"devices": {"requests": []}}, "status": {}}]}
JSON
    touch "$FAKE_CLUSTER/claims-stuck"
    export CONFORMANCE_TIMEOUT=1
    in_scenario "area: first" 'scenario_setup; BATS_TEST_COMPLETED=1 scenario_teardown'
    assert_failure
    assert_line --partial "timed out after 1s waiting for: the pods and claims of namespace dra-conf-sample-3-"
    assert_line --partial "still in namespace dra-conf-sample-3-"
    assert_line --partial "ResourceClaim/two"
}

@test "scenario: CONFORMANCE_KEEP_NAMESPACES keeps a failed test's namespace" {
    export CONFORMANCE_KEEP_NAMESPACES=true
    in_scenario "area: first" 'scenario_setup; BATS_TEST_COMPLETED= scenario_teardown >/dev/null; echo rc=$?'
    assert_line "rc=0"
    run kubectl_calls
    refute_output --partial "delete namespace"
}
