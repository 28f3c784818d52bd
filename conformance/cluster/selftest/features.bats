#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Version and feature detection, and the skip decisions built on them, against
# the fake cluster: each way a gate can be decided (override, dry-run probe,
# metrics, release default) and what a skipped scenario says.

# Tests set suite parameters as globals that the sourced helpers read.
# shellcheck disable=SC2016,SC2030,SC2031,SC2034,SC2154
load selftest

setup() {
    selftest_setup
    detect_server_version
}

set_version() {
    jq --arg m "$1" '.serverVersion.minor = $m | .serverVersion.gitVersion = "v1.\($m | gsub("[^0-9]"; "")).0"' \
        "$FAKE_CLUSTER/version.json" >"$FAKE_CLUSTER/v.json"
    mv "$FAKE_CLUSTER/v.json" "$FAKE_CLUSTER/version.json"
    detect_server_version
}

@test "features: the server version is read, a provider's \"+\" ignored" {
    assert_equal "$CONFORMANCE_SERVER_MINOR" 35
    assert_equal "$CONFORMANCE_SERVER_VERSION" v1.35.6
    set_version 36+
    assert_equal "$CONFORMANCE_SERVER_MINOR" 36
    server_minor_at_least 36
    run server_minor_at_least 37
    assert_failure
}

@test "features: an unreachable cluster fails with kubectl's reason" {
    echo 'The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?' \
        >"$FAKE_CLUSTER/unreachable"
    run detect_server_version
    assert_failure
    assert_output --partial "cannot reach the cluster of the current kubeconfig"
    assert_output --partial "127.0.0.1:6443 was refused"
}

@test "features: kubernetes_feature_enabled lines are parsed per gate" {
    local metrics
    metrics=$(cat "$FAKE_CLUSTER/apiserver-metrics.txt")
    assert_equal "$(metric_gate "$metrics" DRAAdminAccess)" 1
    assert_equal "$(metric_gate "$metrics" DRADeviceTaints)" 0
    assert_equal "$(metric_gate "$metrics" DRA)" ""
    assert_equal "$(metric_gate "$metrics" DynamicResourceAllocation)" 1
}

@test "features: CONFORMANCE_FEATURES overrides every other source" {
    CONFORMANCE_FEATURES=DRAAdminAccess=false,DRADeviceTaints=true
    decide_gate DRAAdminAccess probe-ns worker-1
    decide_gate DRADeviceTaints probe-ns worker-1
    assert_equal "$CONFORMANCE_GATE_DRAAdminAccess" false
    assert_equal "$CONFORMANCE_GATE_DRAAdminAccess_WHY" "set by CONFORMANCE_FEATURES"
    assert_equal "$CONFORMANCE_GATE_DRADeviceTaints" true
    run kubectl_calls
    refute_output --partial dry-run
}

@test "features: DRAAdminAccess on: the probe claim is refused for the missing namespace label" {
    decide_gate DRAAdminAccess probe-ns
    assert_equal "$CONFORMANCE_GATE_DRAAdminAccess" true
    assert_equal "$CONFORMANCE_GATE_DRAAdminAccess_WHY" \
        "dry-run probe: adminAccess refused without the resource.kubernetes.io/admin-access namespace label"
    run kubectl_calls
    assert_line "create --dry-run=server -o json -f -"
}

@test "features: DRAAdminAccess off: the API server drops adminAccess" {
    sed -i '/DRAAdminAccess/d' "$FAKE_CLUSTER/gates.txt"
    decide_gate DRAAdminAccess probe-ns
    assert_equal "$CONFORMANCE_GATE_DRAAdminAccess" false
    assert_equal "$CONFORMANCE_GATE_DRAAdminAccess_WHY" "dry-run probe: adminAccess dropped from the claim"
}

@test "features: DRAPrioritizedList on, then off (firstAvailable dropped, claim refused)" {
    decide_gate DRAPrioritizedList probe-ns
    assert_equal "$CONFORMANCE_GATE_DRAPrioritizedList" true
    sed -i '/DRAPrioritizedList/d' "$FAKE_CLUSTER/gates.txt"
    decide_gate DRAPrioritizedList probe-ns
    assert_equal "$CONFORMANCE_GATE_DRAPrioritizedList" false
    [[ $CONFORMANCE_GATE_DRAPrioritizedList_WHY == "dry-run probe: firstAvailable refused:"* ]]
}

@test "features: DRADeviceTaints off, then on, by whether tolerations survive" {
    decide_gate DRADeviceTaints probe-ns
    assert_equal "$CONFORMANCE_GATE_DRADeviceTaints" false
    assert_equal "$CONFORMANCE_GATE_DRADeviceTaints_WHY" "dry-run probe: request tolerations dropped from the claim"
    echo DRADeviceTaints >>"$FAKE_CLUSTER/gates.txt"
    decide_gate DRADeviceTaints probe-ns
    assert_equal "$CONFORMANCE_GATE_DRADeviceTaints" true
}

