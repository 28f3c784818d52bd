#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The quickstart check (conformance/quickstart/run.sh) with no cluster: a
# fake kubectl (bin/kubectl) answers from a fake cluster (fixtures/cluster),
# and the specs are the self-test's own, in the shape of NVIDIA's
# (fixtures/specs).  What is applied, what each container's nvidia-smi -L
# is held against, and every way a spec fails.
# shellcheck disable=SC2016 # jq filters

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

setup() {
    HERE=$(cd "$BATS_TEST_DIRNAME" && pwd)
    RUN=$HERE/../run.sh
    SPECS=$HERE/fixtures/specs
    export FAKE_CLUSTER=$BATS_TEST_TMPDIR/cluster
    cp -r "$HERE/fixtures/cluster" "$FAKE_CLUSTER"
    export KUBECTL=$HERE/bin/kubectl QUICKSTART_TIMEOUT=1 QUICKSTART_IMAGE=fakehw-dra/busybox:1.35.0
    export QUICKSTART_EXPECT_PENDING='selects-index=no such key: index'
    MIGPOD=mig-mps-7c9d8-x2q4p
}

# applied SPEC JQ: JQ over the List run.sh applied for SPEC.
applied() {
    jq -c "$2" "$FAKE_CLUSTER/applied/$1.json"
}

@test "quickstart: every container lists what its claims got; the specs are applied as written but for the image, then deleted" {
    run -0 "$RUN" "$SPECS" gpu-pair mig-mps selects-index
    assert_line --regexp '^gpu-pair +p1 +ctr +1 GPU +1 GPU +ok: gpu-4$'
    assert_line --regexp '^gpu-pair +p2 +ctr +1 GPU +1 GPU +ok: gpu-5$'
    # A static MIG device (its UUID) and a dynamic one (its parent's).
    assert_line --regexp "^mig-mps +$MIGPOD +c-mig +2 MIG +2 MIG +ok: gpu-0-mig-1g5gb-19-0, gpu-1-mig-3g20gb-9-4$"
    assert_line --regexp "^mig-mps +$MIGPOD +c-gpu +1 GPU +1 GPU +ok: gpu-5$"
    assert_line --regexp '^selects-index +- +- +1 pods +0 running +ok: pending as expected \(.*no such key: index.*\)$'
    # The image everywhere; sh for bash; the listing for what busybox cannot run.
    assert_equal "$(applied gpu-pair '[.items[] | select(.kind == "Pod") | .spec.containers[] | [.image, .command, .args]] | unique')" \
        '[["fakehw-dra/busybox:1.35.0",["sh","-c"],["nvidia-smi -L; trap '"'"'exit 0'"'"' TERM; sleep 9999 & wait"]]]'
    assert_equal "$(applied mig-mps '.items[] | select(.kind == "Deployment") | .spec.template.spec.containers[1] | [.command, .args]')" \
        '[["sh","-c"],["nvidia-smi -L; trap '"'"'exit 0'"'"' TERM; sleep 9999 & wait"]]'
    assert_output --partial 'quickstart: mig-mps: object 3 (Deployment mig-mps) container c-gpu ran "bash -c /opt/cuda-app --iterations 10"; it runs the listing instead'
    # Nothing else changed: the claims, configs and selectors are the spec's.
    assert_equal "$(applied mig-mps '.items[] | select(.kind == "ResourceClaimTemplate") | .spec.spec.devices.config[0].opaque.parameters.sharing')" '{"strategy":"MPS"}'
    assert_equal "$(python3 -c 'import sys, yaml, json; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d][2], sort_keys=True))' "$SPECS/v1/selects-index.yaml" | jq -c .)" \
        "$(applied selects-index '.items[2] | .spec.containers[0].image = "debian:12" | .spec.containers[0].command = ["bash", "-c"]')"
    run grep -c '^delete -f ' "$FAKE_CLUSTER/calls.log"
    assert_output 3
    [[ ! -e $FAKE_CLUSTER/namespaces/qs-pair && ! -e $FAKE_CLUSTER/namespaces/qs-mig ]]
}

@test "quickstart: a container that lists another GPU, or one too many, fails its row" {
    sed -i 's/GPU-00000000-0000-0000-0000-000000000005/GPU-00000000-0000-0000-0000-000000000004/' "$FAKE_CLUSTER/logs/qs-pair/p2/ctr.txt"
    run -1 "$RUN" "$SPECS" gpu-pair
    assert_line --regexp '^gpu-pair +p1 +ctr +1 GPU +1 GPU +ok: gpu-4$'
    assert_line --regexp '^gpu-pair +p2 .* FAIL: other GPUs: claimed GPU-[-0]+5, listed GPU-[-0]+4$'
    echo "GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-00000000-0000-0000-0000-000000000009)" >>"$FAKE_CLUSTER/logs/qs-pair/p1/ctr.txt"
    run -1 "$RUN" "$SPECS" gpu-pair
    assert_line --regexp '^gpu-pair +p1 +ctr +1 GPU +2 GPU +FAIL: 1 GPU, 0 MIG claimed; nvidia-smi -L lists 2 GPU, 0 MIG$'
}

