# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Checks that only the fake driver allows: what a container sees (fakegpu-smi,
# injected environment) and health flips through the fakehw daemon of a node.
# Tests using them carry the fake-only tag, or call them only when
# is_fake_driver says so.

FAKEGPU_SMI=/usr/bin/fakegpu-smi
UNHEALTHY_REASON="XID 79: GPU has fallen off the bus"

# GPU UUIDs that fakegpu-smi -L lists in a container, sorted, one per line.
container_gpu_uuids() {
    local out
    out=$(kc exec -n "$1" "$2" -c "$3" -- "$FAKEGPU_SMI" -L 2>&1) || {
        fail "fakegpu-smi -L in $1/$2 container $3 failed: $out"
        return 1
    }
    grep -oE 'UUID: [^)]+' <<<"$out" | sed 's/^UUID: //' | sort
}

# The value of environment variable $4 in container $3 of pod $1/$2; fails
# when it is not set.  Reads `env`, not `printenv`: some busybox builds
# (Debian's busybox-static) have no printenv applet.
container_env() {
    local out
    out=$(kc exec -n "$1" "$2" -c "$3" -- env) || return 1
    awk -v name="$4" 'index($0, name "=") == 1 { print substr($0, length(name) + 2); found = 1 }
        END { exit !found }' <<<"$out"
}

# The uuid attribute of device $2 in pool $1, from the driver's slices.
device_uuid() {
    driver_slices | slice_device "$1" "$2" | device_attribute uuid
}

# UUIDs of the devices allocated to claim $1/$2, sorted, one per line.
allocated_uuids() {
    local pool device rest results
    results=$(claim_results "$1" "$2") || return 1
    while IFS=$'\t' read -r pool device rest; do
        [[ -n $device ]] || continue
        device_uuid "$pool" "$device" || return 1
    done <<<"$results" | sort
}

# assert_container_sees_claim NS POD CONTAINER CLAIM: fakegpu-smi inside
# lists exactly the UUIDs of the devices allocated to CLAIM.
assert_container_sees_claim() {
    local seen expected
    seen=$(container_gpu_uuids "$1" "$2" "$3") || return 1
    expected=$(allocated_uuids "$1" "$4") || return 1
    [[ -n $expected && $seen == "$expected" ]] || {
        fail "container $3 of pod $1/$2 sees GPUs [$(paste -sd' ' <<<"$seen")], but claim $4 holds [$(paste -sd' ' <<<"$expected")]"
        return 1
    }
}

# The driver pod (Running, not being deleted) on node $1.
driver_pod_on_node() {
    local json
    json=$(kc get pods -n "$CONFORMANCE_DRIVER_NAMESPACE" -l "$CONFORMANCE_DRIVER_POD_SELECTOR" \
        --field-selector "spec.nodeName=$1" -o json) || return 1
    jq -er --arg n "$1" '[.items[] | select(.metadata.deletionTimestamp == null and .status.phase == "Running")
        | .metadata.name][0] // error("no running driver pod on node \($n)")' <<<"$json"
}

# fakehw_on_node NODE CMD...: runs CMD where NODE's fakehw tree is mounted.
# By default in the fakehw container of the node's driver pod; with
# CONFORMANCE_FAKEHW_EXEC (fakehw run outside any pod, e.g. on the host) as
# "<that command> CMD..." with CONFORMANCE_FAKEHW_NODE=NODE in its environment.
# The command is the function's last one on purpose: a bare `return` in
# teardown (an EXIT trap after a failure) would return the failure's status.
fakehw_on_node() {
    local node=$1 pod prefix
    shift
    if [[ -n $CONFORMANCE_FAKEHW_EXEC ]]; then
        read -ra prefix <<<"$CONFORMANCE_FAKEHW_EXEC"
        CONFORMANCE_FAKEHW_NODE=$node "${prefix[@]}" "$@"
    else
        pod=$(driver_pod_on_node "$node") || return 1
        kc exec -n "$CONFORMANCE_DRIVER_NAMESPACE" "$pod" -c "$CONFORMANCE_FAKEHW_CONTAINER" -- "$@"
    fi
}

# Where fakehw_on_node runs for NODE, for messages.
fakehw_where() {
    if [[ -n $CONFORMANCE_FAKEHW_EXEC ]]; then
        printf 'through CONFORMANCE_FAKEHW_EXEC (%s) for node %s\n' "$CONFORMANCE_FAKEHW_EXEC" "$1"
    else
        printf 'in the %s container of the driver pod on node %s\n' "$CONFORMANCE_FAKEHW_CONTAINER" "$1"
    fi
}

