#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The Helm chart (manifests/helm/fakehw-dra) passes helm lint and renders the
# same objects as the kustomizations: the base with the default values, the
# nvidia-compat overlay with personality=nvidia, components/no-surge
# with rollingUpdate.surge=false (compare_helm.py takes out what belongs to
# each tool).  Its values schema refuses bad values.

load helpers

CHART=manifests/helm/fakehw-dra
COMPARE=$REPO/manifests/tests/compare_helm.py

setup() {
    cd "$REPO" || return 1
    command -v helm >/dev/null || fail "helm not installed (make deps installs it: scripts/install-go-tools.sh)"
}

# kustomize_render DIR OUT: with kustomize, else kubectl's kustomize v5.
kustomize_render() {
    if command -v kustomize >/dev/null; then
        kustomize build "$1" >"$2"
    elif command -v kubectl >/dev/null && kubectl version --client 2>/dev/null | grep -q '^Kustomize Version: v[5-9]'; then
        kubectl kustomize "$1" >"$2"
    else
        fail "neither kustomize nor kubectl with kustomize v5 is installed (make deps installs kustomize)"
    fi
}

compare() {
    local py
    py=$(python_for_checks) || return 1
    "$py" "$COMPARE" "$@"
}

@test "helm lint: the chart and its values are clean" {
    run helm lint --strict "$CHART"
    assert_success
    assert_output --partial "1 chart(s) linted, 0 chart(s) failed"
    run helm lint --strict "$CHART" --set personality=nvidia --set metrics.enabled=false
    assert_success
}

@test "helm template with the defaults renders the objects of manifests/base" {
    kustomize_render manifests/base "$BATS_TEST_TMPDIR/kustomize.yaml"
    run helm template fakehw-dra "$CHART"
    assert_success
    printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/helm.yaml"
    run compare "$BATS_TEST_TMPDIR/kustomize.yaml" "$BATS_TEST_TMPDIR/helm.yaml"
    assert_success
    assert_output ""
    # And the checks the kustomize output gets.
    run check rendered --driver "$DEFAULT_DRIVER" "$BATS_TEST_TMPDIR/helm.yaml"
    assert_success
    assert_output ""
}

@test "helm template with personality=nvidia renders the nvidia-compat overlay" {
    kustomize_render manifests/overlays/nvidia-compat "$BATS_TEST_TMPDIR/kustomize.yaml"
    helm template fakehw-dra "$CHART" --set personality=nvidia >"$BATS_TEST_TMPDIR/helm.yaml"
    run compare "$BATS_TEST_TMPDIR/kustomize.yaml" "$BATS_TEST_TMPDIR/helm.yaml"
    assert_success
    assert_output ""
    run check rendered --driver gpu.nvidia.com --forbid "$DEFAULT_DRIVER" "$BATS_TEST_TMPDIR/helm.yaml"
    assert_success
    assert_output ""
}

@test "the comparison notices a field that differs" {
    kustomize_render manifests/base "$BATS_TEST_TMPDIR/kustomize.yaml"
    helm template fakehw-dra "$CHART" --set image.pullPolicy=Always --set image.tag=v9 >"$BATS_TEST_TMPDIR/helm.yaml"
    run compare "$BATS_TEST_TMPDIR/kustomize.yaml" "$BATS_TEST_TMPDIR/helm.yaml"
    assert_failure
    assert_line "DaemonSet/fakehw-dra-kubelet-plugin.spec.template.spec.containers[0].imagePullPolicy: kustomize 'IfNotPresent' vs helm 'Always'"
    assert_line "DaemonSet/fakehw-dra-kubelet-plugin.spec.template.spec.containers[0].image: kustomize 'localhost/fakehw-dra:dev' vs helm 'localhost/fakehw-dra:v9'"
}

@test "metrics.enabled=false: no metrics Service, no METRICS_ADDRESS; a custom inventory" {
    printf 'defaults:\n  devices:\n    - count: 8\n      profile: L4\n' >"$BATS_TEST_TMPDIR/inv.yaml"
    helm template fakehw-dra "$CHART" --set metrics.enabled=false \
        --set-file fakehwConfig="$BATS_TEST_TMPDIR/inv.yaml" >"$BATS_TEST_TMPDIR/helm.yaml"
    run grep -E 'METRICS_ADDRESS|fakehw-dra-metrics|prometheus.io' "$BATS_TEST_TMPDIR/helm.yaml"
    assert_failure
    run check rendered --driver "$DEFAULT_DRIVER" "$BATS_TEST_TMPDIR/helm.yaml"
    assert_success
    run grep -A4 '^  fakehw.yaml: |' "$BATS_TEST_TMPDIR/helm.yaml"
    assert_output "  fakehw.yaml: |
    defaults:
      devices:
        - count: 8
          profile: L4"
}

