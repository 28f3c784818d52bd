# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Parameters of the cluster suite.  Every knob is an environment variable
# with a default here; docs/conformance.md lists them.  params_defaults fills
# the defaults, params_validate rejects bad values with a message naming the
# variable, params_resolve_fake turns the "auto" values into true/false once
# the cluster has been looked at.

# The fake driver's own name: with it, fake-only checks run without asking.
FAKE_DRIVER_NAME=gpu.fakehw.example.com

# Every parameter of the scenarios (run.sh has its own few: FILTER, JOBS and
# the report paths), in the order docs/conformance.md lists them.
PARAM_NAMES=(
    CONFORMANCE_DRIVER CONFORMANCE_DEVICE_CLASS CONFORMANCE_MIG_DEVICE_CLASS CONFORMANCE_NAMESPACE_PREFIX
    CONFORMANCE_IMAGE CONFORMANCE_IMAGE_CHECK
    CONFORMANCE_FAKE_DRIVER CONFORMANCE_SMI CONFORMANCE_DRIVER_NAMESPACE CONFORMANCE_DRIVER_POD_SELECTOR
    CONFORMANCE_PLUGIN_CONTAINER CONFORMANCE_FAKEHW_CONTAINER CONFORMANCE_FAKEHW_MOUNT
    CONFORMANCE_FAKEHW_BIN CONFORMANCE_FAKEHW_EXEC CONFORMANCE_FAKE_CONFIG_API_VERSION
    CONFORMANCE_TIMEOUT CONFORMANCE_PENDING_SECONDS CONFORMANCE_HEALTH_TIMEOUT CONFORMANCE_RESTART_TIMEOUT
    CONFORMANCE_BINDING_TIMEOUT_SECONDS
    CONFORMANCE_LOCK_TIMEOUT CONFORMANCE_POLL_INTERVAL CONFORMANCE_MIN_DEVICES
    CONFORMANCE_EXPECTED_ATTRIBUTES CONFORMANCE_EXPECTED_CAPACITY CONFORMANCE_SELECTOR_ATTRIBUTE
    CONFORMANCE_SELECTOR_CAPACITY CONFORMANCE_UNIQUE_ATTRIBUTE CONFORMANCE_DEVICE_STATUS
    CONFORMANCE_DEVICE_METADATA CONFORMANCE_EXTENDED_RESOURCE_NAME CONFORMANCE_NUMA_ATTRIBUTE
    CONFORMANCE_DRIVER_TAINT_EFFECT CONFORMANCE_UNSCHEDULABLE_REGEX CONFORMANCE_FEATURES
    CONFORMANCE_KUBECTL CONFORMANCE_KUBE_CONTEXT CONFORMANCE_API_PROXY CONFORMANCE_LOG_LINES
    CONFORMANCE_KEEP_NAMESPACES
)

params_defaults() {
    : "${CONFORMANCE_DRIVER:=$FAKE_DRIVER_NAME}"
    : "${CONFORMANCE_DEVICE_CLASS:=$CONFORMANCE_DRIVER}"
    : "${CONFORMANCE_MIG_DEVICE_CLASS:=$CONFORMANCE_DEVICE_CLASS}"
    : "${CONFORMANCE_NAMESPACE_PREFIX:=dra-conf}"
    : "${CONFORMANCE_IMAGE:=busybox:1.36}"
    : "${CONFORMANCE_IMAGE_CHECK:=true}"
    : "${CONFORMANCE_FAKE_DRIVER:=auto}"
    : "${CONFORMANCE_SMI=auto}"
    : "${CONFORMANCE_DRIVER_NAMESPACE:=fakehw-dra}"
    : "${CONFORMANCE_DRIVER_POD_SELECTOR:=app.kubernetes.io/name=fakehw-dra,app.kubernetes.io/component=kubelet-plugin}"
    : "${CONFORMANCE_PLUGIN_CONTAINER:=plugin}"
    : "${CONFORMANCE_FAKEHW_CONTAINER:=fakehw}"
    : "${CONFORMANCE_FAKEHW_MOUNT:=/var/run/fakehw}"
    : "${CONFORMANCE_FAKEHW_BIN:=/usr/local/bin/fakehw}"
    : "${CONFORMANCE_FAKEHW_EXEC:=}"
    : "${CONFORMANCE_FAKE_CONFIG_API_VERSION:=gpu.fakehw.example.com/v1alpha1}"
    : "${CONFORMANCE_TIMEOUT:=120}"
    : "${CONFORMANCE_PENDING_SECONDS:=5}"
    : "${CONFORMANCE_HEALTH_TIMEOUT:=90}"
    : "${CONFORMANCE_RESTART_TIMEOUT:=180}"
    : "${CONFORMANCE_BINDING_TIMEOUT_SECONDS:=}"
    : "${CONFORMANCE_LOCK_TIMEOUT:=1800}"
    : "${CONFORMANCE_POLL_INTERVAL:=0.5}"
    : "${CONFORMANCE_MIN_DEVICES:=2}"
    : "${CONFORMANCE_EXPECTED_ATTRIBUTES:=auto}"
    : "${CONFORMANCE_EXPECTED_CAPACITY:=auto}"
    : "${CONFORMANCE_SELECTOR_ATTRIBUTE:=productName}"
    : "${CONFORMANCE_SELECTOR_CAPACITY:=memory}"
    : "${CONFORMANCE_UNIQUE_ATTRIBUTE:=uuid}"
    : "${CONFORMANCE_DEVICE_STATUS:=auto}"
    : "${CONFORMANCE_DEVICE_METADATA:=auto}"
    : "${CONFORMANCE_EXTENDED_RESOURCE_NAME:=}"
    : "${CONFORMANCE_NUMA_ATTRIBUTE:=resource.kubernetes.io/numaNode}"
    : "${CONFORMANCE_DRIVER_TAINT_EFFECT:=NoSchedule}"
    : "${CONFORMANCE_UNSCHEDULABLE_REGEX:=cannot allocate all claims}"
    : "${CONFORMANCE_FEATURES:=}"
    : "${CONFORMANCE_KUBECTL:=kubectl}"
    : "${CONFORMANCE_KUBE_CONTEXT:=}"
    : "${CONFORMANCE_API_PROXY:=true}"
    : "${CONFORMANCE_LOG_LINES:=40}"
    : "${CONFORMANCE_KEEP_NAMESPACES:=false}"
    export "${PARAM_NAMES[@]}"
}