# fakehw_flip NODE DEVICE healthy|unhealthy [REASON]: flips a device in the
# fakehw daemon of NODE, as an operator would.
fakehw_flip() {
    local node=$1 device=$2 state=$3 reason=${4:-} out
    take_node_lock || return 1
    local args=(flip --mount "$CONFORMANCE_FAKEHW_MOUNT" "$device" "$state")
    [[ -n $reason ]] && args+=(--reason "$reason")
    out=$(fakehw_on_node "$node" "$CONFORMANCE_FAKEHW_BIN" "${args[@]}" 2>&1) || {
        fail "fakehw ${args[*]} $(fakehw_where "$node") failed: $out"
        return 1
    }
}

# fakehw_device NODE POOL DEVICE: the name fakehw's tree on NODE has for
# DEVICE, published in POOL: the device's own name, unless the driver
# publishes it under another (the nvidia personality's gpu-0-mig-3g40gb-9-4
# is the tree's gpu-0-mig-3g40gb-4).  Found in the tree's snapshot by the
# device's uuid, or for a partition published without one by its GPU's
# uuid (parentUUID), its profile and the first memory slice it consumes.
fakehw_device() {
    local dev snapshot uuid parent='' profile='' start='' name
    dev=$(driver_slices | slice_device "$2" "$3") || return 1
    snapshot=$(fakehw_on_node "$1" cat "$CONFORMANCE_FAKEHW_MOUNT/snapshot" 2>&1) || {
        fail "reading $CONFORMANCE_FAKEHW_MOUNT/snapshot $(fakehw_where "$1") failed: $snapshot"
        return 1
    }
    uuid=$(device_attribute uuid <<<"$dev" 2>/dev/null) || uuid=
    if [[ -z $uuid ]]; then
        parent=$(device_attribute parentUUID <<<"$dev" 2>/dev/null) || parent=
        profile=$(device_attribute profile <<<"$dev" 2>/dev/null) || profile=
        start=$(jq -r '[.consumesCounters[]?.counters // {} | keys[] | select(test("^memory-slice-[0-9]+$"))
            | ltrimstr("memory-slice-") | tonumber] | min // empty' <<<"$dev")
    fi
    # One "name uuid parent profile start" line per device of the snapshot,
    # then the parent's uuid for each, and the match.
    name=$(awk -v want="$3" -v u="$uuid" -v pu="$parent" -v pr="$profile" -v st="$start" '
        function flush() { if (d != "") { n++; nm[n] = d; id[n] = uid; par[n] = p; prof[n] = mp; pl[n] = place; byname[d] = uid } }
        $1 == "device" { flush(); d = $2; uid = p = mp = place = ""; next }
        $1 == "uuid" { uid = $2 } $1 == "parent" { p = $2 } $1 == "migProfile" { mp = $2 }
        $1 == "migPlacement" { split($2, a, ":"); place = a[1] }
        END { flush()
            for (i = 1; i <= n; i++) if (nm[i] == want && (u == "" || id[i] == u)) { print nm[i]; exit }
            for (i = 1; i <= n; i++) if (u != "" && id[i] == u) { print nm[i]; exit }
            for (i = 1; i <= n; i++) if (u == "" && pu != "" && byname[par[i]] == pu && prof[i] == pr && pl[i] == st) { print nm[i]; exit } }' <<<"$snapshot")
    [[ -n $name ]] || {
        fail "no device of fakehw's tree on node $1 is $2/$3 (uuid ${uuid:-none}, parentUUID ${parent:-none}, profile ${profile:-none}, first memory slice ${start:-none})"
        return 1
    }
    printf '%s\n' "$name"
}

# The health fakehw reports for DEVICE on NODE: healthy or unhealthy.
fakehw_health() {
    fakehw_on_node "$1" cat "$CONFORMANCE_FAKEHW_MOUNT/devices/$2/health"
}

# fakehw_restore_healthy NODE DEVICE [PUBLISHED]: flips fakehw's DEVICE on
# NODE back to healthy unless it already is, and waits until the driver
# publishes it healthy again (as PUBLISHED, its name in the slices, when
# that differs from the tree's: the nvidia personality's MIG devices), so
# the next test finds the node whole (teardown, also after a failure).
fakehw_restore_healthy() {
    local health pool published=${3:-$2}
    health=$(fakehw_health "$1" "$2") || return 1
    [[ $health == healthy ]] && return 0
    fakehw_flip "$1" "$2" healthy || return 1
    pool=$(driver_slices | node_pool "$1") || return 1
    wait_for "$pool/$published to be published healthy again" "$CONFORMANCE_HEALTH_TIMEOUT" \
        device_back_to_healthy "$pool" "$published" >/dev/null
}

# flip_unhealthy NODE DEVICE [PUBLISHED]: flips DEVICE on NODE unhealthy and
# makes sure teardown flips it back (fakehw_restore_healthy).
flip_unhealthy() {
    defer fakehw_restore_healthy "$1" "$2" "${3:-$2}"
    fakehw_flip "$1" "$2" unhealthy "$UNHEALTHY_REASON"
}

# fakehw_xid NODE DEVICE CODE|--clear: DEVICE on NODE reports XID CODE, or
# none.  A reported XID is cleared at teardown.
fakehw_xid() {
    local out
    take_node_lock || return 1
    [[ $3 == --clear ]] || defer fakehw_xid "$1" "$2" --clear
    out=$(fakehw_on_node "$1" "$CONFORMANCE_FAKEHW_BIN" xid --mount "$CONFORMANCE_FAKEHW_MOUNT" "$2" "$3" 2>&1) || {
        fail "fakehw xid $2 $3 $(fakehw_where "$1") failed: $out"
        return 1
    }
}

# xid_taint KIND CODE: the "key value effect" of the taint the fake driver
# gives a device with XID CODE, KIND fatal or ignored; empty for none.  The
# nvidia personality taints as NVIDIA's driver does (gpu.nvidia.com/xid,
# effect None for an ignored XID), the default one as for any unhealthy
# device, and not at all for an ignored XID.
xid_taint() {
    if [[ $CONFORMANCE_DRIVER == gpu.nvidia.com ]]; then
        if [[ $1 == fatal ]]; then
            echo "gpu.nvidia.com/xid $2 $CONFORMANCE_DRIVER_TAINT_EFFECT"
        else
            echo "gpu.nvidia.com/xid $2 None"
        fi
    elif [[ $1 == fatal ]]; then
        echo "$(unhealthy_taint_key) XID-$2 $CONFORMANCE_DRIVER_TAINT_EFFECT"
    fi
}

# taints_pass POOL DEVICE JQ_ARGS...: whether the device's taints (a JSON
# array) pass jq -e JQ_ARGS; if not, prints them.
taints_pass() {
    local taints
    taints=$(driver_slices | device_taints "$1" "$2") || return 1
    jq -e "${@:3}" <<<"$taints" >/dev/null || {
        printf 'device %s/%s taints: %s\n' "$1" "$2" "$taints"
        return 1
    }
}

# device_has_taint POOL DEVICE KEY VALUE EFFECT
device_has_taint() {
    # shellcheck disable=SC2016 # a jq filter
    taints_pass "$1" "$2" --arg k "$3" --arg v "$4" --arg e "$5" 'any(.[]; .key == $k and .value == $v and .effect == $e)'
}

# device_has_no_taint POOL DEVICE KEY
device_has_no_taint() {
    # shellcheck disable=SC2016 # a jq filter
    taints_pass "$1" "$2" --arg k "$3" 'all(.[]; .key != $k)'
}

# The taint the fake driver puts on an unhealthy device.
unhealthy_taint_key() {
    printf '%s/unhealthy\n' "$CONFORMANCE_DRIVER"
}

# Succeeds when device $2 of pool $1 carries the unhealthy taint with effect
# $3 (default NoSchedule).
device_has_unhealthy_taint() {
    # shellcheck disable=SC2016 # a jq filter
    taints_pass "$1" "$2" --arg k "$(unhealthy_taint_key)" --arg e "${3:-NoSchedule}" 'any(.[]; .key == $k and .effect == $e)'
}

device_has_no_unhealthy_taint() {
    device_has_no_taint "$1" "$2" "$(unhealthy_taint_key)"
}

# Succeeds when the driver has reacted to an unhealthy device: it is tainted,
# or it left the slice (the driver's policy when taints are not served).
device_marked_unhealthy() {
    local slices
    slices=$(driver_slices) || return 1
    if ! slice_device "$1" "$2" <<<"$slices" >/dev/null 2>&1; then
        return 0
    fi
    device_has_unhealthy_taint "$1" "$2"
}

# Succeeds when device $2 is published in pool $1 without the unhealthy taint.
device_back_to_healthy() {
    local slices
    slices=$(driver_slices) || return 1
    slice_device "$1" "$2" <<<"$slices" >/dev/null 2>&1 || {
        printf 'device %s/%s is not published\n' "$1" "$2"
        return 1
    }
    device_has_no_unhealthy_taint "$1" "$2"
}

# pod_device_health NS POD CONTAINER Healthy|Unhealthy: the container's
# allocatedResourcesStatus entry for pod claim "gpu" reports that health.
pod_device_health() {
    local json
    json=$(pod_json "$1" "$2") || return 1
    jq -e --arg c "$3" --arg h "$4" '
        any(.status.containerStatuses[]? | select(.name == $c) | .allocatedResourcesStatus[]?
            | select(.name | startswith("claim:gpu")) | .resources[]?; .health == $h)' <<<"$json" >/dev/null || {
        printf 'allocatedResourcesStatus: %s\n' \
            "$(jq -c --arg c "$3" '[.status.containerStatuses[]? | select(.name == $c) | .allocatedResourcesStatus]' <<<"$json")"
        return 1
    }
}
