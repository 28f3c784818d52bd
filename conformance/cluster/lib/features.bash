# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# What the cluster can do: server version, served API versions, and the DRA
# feature gates the scenarios need.  A scenario whose gate is off or whose
# version is too old is skipped with the reason, never failed.
#
# How a gate is decided, first answer wins (docs/conformance.md has the table):
#   1. CONFORMANCE_FEATURES=Gate=true|false      the person running the suite knows
#   2. a behavioural probe (server-side dry-run)  what the API server really does
#   3. kubernetes_feature_enabled metrics         apiserver /metrics, kubelet /metrics
#   4. the release default for the server's minor version
# Decisions are exported as CONFORMANCE_GATE_<Gate>=true|false with the reason
# in CONFORMANCE_GATE_<Gate>_WHY, so every test of the run sees the same answer.

# The gates the scenarios use, with the first minor release that enables each
# by default (each release's pkg/features/kube_features.go); an alpha gate that
# no release enables yet has GATE_NEVER_DEFAULT.
GATE_NEVER_DEFAULT=99
declare -gA GATE_DEFAULT_SINCE=(
    [DRAAdminAccess]=34
    [DRAPrioritizedList]=34
    [DRAResourceClaimDeviceStatus]=33
    [DRADeviceTaints]=36
    [ResourceHealthStatus]=36
    [DRAPartitionableDevices]=36
    [DRAConsumableCapacity]=36
    [DRAExtendedResource]=36
    [DRADeviceTaintRules]=37
    [DRADeviceBindingConditions]=36
    # Alpha in 1.37: on by default in no release yet.
    [DRAOptionalNodeOperations]=$GATE_NEVER_DEFAULT
)
# Gates the kubelet must have as well (checked on the nodes with devices).
declare -gA GATE_ON_KUBELET=([ResourceHealthStatus]=1 [DRAOptionalNodeOperations]=1)
# Gates with a dry-run probe: the function that runs it.
declare -gA GATE_PROBE=(
    [DRAAdminAccess]=probe_admin_access
    [DRAPrioritizedList]=probe_prioritized_list
    [DRADeviceTaints]=probe_device_taints
    [DRAExtendedResource]=probe_extended_resource
    [DRADeviceTaintRules]=probe_device_taint_rules
)
# The resource.k8s.io versions that may serve DeviceTaintRule, newest first:
# v1alpha3 in 1.35, v1beta2 in 1.36 (both off by default), v1 from 1.37.
DEVICE_TAINT_RULE_VERSIONS=(v1 v1beta2 v1alpha3)

# --- version and API -----------------------------------------------------------

# parse_server_version: `kubectl version -o json` on stdin -> "major minor gitVersion".
# Providers append "+" to the minor ("35+"); only the digits count.
parse_server_version() {
    jq -ers '.[0].serverVersion // error("no serverVersion: the cluster did not answer")
        | "\(.major | gsub("[^0-9]"; "")) \(.minor | gsub("[^0-9]"; "")) \(.gitVersion // "?")"'
}

# Sets CONFORMANCE_SERVER_MAJOR/MINOR/VERSION.  Fails with kubectl's words
# when the cluster cannot be reached.
detect_server_version() {
    local json out major minor git
    json=$(kc version -o json 2>/dev/null) || true
    out=$(parse_server_version <<<"$json" 2>/dev/null) || {
        out=$(kc version -o json 2>&1 >/dev/null | head -n 3 | tr '\n' ' ')
        fail "cannot reach the cluster of the current kubeconfig" \
            "(${KUBECONFIG:-~/.kube/config}${CONFORMANCE_KUBE_CONTEXT:+, context $CONFORMANCE_KUBE_CONTEXT}):" \
            "${out:-kubectl version printed no server version}." \
            "No cluster yet? make kind-up creates a kind cluster with the driver"
        return 1
    }
    read -r major minor git <<<"$out"
    [[ $major =~ ^[0-9]+$ && $minor =~ ^[0-9]+$ ]] || {
        fail "cannot read the server version from kubectl version: major \"$major\", minor \"$minor\""
        return 1
    }
    export CONFORMANCE_SERVER_MAJOR=$major CONFORMANCE_SERVER_MINOR=$minor CONFORMANCE_SERVER_VERSION=$git
}

# Succeeds if the server is at least 1.$1.
server_minor_at_least() {
    ((CONFORMANCE_SERVER_MAJOR > 1 || CONFORMANCE_SERVER_MINOR >= $1))
}

# Succeeds if GROUP/VERSION ($1) is served.
api_version_served() {
    local versions
    versions=$(kc api-versions) || return 1
    grep -qxF -- "$1" <<<"$versions"
}

