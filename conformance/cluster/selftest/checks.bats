#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The suite's preflight (setup_suite) against the fake cluster: it passes on a
# healthy cluster and prints what it decided, and each missing precondition
# stops the run with a message that says what is wrong and what to do.

# Tests set suite parameters as globals that the sourced helpers read.
# shellcheck disable=SC2016,SC2030,SC2031,SC2034,SC2154
load selftest

setup() { selftest_setup; }

@test "preflight: a healthy cluster passes and the decisions are printed" {
    run suite_preflight
    assert_success
    assert_line "# param CONFORMANCE_DRIVER=gpu.fakehw.example.com"
    assert_line "# server v1.35.6; resource.k8s.io/v1 served"
    assert_line "# driver gpu.fakehw.example.com, class gpu.fakehw.example.com, fake driver: true"
    assert_line --partial "# gate DRAAdminAccess: on (dry-run probe"
    # worker-1 has 4 current devices; its obsolete generation and the
    # tainted control plane do not count.
    assert_line "# test node: worker-1 (4 devices)"
    refute_output --partial "note:"
    # The probe namespace is created and removed again.
    run kubectl_calls
    assert_line --regexp '^delete namespace dra-conf-probe-[a-z0-9]{8} --wait=false$'
    run grep -l 'name: dra-conf-probe-' "$FAKE_CLUSTER"/created-*.yaml
    assert_success
}

@test "preflight: exports the decisions for the tests" {
    suite_preflight >/dev/null
    assert_equal "$CONFORMANCE_FAKE_DRIVER" true
    assert_equal "$CONFORMANCE_SERVER_MINOR" 35
    assert_equal "$CONFORMANCE_GATE_DRAPrioritizedList" true
    [[ $CONFORMANCE_RUN_ID =~ ^[a-z0-9]{8}$ ]]
    run bash -c 'echo "$CONFORMANCE_GATE_DRAPrioritizedList $CONFORMANCE_FAKE_DRIVER"'
    assert_output "true true"
}

@test "preflight: bad parameters stop the run before any kubectl call" {
    CONFORMANCE_TIMEOUT=soon
    run suite_preflight
    assert_failure
    assert_output --partial "CONFORMANCE_TIMEOUT=soon is not a whole number"
    run kubectl_calls
    assert_output ""
}

@test "preflight: an unreachable cluster" {
    echo 'Unable to connect to the server: dial tcp 127.0.0.1:6443: connect: connection refused' >"$FAKE_CLUSTER/unreachable"
    run suite_preflight
    assert_failure
    assert_output --partial "cannot reach the cluster of the current kubeconfig"
    assert_output --partial "connection refused"
    assert_output --partial "No cluster yet? make kind-up"
}

@test "preflight: a missing kubeconfig is named, with make kind-up" {
    KUBECONFIG=$BATS_TEST_TMPDIR/nope:$BATS_TEST_TMPDIR/nope2 run suite_preflight
    assert_failure
    assert_output --partial "KUBECONFIG=$BATS_TEST_TMPDIR/nope:$BATS_TEST_TMPDIR/nope2 names no existing file"
    assert_output --partial "make kind-up creates a kind cluster"
    unset KUBECONFIG
    HOME=$BATS_TEST_TMPDIR/home run suite_preflight
    assert_failure
    assert_output --partial "no kubeconfig: $BATS_TEST_TMPDIR/home/.kube/config does not exist and KUBECONFIG is not set"
    assert_output --partial "make kind-up"
    run kubectl_calls
    assert_output ""
}

@test "preflight: a kubectl client older than 1.34 is named" {
    jq '.clientVersion = {"major": "1", "minor": "32+", "gitVersion": "v1.32.4"}' "$FAKE_CLUSTER/version.json" >"$FAKE_CLUSTER/v.json"
    mv "$FAKE_CLUSTER/v.json" "$FAKE_CLUSTER/version.json"
    run suite_preflight
    assert_failure
    assert_output --partial "kubectl v1.32.4 ($SELFTEST_DIR/bin/kubectl) is too old: the suite needs kubectl 1.34 or newer"
    echo '{}' >"$FAKE_CLUSTER/version.json"
    run suite_preflight
    assert_failure
    assert_output --partial "cannot read the kubectl client version"
}

@test "preflight: a cluster without resource.k8s.io/v1" {
    sed -i '/^resource.k8s.io\/v1$/d' "$FAKE_CLUSTER/api-versions.txt"
    run suite_preflight
    assert_failure
    assert_output --partial "does not serve resource.k8s.io/v1 (DRA is GA from Kubernetes 1.34;"
    assert_output --partial "serves: resource.k8s.io/v1beta1"
}

@test "preflight: the driver's DeviceClass is missing" {
    CONFORMANCE_DEVICE_CLASS=gpu.example.com
    run suite_preflight
    assert_failure
    assert_output --partial "DeviceClass gpu.example.com not found"
    assert_output --partial "classes here: gpu.fakehw.example.com other.example.com"
}