@test "features: an inconclusive probe falls back to the apiserver metric" {
    echo 'Error from server (Forbidden): resourceclaims.resource.k8s.io is forbidden' >"$FAKE_CLUSTER/dry-run-error"
    decide_gate DRAAdminAccess probe-ns
    assert_equal "$CONFORMANCE_GATE_DRAAdminAccess" true
    [[ $CONFORMANCE_GATE_DRAAdminAccess_WHY == "dry-run probe inconclusive (Error from server (Forbidden)"*"); kubernetes_feature_enabled=1 on apiserver" ]]
}

@test "features: without probes and metrics the release default decides" {
    rm "$FAKE_CLUSTER/apiserver-metrics.txt" "$FAKE_CLUSTER/kubelet-metrics.txt"
    decide_gate DRADeviceTaints ""
    assert_equal "$CONFORMANCE_GATE_DRADeviceTaints" false
    assert_equal "$CONFORMANCE_GATE_DRADeviceTaints_WHY" "off by default before 1.36, server is 1.35"
    decide_gate DRAResourceClaimDeviceStatus ""
    assert_equal "$CONFORMANCE_GATE_DRAResourceClaimDeviceStatus" true
    set_version 36
    unset _APISERVER_METRICS_FETCHED
    decide_gate DRADeviceTaints ""
    assert_equal "$CONFORMANCE_GATE_DRADeviceTaints" true
    assert_equal "$CONFORMANCE_GATE_DRADeviceTaints_WHY" "on by default since 1.36, server is 1.36"
}

@test "features: ResourceHealthStatus needs the apiserver and every kubelet with devices" {
    decide_gate ResourceHealthStatus "" worker-1 worker-2
    assert_equal "$CONFORMANCE_GATE_ResourceHealthStatus" true
    assert_equal "$CONFORMANCE_GATE_ResourceHealthStatus_WHY" \
        "kubernetes_feature_enabled=1 on apiserver kubelet/worker-1 kubelet/worker-2"
    sed 's/} 1$/} 0/' "$FAKE_CLUSTER/kubelet-metrics.txt" >"$FAKE_CLUSTER/kubelet-metrics-worker-2.txt"
    decide_gate ResourceHealthStatus "" worker-1 worker-2
    assert_equal "$CONFORMANCE_GATE_ResourceHealthStatus" false
    assert_equal "$CONFORMANCE_GATE_ResourceHealthStatus_WHY" "kubernetes_feature_enabled=0 on kubelet/worker-2"
    run kubectl_calls
    assert_line "get --raw /api/v1/nodes/worker-2/proxy/metrics"
    # A kubelet the node proxy cannot reach is named, not silently left out.
    rm "$FAKE_CLUSTER/kubelet-metrics-worker-2.txt" "$FAKE_CLUSTER/kubelet-metrics.txt"
    decide_gate ResourceHealthStatus "" worker-1 worker-2
    assert_equal "$CONFORMANCE_GATE_ResourceHealthStatus" true
    assert_equal "$CONFORMANCE_GATE_ResourceHealthStatus_WHY" \
        "kubernetes_feature_enabled=1 on apiserver; no feature metric from kubelet/worker-1 kubelet/worker-2"
}

@test "features: decide_all_gates decides every gate the scenarios use" {
    decide_all_gates probe-ns worker-1
    run print_capabilities
    assert_line "# gate DRAAdminAccess: on (dry-run probe: adminAccess refused without the resource.kubernetes.io/admin-access namespace label)"
    assert_line "# gate DRADeviceTaints: off (dry-run probe: request tolerations dropped from the claim)"
    assert_line "# gate DRAPrioritizedList: on (dry-run probe: firstAvailable accepted)"
    assert_line "# gate DRAResourceClaimDeviceStatus: on (kubernetes_feature_enabled=1 on apiserver)"
    assert_line "# gate ResourceHealthStatus: on (kubernetes_feature_enabled=1 on apiserver kubelet/worker-1)"
    assert_line "# gate DRAExtendedResource: off (dry-run probe: DeviceClass extendedResourceName dropped)"
    assert_line --partial "# gate DRADeviceTaintRules: off (dry-run probe: no resource.k8s.io version serves devicetaintrules"
    assert_line --partial "# DeviceTaintRule API: none (no resource.k8s.io version serves devicetaintrules"
    # The apiserver metrics are fetched once for all gates.
    assert_equal "$(kubectl_calls | grep -c '^get --raw /metrics$')" 1
}

