#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Templates: every scenario manifest renders for the fake driver and for a
# driver with another name, passes yamllint and the field check of
# check_manifests.py; the placeholder guard stops unfilled or misspelt
# placeholders; values reach the manifest verbatim.

# Tests set suite parameters as globals that the sourced helpers read.
# shellcheck disable=SC2016,SC2030,SC2031,SC2034,SC2154
load selftest

setup() {
    selftest_setup
    TEST_NAMESPACE=dra-conf-selftest-1-abcde
}

# KEY=VALUE arguments for every placeholder of template $1 that is not global.
sample_args() {
    local key
    for key in $(template_placeholders "$1"); do
        case $key in
        DRIVER | DEVICE_CLASS | IMAGE | CONFIG_API_VERSION | NAMESPACE) ;;
        NAME) echo "NAME=dra-conf-selftest-1-abcde" ;;
        RUN_ID) echo "RUN_ID=abc123" ;;
        POD) echo "POD=pod-a" ;;
        CLAIM) echo "CLAIM=claim-a" ;;
        CLAIM_SOURCE) echo "CLAIM_SOURCE=${SAMPLE_SOURCE:-resourceClaimName}" ;;
        COUNT) echo "COUNT=2" ;;
        MEMORY) echo "MEMORY=20Gi" ;;
        TEMPLATE) echo "TEMPLATE=one-gpu" ;;
        CLASS) echo "CLASS=dra-conf-selftest-1-abcde-config" ;;
        ATTRIBUTE) echo "ATTRIBUTE=$(qualified_name productName)" ;;
        AFFINITY) echo "AFFINITY=$(pin_to worker-1)" ;;
        RESOURCE) echo "RESOURCE=$CONFORMANCE_DRIVER/gpu" ;;
        TOLERATIONS) echo 'TOLERATIONS=[{"key":"conformance.fakehw.example.com/taint-rule","operator":"Exists","effect":"NoExecute","tolerationSeconds":30}]' ;;
        TAINT_RULE_API) echo "TAINT_RULE_API=resource.k8s.io/v1beta2" ;;
        RULE) echo "RULE=dra-conf-selftest-1-abcde-rule" ;;
        SELECTOR) echo "SELECTOR={\"driver\":\"$CONFORMANCE_DRIVER\",\"pool\":\"worker-1\",\"device\":\"gpu-0\"}" ;;
        KEY) echo "KEY=conformance.fakehw.example.com/taint-rule" ;;
        VALUE) echo "VALUE=conformance" ;;
        EFFECT) echo "EFFECT=NoExecute" ;;
        NODE) echo "NODE=worker-1" ;;
        HOSTNAME) echo "HOSTNAME=worker-1" ;;
        DRIVER_IMAGE) echo "DRIVER_IMAGE=localhost/fakehw-dra:dev" ;;
        CEL) echo "CEL=$(cel_attribute_equals productName string 'NVIDIA "A100" & <80GB>') && $(cel_guarded capacity memory).compareTo(quantity(\"40Gi\")) >= 0" ;;
        *)
            echo "no sample value for placeholder $key of $1" >&2
            return 1
            ;;
        esac
    done
}