@test "the values schema refuses bad values, naming them" {
    run helm template fakehw-dra "$CHART" --set driverName=Bad_Name
    assert_failure
    assert_output --partial "at '/driverName': 'Bad_Name' does not match pattern"
    run helm template fakehw-dra "$CHART" --set metrics.port=0
    assert_failure
    assert_output --partial "at '/metrics/port': minimum: got 0, want 1"
    run helm template fakehw-dra "$CHART" --set image.pullPolicy=Sometimes
    assert_failure
    assert_output --partial "at '/image/pullPolicy': value must be one of 'Always', 'IfNotPresent', 'Never'"
    run helm template fakehw-dra "$CHART" --set replicas=2
    assert_failure
    assert_output --partial "additional properties 'replicas' not allowed"
    run helm template fakehw-dra "$CHART" --set personality=amd
    assert_failure
    assert_output --partial "at '/personality': value must be one of 'fakehw', 'nvidia'"
}

@test "yamllint: what the chart renders is clean YAML" {
    command -v yamllint >/dev/null || fail "yamllint not installed (make deps)"
    helm template fakehw-dra "$CHART" >"$BATS_TEST_TMPDIR/helm.yaml"
    run yamllint --strict -c .yamllint "$BATS_TEST_TMPDIR/helm.yaml"
    assert_success
}

@test "rollingUpdate.surge, true by default: maxSurge 1, maxUnavailable 0, POD_UID from metadata.uid, fakehw takes over" {
    helm template fakehw-dra "$CHART" >"$BATS_TEST_TMPDIR/surge.yaml"
    run grep -A3 -E 'maxUnavailable|- name: (POD_UID|FAKEHW_TAKEOVER_TIMEOUT)' "$BATS_TEST_TMPDIR/surge.yaml"
    assert_output "      maxUnavailable: 0
      maxSurge: 1
  template:
    metadata:
--
            - name: FAKEHW_TAKEOVER_TIMEOUT
              value: \"300\"
            - name: NODE_NAME
              valueFrom:
--
            - name: POD_UID
              valueFrom:
                fieldRef:
                  fieldPath: metadata.uid"
    run helm template fakehw-dra "$CHART" --set rollingUpdate.surge=yes
    assert_failure
    assert_output --partial "/rollingUpdate/surge"
}

@test "rollingUpdate.surge=false renders components/no-surge, alone and with the nvidia-compat overlay" {
    local k=$BATS_TEST_TMPDIR/no-surge
    mkdir -p "$k"
    cp -r manifests/base manifests/components manifests/overlays "$BATS_TEST_TMPDIR/"
    printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../base]\ncomponents: [../components/no-surge]\n' >"$k/kustomization.yaml"
    kustomize_render "$k" "$BATS_TEST_TMPDIR/kustomize.yaml"
    helm template fakehw-dra "$CHART" --set rollingUpdate.surge=false >"$BATS_TEST_TMPDIR/helm.yaml"
    run compare "$BATS_TEST_TMPDIR/kustomize.yaml" "$BATS_TEST_TMPDIR/helm.yaml"
    assert_success
    assert_output ""
    run grep -E 'maxSurge: 1|POD_UID|FAKEHW_TAKEOVER_TIMEOUT' "$BATS_TEST_TMPDIR/helm.yaml"
    assert_failure
    run check rendered --driver "$DEFAULT_DRIVER" "$BATS_TEST_TMPDIR/helm.yaml"
    assert_success
    assert_output ""

    printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../overlays/nvidia-compat]\ncomponents: [../components/no-surge]\n' >"$k/kustomization.yaml"
    kustomize_render "$k" "$BATS_TEST_TMPDIR/kustomize.yaml"
    helm template fakehw-dra "$CHART" --set rollingUpdate.surge=false --set personality=nvidia \
        >"$BATS_TEST_TMPDIR/helm.yaml"
    run compare "$BATS_TEST_TMPDIR/kustomize.yaml" "$BATS_TEST_TMPDIR/helm.yaml"
    assert_success
    assert_output ""
}