# detect_taint_rule_api: the newest resource.k8s.io version whose discovery
# document lists devicetaintrules, exported as CONFORMANCE_TAINT_RULE_API
# (e.g. resource.k8s.io/v1beta2; empty when none), with the versions asked in
# CONFORMANCE_TAINT_RULE_API_WHY.  CONFORMANCE_TAINT_RULE_API set beforehand
# is kept.
detect_taint_rule_api() {
    [[ -n ${CONFORMANCE_TAINT_RULE_API+set} ]] && return 0
    local v doc asked=()
    for v in "${DEVICE_TAINT_RULE_VERSIONS[@]}"; do
        doc=$(kc get --raw "/apis/resource.k8s.io/$v" 2>/dev/null) || {
            asked+=("$v: not served")
            continue
        }
        if jq -e 'any(.resources[]?; .name == "devicetaintrules")' <<<"$doc" >/dev/null 2>&1; then
            export CONFORMANCE_TAINT_RULE_API=resource.k8s.io/$v
            export CONFORMANCE_TAINT_RULE_API_WHY="resource.k8s.io/$v lists devicetaintrules"
            return 0
        fi
        asked+=("$v: no devicetaintrules")
    done
    local joined
    joined=$(printf '%s, ' "${asked[@]}")
    export CONFORMANCE_TAINT_RULE_API=''
    export CONFORMANCE_TAINT_RULE_API_WHY="no resource.k8s.io version serves devicetaintrules (${joined%, })"
}

# --- gate decisions ------------------------------------------------------------

# metric_gate METRICS_TEXT GATE: prints 1 or 0 from kubernetes_feature_enabled,
# nothing when the metric does not name the gate.
metric_gate() {
    grep -E "^kubernetes_feature_enabled\{[^}]*name=\"$2\"[,}]" <<<"$1" | awk '{print $NF; exit}'
}

# The override for gate $1 from CONFORMANCE_FEATURES, or nothing.
gate_override() {
    local entry list
    IFS=, read -ra list <<<"${CONFORMANCE_FEATURES:-}"
    for entry in "${list[@]}"; do
        [[ ${entry%%=*} == "$1" ]] && printf '%s\n' "${entry#*=}"
    done
    return 0
}

# Loads the apiserver's feature metrics into _APISERVER_METRICS once per
# process (call it directly, not in $(...), or the cache is lost); empty when
# /metrics is not readable.
fetch_apiserver_metrics() {
    [[ -n ${_APISERVER_METRICS_FETCHED:-} ]] && return 0
    _APISERVER_METRICS=$(kc get --raw /metrics 2>/dev/null | grep '^kubernetes_feature_enabled' || true)
    _APISERVER_METRICS_FETCHED=1
}

# Kubelet metrics of node $1 through the API server's node proxy; empty when
# not readable.
kubelet_metrics() {
    kc get --raw "/api/v1/nodes/$1/proxy/metrics" 2>/dev/null | grep '^kubernetes_feature_enabled' || true
}

# decide_gate GATE PROBE_NAMESPACE KUBELET_NODES...: decides one gate and
# exports the answer.  PROBE_NAMESPACE may be empty (no probes then).
decide_gate() {
    local gate=$1 ns=$2
    shift 2
    local value='' why='' result probe=${GATE_PROBE[$gate]:-}

    value=$(gate_override "$gate")
    [[ -n $value ]] && why="set by CONFORMANCE_FEATURES"

    if [[ -z $value && -n $probe && -n $ns ]]; then
        result=$("$probe" "$ns") || result=''
        if [[ $result == on\|* || $result == off\|* ]]; then
            value=$([[ $result == on\|* ]] && echo true || echo false)
            why="dry-run probe: ${result#*|}"
        elif [[ -n $result ]]; then
            why="dry-run probe inconclusive (${result#*|}); "
        fi
    fi

    if [[ -z $value ]]; then
        local m node seen='' off_on='' unread=''
        fetch_apiserver_metrics
        m=$(metric_gate "$_APISERVER_METRICS" "$gate")
        if [[ -n $m ]]; then
            seen=apiserver
            [[ $m == 1 ]] || off_on=kube-apiserver
        fi
        if [[ -n ${GATE_ON_KUBELET[$gate]:-} ]]; then
            for node in "$@"; do
                m=$(metric_gate "$(kubelet_metrics "$node")" "$gate")
                # Say so when a kubelet could not be asked (the node proxy
                # refuses some node addresses): the answer then rests on the others.
                [[ -n $m ]] || {
                    unread+=" kubelet/$node"
                    continue
                }
                seen+=" kubelet/$node"
                [[ $m == 1 ]] || off_on+=" kubelet/$node"
            done
        fi
        if [[ -n $seen ]]; then
            if [[ -z $off_on ]]; then
                value=true
                why+="kubernetes_feature_enabled=1 on ${seen# }"
            else
                value=false
                why+="kubernetes_feature_enabled=0 on ${off_on# }"
            fi
            [[ -z $unread ]] || why+="; no feature metric from${unread}"
        fi
    fi

    if [[ -z $value ]]; then
        local since=${GATE_DEFAULT_SINCE[$gate]:-}
        if [[ -n $since ]] && server_minor_at_least "$since"; then
            value=true
            why+="on by default since 1.$since, server is 1.$CONFORMANCE_SERVER_MINOR"
        else
            value=false
            if [[ $since == "$GATE_NEVER_DEFAULT" ]]; then
                why+="off by default in every release so far (alpha), server is 1.$CONFORMANCE_SERVER_MINOR"
            else
                why+="off by default before 1.${since:-?}, server is 1.$CONFORMANCE_SERVER_MINOR"
            fi
        fi
    fi
    export "CONFORMANCE_GATE_$gate=$value" "CONFORMANCE_GATE_${gate}_WHY=$why"
}