@test "preflight: the driver publishes no ResourceSlices" {
    jq '.items = []' "$FAKE_CLUSTER/slices.json" >"$FAKE_CLUSTER/s" && mv "$FAKE_CLUSTER/s" "$FAKE_CLUSTER/slices.json"
    run suite_preflight
    assert_failure
    assert_output --partial "no ResourceSlice is published by driver gpu.fakehw.example.com"
    assert_output --partial "kubectl -n fakehw-dra get pods -l app.kubernetes.io/name=fakehw-dra"
}

@test "preflight: too few devices on any schedulable node" {
    CONFORMANCE_MIN_DEVICES=5
    run suite_preflight
    assert_failure
    assert_output --partial "no schedulable node has at least 5 devices of gpu.fakehw.example.com"
    assert_output --partial "Devices per node: worker-1: 4, worker-2: 2, control-plane: 1; schedulable nodes: worker-1 worker-2"
}

@test "preflight: devices without the expected attributes" {
    jq '(.items[] | select(.metadata.name == "worker-2-a") | .spec.devices[1].attributes) |= del(.uuid)' \
        "$FAKE_CLUSTER/slices.json" >"$FAKE_CLUSTER/s" && mv "$FAKE_CLUSTER/s" "$FAKE_CLUSTER/slices.json"
    run suite_preflight
    assert_failure
    assert_output --partial "lack expected fields"
    assert_output --partial "worker-2/gpu-1: no attribute uuid"
}

@test "preflight: fully qualified attribute names satisfy the expectation too" {
    jq --arg d gpu.fakehw.example.com '.items[].spec.devices[]?.attributes |= with_entries(if .key == "uuid" then .key = "\($d)/uuid" else . end)' \
        "$FAKE_CLUSTER/slices.json" >"$FAKE_CLUSTER/s" && mv "$FAKE_CLUSTER/s" "$FAKE_CLUSTER/slices.json"
    run suite_preflight
    assert_success
}

@test "preflight: the fake driver's pods must be found and Ready" {
    rm "$FAKE_CLUSTER/driver-pods.json"
    run suite_preflight
    assert_failure
    assert_output --partial "the fake driver's pods are not found"

    cp "$SELFTEST_DIR/fixtures/cluster/driver-pods.json" "$FAKE_CLUSTER/"
    jq '.items[1].status = {phase: "Pending", conditions: [{type: "Ready", status: "False"}]}' \
        "$FAKE_CLUSTER/driver-pods.json" >"$FAKE_CLUSTER/p" && mv "$FAKE_CLUSTER/p" "$FAKE_CLUSTER/driver-pods.json"
    run suite_preflight
    assert_failure
    assert_output --partial "driver pods in fakehw-dra are not Ready: fakehw-dra-fghij on worker-2 (Pending)"
}

@test "preflight: the fake driver run outside pods needs CONFORMANCE_FAKEHW_EXEC instead of pods" {
    rm "$FAKE_CLUSTER/driver-pods.json"
    run suite_preflight
    assert_failure
    assert_output --partial "or CONFORMANCE_FAKEHW_EXEC when fakehw runs outside pods"
    CONFORMANCE_FAKEHW_EXEC="env"
    run suite_preflight
    assert_success
    assert_line "# driver gpu.fakehw.example.com, class gpu.fakehw.example.com, fake driver: true"
    assert_line "# param CONFORMANCE_FAKEHW_EXEC=env"
}

@test "preflight: another driver needs no driver pods" {
    rm "$FAKE_CLUSTER/driver-pods.json"
    jq '.items[].spec.driver |= (if . == "gpu.fakehw.example.com" then "gpu.example.com" else . end)' \
        "$FAKE_CLUSTER/slices.json" >"$FAKE_CLUSTER/s" && mv "$FAKE_CLUSTER/s" "$FAKE_CLUSTER/slices.json"
    echo gpu.example.com >>"$FAKE_CLUSTER/deviceclasses.txt"
    CONFORMANCE_DRIVER=gpu.example.com CONFORMANCE_DEVICE_CLASS=gpu.example.com
    run suite_preflight
    assert_success
    assert_line "# driver gpu.example.com, class gpu.example.com, fake driver: false"
}

@test "preflight: namespaces of earlier runs are pointed out" {
    printf '%s\n' dra-conf-templates-1-abcde >"$FAKE_CLUSTER/namespaces.txt"
    run suite_preflight
    assert_success
    assert_line "# note: namespaces of earlier runs still exist and may hold devices: dra-conf-templates-1-abcde "
}

# --- the test image ---------------------------------------------------------------