params_names() {
    printf '%s\n' "${PARAM_NAMES[@]}"
}

params_print() {
    local name
    for name in $(params_names); do
        printf '%s=%s\n' "$name" "${!name}"
    done
}

# A DNS subdomain (RFC 1123) of at most 253 characters: driver and class names.
is_dns_subdomain() {
    [[ ${#1} -le 253 && $1 =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ ]]
}

# A DNS label of at most 63 characters: namespace, pod and claim names.
is_dns_label() {
    [[ ${#1} -le 63 && $1 =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]]
}

# An attribute or capacity name: a C identifier, optionally "domain/" first.
is_qualified_name() {
    local id=$1
    if [[ $1 == */* ]]; then
        is_dns_subdomain "${1%%/*}" || return 1
        id=${1#*/}
    fi
    [[ ${#id} -le 32 && $id =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]]
}

# seconds_to_ms S: S seconds ("2", "0.5", "1.25") in whole milliseconds.
seconds_to_ms() {
    local whole=${1%%.*} frac=
    [[ $1 == *.* ]] && frac=${1#*.}
    frac=${frac}000
    echo $((10#$whole * 1000 + 10#${frac:0:3}))
}

# Checks every parameter; prints one line per bad value and fails if any.
params_validate() {
    local bad=0 name
    _param_error() {
        printf 'conformance: %s=%q %s\n' "$1" "${!1}" "$2" >&2
        bad=1
    }
    is_dns_subdomain "$CONFORMANCE_DRIVER" ||
        _param_error CONFORMANCE_DRIVER "is not a DRA driver name (a DNS subdomain such as gpu.example.com)"
    is_dns_subdomain "$CONFORMANCE_DEVICE_CLASS" ||
        _param_error CONFORMANCE_DEVICE_CLASS "is not a DeviceClass name (a DNS subdomain)"
    is_dns_subdomain "$CONFORMANCE_MIG_DEVICE_CLASS" ||
        _param_error CONFORMANCE_MIG_DEVICE_CLASS "is not a DeviceClass name (a DNS subdomain)"
    [[ $CONFORMANCE_SMI != *[[:space:]]* ]] ||
        _param_error CONFORMANCE_SMI "is not one command (a path or a name, no blanks; empty for none)"
    # Namespaces are <prefix>-<file>-<n>-<random>: keep room for the rest.
    if ! is_dns_label "$CONFORMANCE_NAMESPACE_PREFIX" || ((${#CONFORMANCE_NAMESPACE_PREFIX} > 24)); then
        _param_error CONFORMANCE_NAMESPACE_PREFIX "is not a DNS label of at most 24 characters"
    fi
    [[ -n $CONFORMANCE_IMAGE && $CONFORMANCE_IMAGE != *[[:space:]]* ]] ||
        _param_error CONFORMANCE_IMAGE "is not a container image reference"
    is_dns_label "$CONFORMANCE_DRIVER_NAMESPACE" ||
        _param_error CONFORMANCE_DRIVER_NAMESPACE "is not a namespace name"
    [[ -n $CONFORMANCE_DRIVER_POD_SELECTOR && $CONFORMANCE_DRIVER_POD_SELECTOR != *[[:space:]]* ]] ||
        _param_error CONFORMANCE_DRIVER_POD_SELECTOR "is not a label selector (key=value[,key=value])"
    is_dns_label "$CONFORMANCE_PLUGIN_CONTAINER" ||
        _param_error CONFORMANCE_PLUGIN_CONTAINER "is not a container name"
    is_dns_label "$CONFORMANCE_FAKEHW_CONTAINER" ||
        _param_error CONFORMANCE_FAKEHW_CONTAINER "is not a container name"
    [[ $CONFORMANCE_FAKEHW_MOUNT == /* ]] ||
        _param_error CONFORMANCE_FAKEHW_MOUNT "is not an absolute path"
    [[ $CONFORMANCE_FAKEHW_BIN == /* ]] ||
        _param_error CONFORMANCE_FAKEHW_BIN "is not an absolute path"
    # A command prefix, split on spaces: its first word must run here.
    local exec_words
    read -ra exec_words <<<"$CONFORMANCE_FAKEHW_EXEC"
    if [[ -n $CONFORMANCE_FAKEHW_EXEC ]] && ! command -v "${exec_words[0]:-}" >/dev/null 2>&1; then
        _param_error CONFORMANCE_FAKEHW_EXEC "does not start with a command found here (${exec_words[0]:-empty})"
    fi
    for name in CONFORMANCE_TIMEOUT CONFORMANCE_PENDING_SECONDS CONFORMANCE_HEALTH_TIMEOUT \
        CONFORMANCE_RESTART_TIMEOUT CONFORMANCE_LOCK_TIMEOUT \
        CONFORMANCE_MIN_DEVICES CONFORMANCE_LOG_LINES; do
        [[ ${!name} =~ ^[1-9][0-9]{0,5}$ ]] ||
            _param_error "$name" "is not a whole number between 1 and 999999"
    done
    # sleep(1) takes fractions; 0.1 s at least, so a wait cannot spin.
    if ! [[ $CONFORMANCE_POLL_INTERVAL =~ ^[0-9]{1,6}(\.[0-9]{1,3})?$ ]] ||
        (($(seconds_to_ms "$CONFORMANCE_POLL_INTERVAL") < 100)); then
        _param_error CONFORMANCE_POLL_INTERVAL "is not a number of seconds between 0.1 and 999999 (such as 0.5 or 2)"
    fi
    # The scheduler's bindingTimeout: unknown unless given (>= 1 s, its minimum).
    [[ -z $CONFORMANCE_BINDING_TIMEOUT_SECONDS || $CONFORMANCE_BINDING_TIMEOUT_SECONDS =~ ^[1-9][0-9]{0,5}$ ]] ||
        _param_error CONFORMANCE_BINDING_TIMEOUT_SECONDS "is not a whole number of seconds between 1 and 999999 (the scheduler's bindingTimeout), or empty"
    for name in CONFORMANCE_FAKE_DRIVER CONFORMANCE_DEVICE_STATUS CONFORMANCE_DEVICE_METADATA; do
        [[ ${!name} =~ ^(true|false|auto)$ ]] || _param_error "$name" "must be true, false or auto"
    done
    for name in CONFORMANCE_KEEP_NAMESPACES CONFORMANCE_IMAGE_CHECK CONFORMANCE_API_PROXY; do
        [[ ${!name} =~ ^(true|false)$ ]] || _param_error "$name" "must be true or false"
    done
    # A pod's extended resource name: domain/name outside kubernetes.io.
    if [[ -n $CONFORMANCE_EXTENDED_RESOURCE_NAME ]]; then
        if [[ $CONFORMANCE_EXTENDED_RESOURCE_NAME != */* || $CONFORMANCE_EXTENDED_RESOURCE_NAME == *kubernetes.io/* ]] ||
            ! is_dns_subdomain "${CONFORMANCE_EXTENDED_RESOURCE_NAME%%/*}" ||
            ! [[ ${CONFORMANCE_EXTENDED_RESOURCE_NAME#*/} =~ ^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$ ]]; then
            _param_error CONFORMANCE_EXTENDED_RESOURCE_NAME "is not an extended resource name (domain/name outside kubernetes.io, e.g. nvidia.com/gpu)"
        fi
    fi
    [[ $CONFORMANCE_DRIVER_TAINT_EFFECT =~ ^(NoSchedule|NoExecute|None)$ ]] ||
        _param_error CONFORMANCE_DRIVER_TAINT_EFFECT "must be NoSchedule, NoExecute or None"
    for name in CONFORMANCE_SELECTOR_ATTRIBUTE CONFORMANCE_SELECTOR_CAPACITY CONFORMANCE_UNIQUE_ATTRIBUTE CONFORMANCE_NUMA_ATTRIBUTE; do
        is_qualified_name "${!name}" ||
            _param_error "$name" "is not an attribute name (identifier, or domain/identifier)"
    done
    local list
    for name in CONFORMANCE_EXPECTED_ATTRIBUTES CONFORMANCE_EXPECTED_CAPACITY; do
        [[ ${!name} == auto ]] && continue
        for list in ${!name}; do
            is_qualified_name "$list" ||
                _param_error "$name" "holds \"$list\", which is not an attribute name"
        done
    done
    local entry
    IFS=, read -ra list <<<"$CONFORMANCE_FEATURES"
    for entry in "${list[@]}"; do
        [[ $entry =~ ^[A-Za-z0-9]+=(true|false)$ ]] ||
            _param_error CONFORMANCE_FEATURES "holds \"$entry\"; write Gate=true or Gate=false, comma-separated"
    done
    unset -f _param_error
    return "$bad"
}

# Decides whether the driver under test is the fake driver (CONFORMANCE_FAKE_DRIVER
# auto), then fills the parameters whose default depends on it.  $1 is the JSON
# list of the driver's pods (may be empty): a pod with the fakehw container
# (a sidecar, so among the init containers) means the fake driver runs under
# another name (the gpu.nvidia.com overlay).
params_resolve_fake() {
    local pods_json=${1:-}
    if [[ $CONFORMANCE_FAKE_DRIVER == auto ]]; then
        CONFORMANCE_FAKE_DRIVER=false
        if [[ $CONFORMANCE_DRIVER == "$FAKE_DRIVER_NAME" ]]; then
            CONFORMANCE_FAKE_DRIVER=true
        elif [[ -n $pods_json ]] && jq -e --arg c "$CONFORMANCE_FAKEHW_CONTAINER" \
            '[.items[]?.spec | (.initContainers[]?, .containers[]?) | .name] | index($c) != null' <<<"$pods_json" >/dev/null 2>&1; then
            CONFORMANCE_FAKE_DRIVER=true
        fi
    fi
    local fake=$CONFORMANCE_FAKE_DRIVER
    [[ $CONFORMANCE_DEVICE_STATUS == auto ]] && CONFORMANCE_DEVICE_STATUS=$fake
    if [[ $CONFORMANCE_SMI == auto ]]; then
        CONFORMANCE_SMI=
        [[ $fake == true ]] && CONFORMANCE_SMI=$FAKEGPU_SMI # fakehw.bash
    fi
    [[ $CONFORMANCE_DEVICE_METADATA == auto ]] && CONFORMANCE_DEVICE_METADATA=$fake
    if [[ $CONFORMANCE_EXPECTED_ATTRIBUTES == auto ]]; then
        CONFORMANCE_EXPECTED_ATTRIBUTES=
        if [[ $fake == true && $CONFORMANCE_DRIVER == gpu.nvidia.com ]]; then
            # The nvidia personality publishes NVIDIA's set, and only what
            # every kind of its devices carries: a VFIO device has no
            # architecture, brand, driver versions or memory, a dynamic MIG
            # placement no uuid, none an index or a numaNode of its own.
            CONFORMANCE_EXPECTED_ATTRIBUTES="type productName"
            CONFORMANCE_EXPECTED_ATTRIBUTES+=" resource.kubernetes.io/pciBusID resource.kubernetes.io/pcieRoot"
            CONFORMANCE_EXPECTED_ATTRIBUTES+=" resource.kubernetes.io/numaNode"
        elif [[ $fake == true ]]; then
            CONFORMANCE_EXPECTED_ATTRIBUTES="type uuid productName architecture brand index driverVersion"
            CONFORMANCE_EXPECTED_ATTRIBUTES+=" cudaComputeCapability numaNode"
            CONFORMANCE_EXPECTED_ATTRIBUTES+=" resource.kubernetes.io/pciBusID resource.kubernetes.io/pcieRoot"
            CONFORMANCE_EXPECTED_ATTRIBUTES+=" resource.kubernetes.io/numaNode"
        fi
    fi
    if [[ $CONFORMANCE_EXPECTED_CAPACITY == auto ]]; then
        CONFORMANCE_EXPECTED_CAPACITY=
        [[ $fake == true && $CONFORMANCE_DRIVER != gpu.nvidia.com ]] && CONFORMANCE_EXPECTED_CAPACITY=memory
    fi
    export CONFORMANCE_FAKE_DRIVER CONFORMANCE_SMI CONFORMANCE_DEVICE_STATUS CONFORMANCE_DEVICE_METADATA \
        CONFORMANCE_EXPECTED_ATTRIBUTES CONFORMANCE_EXPECTED_CAPACITY
}

is_fake_driver() {
    [[ $CONFORMANCE_FAKE_DRIVER == true ]]
}