# decide_all_gates PROBE_NAMESPACE KUBELET_NODES...
decide_all_gates() {
    local gate
    detect_taint_rule_api
    for gate in $(printf '%s\n' "${!GATE_DEFAULT_SINCE[@]}" | sort); do
        decide_gate "$gate" "$@"
    done
}

# --- probes ----------------------------------------------------------------------
# Each probe creates a claim with --dry-run=server (nothing is stored) in
# namespace $1 and prints "on|<why>", "off|<why>", or "?|<why>" when the
# answer says nothing about the gate.  A disabled gate makes the API server
# drop its fields from the object it returns.

dry_run_create() {
    local manifest
    manifest=$(render_template "$@") || return 1
    kc create --dry-run=server -o json -f - <<<"$manifest" 2>&1
}

# dry_run_probe TEMPLATE NAMESPACE KIND KEPT ON_WHY OFF_WHY [REFUSED REFUSED_ANSWER]:
# the shape the probes below share.  TEMPLATE is created (in namespace
# NAMESPACE; none when empty); an answer of KIND for which the jq filter KEPT
# holds prints "on|ON_WHY", one for which it does not "off|OFF_WHY".  A
# refusal whose message matches the regex REFUSED prints REFUSED_ANSWER,
# where {answer} stands for the start of the server's message.  Anything
# else prints "?|" and what came back.
dry_run_probe() {
    local ns=$2 kind=$3 kept=$4 on_why=$5 off_why=$6
    local refused=${7:-} refused_answer=${8:-} out
    local -a vars=()
    [[ -z $ns ]] || vars=(NAMESPACE="$ns")
    if out=$(dry_run_create "$1" "${vars[@]}"); then # $1: TEMPLATE
        if jq -e "$kept" <<<"$out" >/dev/null 2>&1; then
            echo "on|$on_why"
        elif jq -e --arg kind "$kind" '.kind == $kind' <<<"$out" >/dev/null 2>&1; then
            echo "off|$off_why"
        else
            echo "?|unexpected answer: $(head -c 200 <<<"$out")"
        fi
    elif [[ -n $refused && $out =~ $refused ]]; then
        local start
        start=$(head -c 200 <<<"$out")
        echo "${refused_answer//\{answer\}/"$start"}"
    else
        echo "?|$(head -c 200 <<<"$out")"
    fi
}

# The probes, one row each: template, namespace, kind, the jq filter that
# holds when the gate's field was kept, why on, why off, and what a refusal
# means.
#
# DRAAdminAccess: a claim with adminAccess in a namespace without the
# admin-access label is refused when the gate is on, and comes back without
# the field when it is off.
probe_admin_access() {
    dry_run_probe probe-admin-access "$1" ResourceClaim \
        '.spec.devices.requests[0].exactly.adminAccess == true' \
        'adminAccess kept (no namespace label check)' 'adminAccess dropped from the claim' \
        'resource\.kubernetes\.io/admin-access' \
        'on|adminAccess refused without the resource.kubernetes.io/admin-access namespace label'
}

# DRAPrioritizedList: firstAvailable is dropped when off, which leaves the
# request with neither exactly nor firstAvailable, so validation refuses it.
probe_prioritized_list() {
    dry_run_probe probe-prioritized-list "$1" ResourceClaim \
        '(.spec.devices.requests[0].firstAvailable | length) > 0' \
        'firstAvailable accepted' 'firstAvailable dropped from the claim' \
        'firstAvailable|exactly one' 'off|firstAvailable refused: {answer}'
}