# One bad inventory per line: the YAML, then (after " => ") the message the
# chart fails with, which is fakehw's own message without file:line:column.
BAD_INVENTORIES=(
    'colour: 1 => colour: unknown key (known keys here: seed, driverVersion, cudaDriverVersion, defaults, nodes, flips)'
    '- a => the config must be a mapping with the keys seed, driverVersion, cudaDriverVersion, defaults, nodes and flips, got a list'
    'defaults: {colour: 1} => defaults.colour: unknown key (known keys here: seed, driverVersion, cudaDriverVersion, devices, flips)'
    'defaults: [1] => defaults: expected a mapping (key: value lines), got a list'
    'defaults: {devices: 3} => defaults.devices: expected a list ("- " items), got a string'
    'nodes: => nodes: expected a list ("- " items), got null'
    'defaults: {devices: [{count: "4", profile: L4}]} => defaults.devices[0].count: "4" is quoted, so it is a string, not an integer'
    'defaults: {devices: [{count: 1.5, profile: L4}]} => defaults.devices[0].count: "1.5" is not an integer'
    'defaults: {devices: [{count: 5000, profile: L4}]} => defaults.devices[0].count: 5000 is not a valid count (0..4096)'
    'defaults: {devices: [{count: [1], profile: L4}]} => defaults.devices[0].count: expected a single value, got a list'
    'defaults: {devices: [{profile: L4, numaNode: 2000}]} => defaults.devices[0].numaNode: 2000 is not a valid NUMA node (-1..1023)'
    'defaults: {devices: [{profile: L5}]} => defaults.devices[0].profile: unknown profile "L5" (known: A100-SXM4-40GB, A100-SXM4-80GB, A100-PCIE-40GB, A100-PCIE-80GB, A10, H100-SXM5-80GB, H100-PCIE-80GB, H200, B200, GB200, L40S, L4, T4)'
    'defaults: {devices: [{profile: [L4]}]} => defaults.devices[0].profile: expected a single value, got a list'
    'defaults: {devices: [{profile: L4, flips: 1}]} => defaults.devices[0].flips: unknown key (known keys here: count, name, profile, productName, architecture, brand, memory, computeCapability, driverVersion, cudaDriverVersion, uuid, pciBusID, pcieRoot, numaNode, health, healthReason, attach, virtual, vfio, mig, sharing)'
    'defaults: {devices: [{profile: L4, virtual: "true"}]} => defaults.devices[0].virtual: "true" is quoted, so it is a string, not a boolean (write it without quotes)'
    'defaults: {devices: [{profile: L4, virtual: 3}]} => defaults.devices[0].virtual: "3" is not a boolean (true or false)'
    'defaults: {devices: [{profile: L4, health: sick}]} => defaults.devices[0].health: "sick" is not a health state (healthy or unhealthy)'
    'defaults: {devices: [{profile: L4, attach: {x: 1}}]} => defaults.devices[0].attach.x: unknown key (known keys here: delay, failure)'
    'defaults: {devices: [{profile: L4, attach: {failure: sometimes}}]} => defaults.devices[0].attach.failure: "sometimes" is not an attach failure (never, next or always)'
    'defaults: {devices: [{profile: A100-SXM4-80GB, mig: {mode: full}}]} => defaults.devices[0].mig.mode: "full" is not a MIG mode (off, dynamic or static)'
    'defaults: {devices: [{profile: A100-SXM4-80GB, mig: {mode: static, instances: [{size: 1}]}}]} => defaults.devices[0].mig.instances[0].size: unknown key (known keys here: profile, placement)'
    'defaults: {devices: [{profile: L4, sharing: {memory: {x: 1}}}]} => defaults.devices[0].sharing.memory.x: unknown key (known keys here: default, min, step)'
    'nodes: [{devices: []}] => nodes[0]: name is required (a node name or a glob like gpu-*)'
    'nodes: [{name: a, devices: [{profile: L4}]}, {name: a}] => nodes[1].name: "a" is also the name of nodes[0]; each node section needs its own name or glob'
    'flips: [{state: healthy}] => flips[0]: device is required (a device name or "all")'
    'flips: [{device: gpu-0}] => flips[0]: state (healthy or unhealthy) or xid is required: what the flip changes'
    'flips: [{device: gpu-0, xid: 0}] => flips[0].xid: 0 is not a valid XID (1..99999)'
    'flips: [{device: gpu-0, xid: "79"}] => flips[0].xid: "79" is quoted, so it is a string, not an integer'
    'flips: [{device: gpu-0, xid: 79, reason: XID 79}] => flips[0]: reason needs a state (it is the healthReason set with it)'
    'flips: [{device: gpu-0, state: dead}] => flips[0].state: "dead" is not a health state (healthy or unhealthy)'
)

