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