# DRADeviceTaints: request tolerations are dropped when off.
probe_device_taints() {
    dry_run_probe probe-device-taints "$1" ResourceClaim \
        '(.spec.devices.requests[0].exactly.tolerations | length) > 0' \
        'request tolerations kept' 'request tolerations dropped from the claim'
}

# DRAExtendedResource: a DeviceClass's extendedResourceName is dropped when off
# (pkg/registry/resource/deviceclass strategy, 1.34-1.36).  A DeviceClass has
# no namespace.
probe_extended_resource() {
    dry_run_probe probe-extended-resource '' DeviceClass \
        '.spec.extendedResourceName == "conformance.fakehw.example.com/probe"' \
        'DeviceClass extendedResourceName kept' 'DeviceClass extendedResourceName dropped'
}

# DRADeviceTaintRules: the DeviceTaintRule API is served only with the gate on
# (and, before 1.37, its API version turned on).
probe_device_taint_rules() {
    detect_taint_rule_api
    if [[ -n $CONFORMANCE_TAINT_RULE_API ]]; then
        echo "on|$CONFORMANCE_TAINT_RULE_API_WHY"
    else
        echo "off|$CONFORMANCE_TAINT_RULE_API_WHY"
    fi
}

# --- skip decisions ----------------------------------------------------------------
# Each *_missing function prints why a scenario cannot run here and succeeds,
# or prints nothing and fails when the requirement is met.  require_* turn
# that into a bats skip.

gate_missing() {
    local var=CONFORMANCE_GATE_$1 why_var=CONFORMANCE_GATE_${1}_WHY
    case ${!var:-} in
    true) return 1 ;;
    false)
        printf 'needs feature gate %s, which is off here (%s)\n' "$1" "${!why_var:-no reason recorded}"
        ;;
    *)
        printf 'needs feature gate %s, which was not detected (setup_suite.bash did not run?)\n' "$1"
        ;;
    esac
}

server_minor_missing() {
    server_minor_at_least "$1" && return 1
    printf 'needs Kubernetes 1.%s or newer; the server is %s\n' "$1" "${CONFORMANCE_SERVER_VERSION:-1.$CONFORMANCE_SERVER_MINOR}"
}

# param_missing VAR WHAT: VAR must be "true".
param_missing() {
    [[ ${!1:-} == true ]] && return 1
    printf 'the driver under test does not %s (%s=%s)\n' "$2" "$1" "${!1:-}"
}

fake_driver_missing() {
    is_fake_driver && return 1
    printf 'fake-driver check; the driver under test (%s) is not the fake driver (set CONFORMANCE_FAKE_DRIVER=true if it is, under another name)\n' \
        "$CONFORMANCE_DRIVER"
}

taint_rule_api_missing() {
    detect_taint_rule_api
    [[ -n $CONFORMANCE_TAINT_RULE_API ]] && return 1
    printf 'needs the DeviceTaintRule API (resource.k8s.io v1alpha3 in 1.35, v1beta2 in 1.36 with the DRADeviceTaintRules gate and runtime-config, v1 from 1.37): %s\n' \
        "$CONFORMANCE_TAINT_RULE_API_WHY"
}

require_taint_rule_api() {
    local why
    if why=$(taint_rule_api_missing); then skip "$why"; fi
}

require_gate() {
    local why
    if why=$(gate_missing "$1"); then skip "$why"; fi
}

require_server_minor() {
    local why
    if why=$(server_minor_missing "$1"); then skip "$why"; fi
}

require_param() {
    local why
    if why=$(param_missing "$1" "$2"); then skip "$why"; fi
}

require_fake_driver() {
    local why
    if why=$(fake_driver_missing); then skip "$why"; fi
}

# Prints the decisions, one "# " line each (TAP comments), for the run log.
print_capabilities() {
    local gate var why_var
    printf '# server %s; resource.k8s.io/v1 served\n' "${CONFORMANCE_SERVER_VERSION:-?}"
    printf '# driver %s, class %s, fake driver: %s\n' "$CONFORMANCE_DRIVER" "$CONFORMANCE_DEVICE_CLASS" "$CONFORMANCE_FAKE_DRIVER"
    printf '# DeviceTaintRule API: %s (%s)\n' "${CONFORMANCE_TAINT_RULE_API:-none}" "${CONFORMANCE_TAINT_RULE_API_WHY:-not detected}"
    for gate in $(printf '%s\n' "${!GATE_DEFAULT_SINCE[@]}" | sort); do
        var=CONFORMANCE_GATE_$gate
        why_var=CONFORMANCE_GATE_${gate}_WHY
        printf '# gate %s: %s (%s)\n' "$gate" "$([[ ${!var:-} == true ]] && echo on || echo off)" "${!why_var:-}"
    done
}