# The image-check pods the preflight created, as "<node> <image> <pull policy>".
image_check_pods() {
    python3 -c '
import sys, yaml
for path in sys.argv[1:]:
    for doc in yaml.safe_load_all(open(path)):
        if doc and "conformance.fakehw.example.com/image-check" in doc["metadata"].get("labels", {}):
            c = doc["spec"]["containers"][0]
            print(doc["spec"]["nodeName"], c["image"], c["imagePullPolicy"], " ".join(c["command"]))
' "$FAKE_CLUSTER"/created-*.yaml
}

@test "preflight: the test image runs on every node with devices, one pod each, before any scenario" {
    CONFORMANCE_IMAGE=fakehw-dra/busybox:1.35.0
    run suite_preflight
    assert_success
    assert_line --regexp '^# test image fakehw-dra/busybox:1.35.0 runs on control-plane worker-1 worker-2 \([0-9]+s\)$'
    run image_check_pods
    assert_output "control-plane fakehw-dra/busybox:1.35.0 IfNotPresent sh -c cat /dev/null && env >/dev/null
worker-1 fakehw-dra/busybox:1.35.0 IfNotPresent sh -c cat /dev/null && env >/dev/null
worker-2 fakehw-dra/busybox:1.35.0 IfNotPresent sh -c cat /dev/null && env >/dev/null"
    # A cordoned node runs no scenario and is not asked.
    rm "$FAKE_CLUSTER"/created-*.yaml
    jq '(.items[] | select(.metadata.name == "worker-2") | .spec.unschedulable) = true' "$FAKE_CLUSTER/nodes.json" >"$FAKE_CLUSTER/n" &&
        mv "$FAKE_CLUSTER/n" "$FAKE_CLUSTER/nodes.json"
    run suite_preflight
    assert_success
    assert_line --regexp '^# test image fakehw-dra/busybox:1.35.0 runs on control-plane worker-1 \('
}

@test "preflight: a test image a node cannot pull stops the run at once, naming image, node and kind load" {
    echo ErrImagePull >"$FAKE_CLUSTER/image-check-worker-2"
    jq '(.items[] | select(.metadata.name == "worker-2") | .spec.providerID) = "kind://docker/fakehw-dra/worker-2"' \
        "$FAKE_CLUSTER/nodes.json" >"$FAKE_CLUSTER/n" && mv "$FAKE_CLUSTER/n" "$FAKE_CLUSTER/nodes.json"
    CONFORMANCE_TIMEOUT=100
    local start=$SECONDS
    run suite_preflight
    assert_failure
    ((SECONDS - start < 30)) || fail "the preflight waited $((SECONDS - start))s for a pull that had failed"
    assert_output --partial "the test image busybox:1.36 (CONFORMANCE_IMAGE) cannot run on node worker-2: ErrImagePull: failed to pull"
    assert_output --partial "put it on every node: kind load docker-image busybox:1.36 --name fakehw-dra"
    assert_output --partial "scripts/node-image/busybox-image.sh"
    assert_output --partial "CONFORMANCE_IMAGE_CHECK=false skips this check"
    # Its pods go with the probe namespace.
    run kubectl_calls
    assert_line --regexp '^delete namespace dra-conf-probe-[a-z0-9]{8} --wait=false$'
    # Off kind, the hint is generic.
    echo ImagePullBackOff >"$FAKE_CLUSTER/image-check-worker-1"
    run suite_preflight
    assert_failure
    assert_output --partial "cannot run on node worker-1: ImagePullBackOff"
    assert_output --partial "import it into the node's container runtime, or push it to a registry the node can pull from"
}

@test "preflight: a test image without sh, cat or env is named" {
    echo Failed >"$FAKE_CLUSTER/image-check-worker-1"
    run suite_preflight
    assert_failure
    assert_output --partial 'cannot run on node worker-1: the image ran, but sh -c "cat /dev/null && env" failed: StartError, exit code 127'
}

@test "preflight: a test image that never starts times out after CONFORMANCE_TIMEOUT" {
    echo Pending >"$FAKE_CLUSTER/image-check-worker-1"
    CONFORMANCE_TIMEOUT=2
    run suite_preflight
    assert_failure
    assert_output --partial "did not run on every node within 2s (CONFORMANCE_TIMEOUT): worker-1 ContainerCreating"
}

@test "preflight: CONFORMANCE_IMAGE_CHECK=false skips the test image check" {
    echo ErrImagePull >"$FAKE_CLUSTER/image-check-worker-2"
    CONFORMANCE_IMAGE_CHECK=false
    run suite_preflight
    assert_success
    assert_line "# test image busybox:1.36 not checked (CONFORMANCE_IMAGE_CHECK=false)"
    run image_check_pods
    assert_output ""
    CONFORMANCE_IMAGE_CHECK=maybe
    run suite_preflight
    assert_failure
    assert_output --partial "CONFORMANCE_IMAGE_CHECK=maybe must be true or false"
}