@test "quickstart: a whole GPU where a MIG device was claimed, a MIG device of another GPU or another MIG device fail" {
    local log=$FAKE_CLUSTER/logs/qs-mig/$MIGPOD/c-mig.txt
    cp "$log" "$BATS_TEST_TMPDIR/c-mig.txt"
    grep -v 'MIG 3g' "$BATS_TEST_TMPDIR/c-mig.txt" >"$log"
    run -1 "$RUN" "$SPECS" mig-mps
    assert_line --regexp "^mig-mps +$MIGPOD +c-mig +2 MIG +1 GPU 1 MIG +FAIL: 0 GPU, 2 MIG claimed; nvidia-smi -L lists 1 GPU, 1 MIG$"
    sed 's/GPU-00000000-0000-0000-0000-000000000001)/GPU-00000000-0000-0000-0000-000000000007)/' "$BATS_TEST_TMPDIR/c-mig.txt" >"$log"
    run -1 "$RUN" "$SPECS" mig-mps
    assert_line --regexp "c-mig .* FAIL: MIG devices of other GPUs: claimed under GPU-[-0]+0,GPU-[-0]+1, listed under GPU-[-0]+0,GPU-[-0]+7$"
    sed 's/MIG-00000000-0000-0000-0000-0000000000a0/MIG-00000000-0000-0000-0000-0000000000ff/' "$BATS_TEST_TMPDIR/c-mig.txt" >"$log"
    run -1 "$RUN" "$SPECS" mig-mps
    assert_line --regexp "c-mig .* FAIL: other MIG devices: claimed MIG-[-0]+a0,\?, listed MIG-[-0]+ff,MIG-[-0]+b4$"
    # The other driver's gpu-4 in the same pool is not a device of gpu.nvidia.com.
    assert_line --regexp "c-gpu +1 GPU +1 GPU +ok: gpu-5$"
}

@test "quickstart: pods that do not run fail with the scheduler's message, unless expected; expected but running fails" {
    QUICKSTART_EXPECT_PENDING='' run -1 "$RUN" "$SPECS" selects-index
    assert_line --regexp '^selects-index +- +- +1 pods +0 running +FAIL: 0 of 1 pods run after 1s: .*CEL runtime error: no such key: index\.$'
    QUICKSTART_EXPECT_PENDING='selects-index=a quota' run -1 "$RUN" "$SPECS" selects-index
    assert_line --partial 'FAIL: 0 of 1 pods run after 1s'
    QUICKSTART_EXPECT_PENDING='gpu-pair=index' run -1 "$RUN" "$SPECS" gpu-pair
    assert_line --regexp '^gpu-pair +- +- +2 pods +2 running +FAIL: its pods run, but QUICKSTART_EXPECT_PENDING says they stay pending \(index\)$'
    echo 'error: resource mapping not found for kind "ResourceClaimTemplate"' >"$FAKE_CLUSTER/apply-fails"
    run -1 "$RUN" "$SPECS" gpu-pair
    assert_line --partial 'FAIL: kubectl apply: error: resource mapping not found for kind "ResourceClaimTemplate"'
}

@test "quickstart: bad usage, missing or uncheckable specs and a namespace in the way stop it before anything is applied" {
    run -2 "$RUN"
    assert_output --partial 'usage: run.sh SPECS_DIR [SPEC...]'
    run -2 "$RUN" "$BATS_TEST_TMPDIR/nothing"
    assert_output --partial 'not a directory'
    # The defaults are NVIDIA's file names, which the fixtures do not have.
    run -2 "$RUN" "$SPECS"
    assert_output --partial "$SPECS/v1/gpu-test1.yaml: no such spec"
    run -2 "$RUN" "$SPECS" gpu-pair stateful
    assert_output --partial 'stateful.yaml: object 1 (StatefulSet s): the check counts the pods of Pods and Deployments only'
    printf 'kind: [\n' >"$BATS_TEST_TMPDIR/broken.yaml"
    run -2 "$RUN" "$SPECS" "$BATS_TEST_TMPDIR/broken.yaml"
    assert_output --partial "quickstart: $BATS_TEST_TMPDIR/broken.yaml: "
    touch "$FAKE_CLUSTER/namespaces/qs-mig"
    run -2 "$RUN" "$SPECS" gpu-pair mig-mps
    assert_output --partial 'namespace qs-mig of'
    QUICKSTART_TIMEOUT=0 run -2 "$RUN" "$SPECS" gpu-pair
    assert_output --partial 'QUICKSTART_TIMEOUT=0 is not a positive whole number'
    run grep -c '^apply ' "$FAKE_CLUSTER/calls.log"
    assert_output 0
    run -0 "$RUN" --help
    assert_output --partial 'QUICKSTART_EXPECT_PENDING'
}

@test "quickstart: QUICKSTART_KEEP=true leaves the objects in the cluster" {
    QUICKSTART_KEEP=true run -0 "$RUN" "$SPECS" gpu-pair
    run grep -c '^delete ' "$FAKE_CLUSTER/calls.log"
    assert_output 0
    [[ -e $FAKE_CLUSTER/namespaces/qs-pair ]]
}