@test "skips: each missing requirement gives its reason" {
    export CONFORMANCE_GATE_DRADeviceTaints=false CONFORMANCE_GATE_DRADeviceTaints_WHY="off by default before 1.36, server is 1.35"
    run gate_missing DRADeviceTaints
    assert_success
    assert_output "needs feature gate DRADeviceTaints, which is off here (off by default before 1.36, server is 1.35)"
    export CONFORMANCE_GATE_DRAAdminAccess=true
    run gate_missing DRAAdminAccess
    assert_failure
    assert_output ""
    run gate_missing DRANeverDetected
    assert_output --partial "was not detected"

    run server_minor_missing 36
    assert_success
    assert_output "needs Kubernetes 1.36 or newer; the server is v1.35.6"
    run server_minor_missing 34
    assert_failure

    CONFORMANCE_DEVICE_METADATA=false
    run param_missing CONFORMANCE_DEVICE_METADATA "write KEP-5304 device metadata"
    assert_output "the driver under test does not write KEP-5304 device metadata (CONFORMANCE_DEVICE_METADATA=false)"
    CONFORMANCE_DEVICE_METADATA=true
    run param_missing CONFORMANCE_DEVICE_METADATA "write KEP-5304 device metadata"
    assert_failure

    CONFORMANCE_FAKE_DRIVER=false CONFORMANCE_DRIVER=gpu.example.com
    run fake_driver_missing
    assert_output --partial "fake-driver check; the driver under test (gpu.example.com) is not the fake driver"
    CONFORMANCE_FAKE_DRIVER=true
    run fake_driver_missing
    assert_failure
}

# discovery FILE RESOURCE...: a resource.k8s.io discovery document listing RESOURCE...
discovery() {
    local file=$1
    shift
    mkdir -p "$FAKE_CLUSTER/apis"
    jq -n '{kind: "APIResourceList", resources: [$ARGS.positional[] | {name: ., namespaced: false}]}' \
        --args "$@" >"$FAKE_CLUSTER/apis/$file.json"
}

@test "features: the DeviceTaintRule API version is the newest that lists devicetaintrules" {
    discovery v1alpha3 devicetaintrules
    detect_taint_rule_api
    assert_equal "$CONFORMANCE_TAINT_RULE_API" resource.k8s.io/v1alpha3
    assert_equal "$CONFORMANCE_TAINT_RULE_API_WHY" "resource.k8s.io/v1alpha3 lists devicetaintrules"
    # Once decided, not asked again.
    local calls
    calls=$(kubectl_calls | grep -c '^get --raw /apis/resource.k8s.io/')
    detect_taint_rule_api
    assert_equal "$(kubectl_calls | grep -c '^get --raw /apis/resource.k8s.io/')" "$calls"

    unset CONFORMANCE_TAINT_RULE_API
    discovery v1beta2 devicetaintrules resourceclaims
    discovery v1 deviceclasses devicetaintrules
    detect_taint_rule_api
    assert_equal "$CONFORMANCE_TAINT_RULE_API" resource.k8s.io/v1
}

@test "features: no DeviceTaintRule API skips the taint-rule scenarios with the versions asked" {
    detect_taint_rule_api
    assert_equal "$CONFORMANCE_TAINT_RULE_API" ""
    run taint_rule_api_missing
    assert_success
    assert_output --partial "needs the DeviceTaintRule API"
    assert_output --partial "(v1: no devicetaintrules, v1beta2: not served, v1alpha3: not served)"
    decide_gate DRADeviceTaintRules probe-ns
    assert_equal "$CONFORMANCE_GATE_DRADeviceTaintRules" false
    assert_equal "$CONFORMANCE_GATE_DRADeviceTaintRules_WHY" \
        "dry-run probe: no resource.k8s.io version serves devicetaintrules (v1: no devicetaintrules, v1beta2: not served, v1alpha3: not served)"

    export CONFORMANCE_TAINT_RULE_API=resource.k8s.io/v1beta2
    run taint_rule_api_missing
    assert_failure
    decide_gate DRADeviceTaintRules probe-ns
    assert_equal "$CONFORMANCE_GATE_DRADeviceTaintRules" true
}

@test "features: DRAExtendedResource: the probe sees the API server keep or drop extendedResourceName" {
    decide_gate DRAExtendedResource probe-ns
    assert_equal "$CONFORMANCE_GATE_DRAExtendedResource" false
    assert_equal "$CONFORMANCE_GATE_DRAExtendedResource_WHY" "dry-run probe: DeviceClass extendedResourceName dropped"
    echo DRAExtendedResource >>"$FAKE_CLUSTER/gates.txt"
    decide_gate DRAExtendedResource probe-ns
    assert_equal "$CONFORMANCE_GATE_DRAExtendedResource" true
    assert_equal "$CONFORMANCE_GATE_DRAExtendedResource_WHY" "dry-run probe: DeviceClass extendedResourceName kept"
    # Without a probe namespace, the release default: beta and on from 1.36.
    decide_gate DRAExtendedResource ''
    assert_equal "$CONFORMANCE_GATE_DRAExtendedResource" false
    set_version 36
    decide_gate DRAExtendedResource ''
    assert_equal "$CONFORMANCE_GATE_DRAExtendedResource" true
    assert_equal "$CONFORMANCE_GATE_DRAExtendedResource_WHY" "on by default since 1.36, server is 1.36"
}