# Renders every template into $BATS_TEST_TMPDIR/out, then lints and checks.
render_all() {
    local t args
    mkdir -p "$BATS_TEST_TMPDIR/out"
    for t in "$CONFORMANCE_TEMPLATES"/*.yaml; do
        t=$(basename "$t")
        mapfile -t args < <(sample_args "$t")
        render_template "$t" "${args[@]}" >"$BATS_TEST_TMPDIR/out/$t"
        SAMPLE_SOURCE=resourceClaimTemplateName
        mapfile -t args < <(sample_args "$t")
        SAMPLE_SOURCE=
        render_template "$t" "${args[@]}" >"$BATS_TEST_TMPDIR/out/template-source-$t"
    done
    yamllint -s -c "$SELFTEST_DIR/yamllint.yaml" "$BATS_TEST_TMPDIR/out"
    python3 "$SELFTEST_DIR/check_manifests.py" "$BATS_TEST_TMPDIR"/out/*.yaml
}

@test "render: every template renders, lints and passes the field check (fake driver)" {
    run render_all
    assert_success
    assert_output ""
    run grep -l 'gpu.fakehw.example.com' "$BATS_TEST_TMPDIR/out/claim.yaml"
    assert_success
}

@test "render: every template renders, lints and passes the field check (another driver)" {
    CONFORMANCE_DRIVER=gpu.nvidia.com CONFORMANCE_DEVICE_CLASS=gpu.nvidia.com CONFORMANCE_IMAGE=registry.example.com/tools/shell:1.0
    run render_all
    assert_success
    assert_output ""
    run grep -c 'fakehw' "$BATS_TEST_TMPDIR/out/claim.yaml"
    assert_output 0
}

@test "render: the field check catches what the API server would refuse" {
    cat >"$BATS_TEST_TMPDIR/bad.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: Bad_Name
spec:
  devices:
    requests:
    - name: gpu
      all:
        allocationMode: All
    - name: two
      exactly:
        deviceClassName: x
        allocationMode: Some
        count: 0
    constraints:
    - requests: ["gpu", "nope"]
      matchAttribute: productName
YAML
    run python3 "$SELFTEST_DIR/check_manifests.py" "$BATS_TEST_TMPDIR/bad.yaml"
    assert_failure
    assert_line --partial 'unknown field "all"'
    assert_line --partial 'metadata.name "Bad_Name" is not a valid ResourceClaim name'
    assert_line --partial 'requests[0]: exactly one of exactly or firstAvailable is required'
    assert_line --partial '"Some" is not ExactCount or All'
    assert_line --partial 'count: must be a whole number >= 1'
    assert_line --partial '"productName" is not a fully qualified name'
    assert_line --partial '"nope" is not a request of the claim'
}

@test "render: the field check catches bad taint rules, tolerations and extended resource requests" {
    cat >"$BATS_TEST_TMPDIR/bad.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1beta2
kind: DeviceTaintRule
metadata:
  name: rule-a
spec:
  deviceSelector:
    driver: gpu.fakehw.example.com
    deviceClassName: gpu.fakehw.example.com
  taint:
    key: "not a key"
    effect: Evict
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: c1
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: x
        tolerations:
        - key: k
          operator: Exists
          effect: NoSchedule
          tolerationSeconds: 5
---
apiVersion: v1
kind: Pod
metadata:
  name: p1
spec:
  containers:
  - name: ctr
    image: busybox
    resources:
      requests:
        gpu: 1
      limits:
        example.com/gpu: 2
YAML
    run python3 "$SELFTEST_DIR/check_manifests.py" "$BATS_TEST_TMPDIR/bad.yaml"
    assert_failure
    assert_line --partial 'spec.deviceSelector: unknown field "deviceClassName"'
    assert_line --partial 'spec.taint.key: "not a key" is not a label key'
    assert_line --partial 'spec.taint.effect: "Evict" is not one of NoSchedule, NoExecute, None'
    assert_line --partial 'tolerations[0].tolerationSeconds: only with effect NoExecute'
    assert_line --partial 'resources.requests: "gpu" is not an extended resource name'
    assert_line --partial 'extended resources need requests equal to limits'
}

@test "render: the taint rule takes the served API version and a JSON selector verbatim" {
    run render_template device-taint-rule RULE=r1 TAINT_RULE_API=resource.k8s.io/v1alpha3 \
        SELECTOR='{"driver":"gpu.fakehw.example.com","pool":"worker-1"}' KEY=k.example.com/t VALUE=v EFFECT=NoSchedule
    assert_success
    assert_line "apiVersion: resource.k8s.io/v1alpha3"
    assert_line '  deviceSelector: {"driver":"gpu.fakehw.example.com","pool":"worker-1"}'
    run render_template pod-extended-resource POD=p RESOURCE=nvidia.com/gpu COUNT=2
    assert_success
    assert_line "        nvidia.com/gpu: 2"
}

@test "render: a placeholder left unfilled fails with its line" {
    run render_template claim CLAIM=c1
    assert_failure
    assert_output --partial "render claim: placeholders left unfilled (line:placeholder): 14:__COUNT__"
}

@test "render: a placeholder in a template the globals do not know fails the guard" {
    CONFORMANCE_TEMPLATES=$BATS_TEST_TMPDIR/templates
    mkdir -p "$CONFORMANCE_TEMPLATES"
    printf 'name: __NAME__\nvalue: __MISSPELT_NAME__\n' >"$CONFORMANCE_TEMPLATES/t.yaml"
    run render_template t NAME=x
    assert_failure
    assert_output --partial "2:__MISSPELT_NAME__"
}

@test "render: an argument the template does not use is an error, not ignored" {
    run render_template claim CLAIM=c1 COUNT=1 CONT=2
    assert_failure
    assert_output --partial "CONT given, but the template has no __CONT__"
    run render_template claim CLAIM=c1 COUNT
    assert_failure
    assert_output --partial 'argument "COUNT" is not KEY=VALUE'
}

@test "render: values reach the manifest verbatim, newlines are refused" {
    local cel='a == "x" && b["c"] != "&&" && d == "\\"'
    run render_template claim-selector CLAIM=c1 CEL="$cel"
    assert_success
    assert_line "              $cel"
    run render_template claim-selector CLAIM=c1 CEL=$'line1\nline2'
    assert_failure
    assert_output --partial "the value of CEL holds a newline"
}

@test "render: the globals come from the parameters" {
    CONFORMANCE_DRIVER=gpu.nvidia.com CONFORMANCE_DEVICE_CLASS=my-class CONFORMANCE_IMAGE=shell:2
    run render_template pod POD=p CLAIM_SOURCE=resourceClaimName CLAIM=c
    assert_success
    assert_line "  namespace: $TEST_NAMESPACE"
    assert_line "    image: shell:2"
    assert_line "  affinity: {}"
    run render_template claim CLAIM=c COUNT=1
    assert_line "        deviceClassName: my-class"
}

@test "render: CEL helpers guard missing attributes and quote values" {
    run cel_attribute_equals productName string 'NVIDIA "A100"'
    assert_output '"productName" in device.attributes["gpu.fakehw.example.com"] && device.attributes["gpu.fakehw.example.com"].productName == "NVIDIA \"A100\""'
    run cel_attribute_equals resource.kubernetes.io/pcieRoot string pci0000:17
    assert_output '"pcieRoot" in device.attributes["resource.kubernetes.io"] && device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:17"'
    run cel_attribute_equals index int 3
    assert_output --partial '.index == 3'
    run cel_attribute_equals driverVersion version 550.127.5
    assert_output --partial '.driverVersion.compareTo(semver("550.127.5")) == 0'
    run qualified_name uuid
    assert_output gpu.fakehw.example.com/uuid
    run pin_to worker-1
    assert_output '{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["worker-1"]}]}]}}}'
}

@test "render: the templates themselves are valid YAML under the repository's yamllint rules" {
    run yamllint --strict -c "$SUITE_DIR/../../.yamllint" "$SUITE_DIR/templates"
    assert_success
    assert_output ""
}