@test "fakehwConfig: each inventory fakehw refuses fails the render with fakehw's message" {
    [[ -x $BIN/fakehw ]] || fail "no $BIN/fakehw: run make first"
    local entry yaml want
    for entry in "${BAD_INVENTORIES[@]}"; do
        yaml=${entry%% => *}
        want=${entry#* => }
        printf '%s\n' "$yaml" >"$BATS_TEST_TMPDIR/inv.yaml"
        run helm template fakehw-dra "$CHART" --set-file fakehwConfig="$BATS_TEST_TMPDIR/inv.yaml"
        assert_failure
        assert_output --partial "fakehwConfig: $want"
        # fakehw says the same, with the position (the node name matters for
        # nothing here: every section is checked).
        run "$BIN/fakehw" check --config "$BATS_TEST_TMPDIR/inv.yaml" --node n
        assert_failure
        assert_output --regexp "inv\.yaml:[0-9]+:[0-9]+: "
        # fakehw names the line of the first node with a duplicated name.
        assert_output --partial "${want/nodes\[0\];/nodes[0] (line 1);}"
    done
}

@test "fakehwConfig: the chart's inventories and the documented samples render" {
    local f
    for f in manifests/helm/fakehw-dra/files/fakehw.yaml manifests/base/fakehw.yaml; do
        run helm template fakehw-dra "$CHART" --set-file fakehwConfig="$f"
        assert_success
    done
    printf 'nodes:\n  - name: "gpu-*"\n    devices:\n      - count: 2\n        profile: h100-sxm5-80gb\n        virtual: false\n        numaNode: -1\n      - profile: A100-SXM4-80GB\n        mig: {mode: off}\n      - profile: A100-SXM4-80GB\n        mig: {mode: static, instances: [{profile: 3g.40gb, placement: 0}]}\n        attach: {delay: 5s, failure: next}\nflips:\n  - {device: all, after: 30s, state: unhealthy, for: 10s, reason: XID 79}\n  - {device: gpu-0, xid: 79, for: 1m}\n' \
        >"$BATS_TEST_TMPDIR/inv.yaml"
    run "$BIN/fakehw" check --config "$BATS_TEST_TMPDIR/inv.yaml" --node gpu-1
    assert_success
    run helm template fakehw-dra "$CHART" --set-file fakehwConfig="$BATS_TEST_TMPDIR/inv.yaml"
    assert_success
}

@test "fakehwConfig: the chart knows the keys and profiles fakehw knows" {
    [[ -x $BIN/fakehw ]] || fail "no $BIN/fakehw: run make first"
    local yaml
    # An unknown key at each level, and an unknown profile: both lists of
    # what is known must agree word for word.
    for yaml in 'zz: 1' 'defaults: {zz: 1}' 'nodes: [{name: a, zz: 1}]' 'defaults: {devices: [{zz: 1}]}' \
        'defaults: {devices: [{profile: L4, attach: {zz: 1}}]}' 'flips: [{zz: 1}]' \
        'defaults: {devices: [{profile: A100-SXM4-80GB, mig: {zz: 1}}]}' \
        'defaults: {devices: [{profile: A100-SXM4-80GB, mig: {mode: static, instances: [{zz: 1}]}}]}' \
        'defaults: {devices: [{profile: L4, sharing: {zz: 1}}]}' \
        'defaults: {devices: [{profile: L4, sharing: {memory: {zz: 1}}}]}' 'defaults: {devices: [{profile: zz}]}'; do
        printf '%s\n' "$yaml" >"$BATS_TEST_TMPDIR/inv.yaml"
        run "$BIN/fakehw" check --config "$BATS_TEST_TMPDIR/inv.yaml" --node n
        assert_failure
        local from_fakehw=${output#*: *: }
        run helm template fakehw-dra "$CHART" --set-file fakehwConfig="$BATS_TEST_TMPDIR/inv.yaml"
        assert_failure
        assert_output --partial "fakehwConfig: $from_fakehw"
    done
}
