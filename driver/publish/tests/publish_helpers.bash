# SPDX-License-Identifier: Apache-2.0
# Helpers for the publisher integration tests: a plain fakehw tree, the API
# server stand-in, publish-test-driver, and queries on what the stand-in holds.
# shellcheck shell=bash

DRIVER=gpu.fakehw.example.com
NODE=node-1
SLICES=/apis/resource.k8s.io/v1/resourceslices

# The test program lives next to the programs, in test-bin/.
publish_driver_bin() {
    echo "${FAKEHW_BIN:?}/../test-bin/publish-test-driver"
}

# make_device ROOT INDEX: one healthy H100 in the plain tree at ROOT.
make_device() {
    local root=$1 i=$2
    local d="$root/devices/gpu-$i"
    mkdir -p "$d"
    printf 'gpu-%s\n' "$i" >"$d/name"
    printf '%s\n' "$i" >"$d/index"
    printf '%s\n' "$i" >"$d/minor"
    printf 'GPU-%08x-1111-2222-3333-444444444444\n' "$i" >"$d/uuid"
    printf 'NVIDIA H100 80GB HBM3\n' >"$d/productName"
    printf 'Hopper\n' >"$d/architecture"
    printf 'NVIDIA\n' >"$d/brand"
    printf '85520809984\n' >"$d/memory"
    printf '9.0\n' >"$d/computeCapability"
    printf '580.95.05\n' >"$d/driverVersion"
    printf '13.0\n' >"$d/cudaDriverVersion"
    printf '%04x:%02x:00.0\n' $((i / 256)) $((i % 256)) >"$d/pciBusID"
    printf 'pci0000:17\n' >"$d/pcieRoot"
    printf '%s\n' $((i % 2)) >"$d/numaNode"
    printf '\n' >"$d/devicePath"
    printf 'healthy\n' >"$d/health"
    printf '\n' >"$d/healthReason"
    printf '1732252380\n' >"$d/healthSince"
}

# make_tree ROOT N: a plain fakehw tree with N devices, the same files as
# make_device writes (one awk process: 300 devices in a fraction of a second).
make_tree() {
    local root=$1 n=$2 i dirs=()
    for ((i = 0; i < n; i++)); do
        dirs+=("$root/devices/gpu-$i")
    done
    mkdir -p "$root/devices" "${dirs[@]}"
    printf '%s\n' "$NODE" >"$root/node"
    printf '1\n' >"$root/generation"
    awk -v root="$root" -v n="$n" '
        function put(i, attr, value,    f) {
            f = root "/devices/gpu-" i "/" attr
            print value > f
            close(f)
        }
        BEGIN {
            for (i = 0; i < n; i++) {
                put(i, "name", "gpu-" i); put(i, "index", i); put(i, "minor", i)
                put(i, "uuid", sprintf("GPU-%08x-1111-2222-3333-444444444444", i))
                put(i, "productName", "NVIDIA H100 80GB HBM3"); put(i, "architecture", "Hopper")
                put(i, "brand", "NVIDIA"); put(i, "memory", "85520809984")
                put(i, "computeCapability", "9.0"); put(i, "driverVersion", "580.95.05")
                put(i, "cudaDriverVersion", "13.0")
                put(i, "pciBusID", sprintf("%04x:%02x:00.0", int(i / 256), i % 256))
                put(i, "pcieRoot", "pci0000:17"); put(i, "numaNode", i % 2)
                put(i, "devicePath", ""); put(i, "health", "healthy")
                put(i, "healthReason", ""); put(i, "healthSince", "1732252380")
            }
        }'
}

# flip ROOT INDEX healthy|unhealthy [REASON]: the reason is written on the
# unhealthy side of the flip, so no reader sees a state that never was.
flip() {
    local d="$1/devices/gpu-$2"
    if [[ $3 == unhealthy ]]; then
        printf '%s\n' "${4:-}" >"$d/healthReason"
        printf 'unhealthy\n' >"$d/health"
    else
        printf 'healthy\n' >"$d/health"
        printf '\n' >"$d/healthReason"
    fi
}

# add_device ROOT INDEX: a new device, made aside and renamed into place so
# the driver never reads half of it.
add_device() {
    make_device "$1/.staging" "$2"
    mv "$1/.staging/devices/gpu-$2" "$1/devices/gpu-$2"
}

# start_standin [FLAGS...]: the API server stand-in with node NODE.
start_standin() {
    "$FAKEHW_BIN/apiserver-standin" --node "$NODE" --port-file "$BATS_TEST_TMPDIR/port" -v 1 \
        "$@" 2>"$BATS_TEST_TMPDIR/standin.log" &
    STANDIN_PID=$!
    local i
    for ((i = 0; i < 100; i++)); do
        [[ -s $BATS_TEST_TMPDIR/port ]] && break
        sleep 0.05
    done
    [[ -s $BATS_TEST_TMPDIR/port ]] || {
        cat "$BATS_TEST_TMPDIR/standin.log" >&2
        return 1
    }
    API="http://127.0.0.1:$(cat "$BATS_TEST_TMPDIR/port")"
}

# start_driver [FLAGS...]: publish-test-driver on the tree in $TREE.
start_driver() {
    "$(publish_driver_bin)" --server "$API" --node-name "$NODE" --fakehw-root "$TREE" \
        --status-file "$BATS_TEST_TMPDIR/status.json" --ready-file "$BATS_TEST_TMPDIR/ready" \
        -v 2 "$@" 2>>"$BATS_TEST_TMPDIR/driver.log" &
    DRIVER_PID=$!
}

stop_driver() {
    if [[ -n ${DRIVER_PID:-} ]]; then
        kill -TERM "$DRIVER_PID" 2>/dev/null || true
        wait "$DRIVER_PID" || DRIVER_RC=$?
        DRIVER_PID=
    fi
}

# For teardown: stops both and fails when the driver did not exit cleanly
# (a crash, or a sanitizer report at exit in the sanitizer build).
stop_all() {
    stop_driver
    if [[ -n ${STANDIN_PID:-} ]]; then
        kill -TERM "$STANDIN_PID" 2>/dev/null || true
        wait "$STANDIN_PID" 2>/dev/null || true
        STANDIN_PID=
    fi
    if grep -q 'Sanitizer\|runtime error:' "$BATS_TEST_TMPDIR/driver.log" 2>/dev/null ||
        [[ ${DRIVER_RC:-0} != 0 ]]; then
        echo "publish-test-driver exited with ${DRIVER_RC:-0}:" >&2
        tail -n 40 "$BATS_TEST_TMPDIR/driver.log" >&2
        return 1
    fi
}

# Shown by bats when a test fails.
dump_logs() {
    echo "--- driver log" >&2
    tail -n 60 "$BATS_TEST_TMPDIR/driver.log" >&2 2>/dev/null || true
    echo "--- status" >&2
    cat "$BATS_TEST_TMPDIR/status.json" >&2 2>/dev/null || true
    echo "--- stand-in log" >&2
    tail -n 20 "$BATS_TEST_TMPDIR/standin.log" >&2 2>/dev/null || true
    if [[ -n ${API:-} ]]; then
        echo "--- slices now" >&2
        api GET "$SLICES" | head -c 2000 >&2 || true
    fi
}

api() { # api METHOD PATH [BODY]
    if [[ $# -ge 3 ]]; then
        curl -sS -X "$1" -H 'Content-Type: application/json' --data "$3" "$API$2"
    else
        curl -sS -X "$1" "$API$2"
    fi
}

# The driver's slices of the node, as a JSON list.
slices() {
    api GET "$SLICES?fieldSelector=spec.nodeName%3D$NODE%2Cspec.driver%3D$DRIVER" | jq -c '.items'
}

# wait_for SECONDS COMMAND...: polls COMMAND every 50 ms until it succeeds.
wait_for() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        if ((SECONDS >= deadline)); then
            echo "timed out waiting for: $*" >&2
            return 1
        fi
        sleep 0.05
    done
}

# Pool checks: the pool is complete and consistent, with N devices in S slices.
pool_is() { # pool_is DEVICES SLICES
    local s
    s=$(slices) || return 1
    jq -e --argjson n "$1" --argjson k "$2" '
        (map(.spec.pool.generation) | max) as $g
        | map(select(.spec.pool.generation == $g)) as $cur
        | ($cur | length) == $k
          and ($cur | map(.spec.pool.resourceSliceCount == $k) | all)
          and ($cur | map(.spec.devices // [] | length) | add) == $n
          and length == $k' <<<"$s" >/dev/null
}

# The taints of device NAME, as compact JSON ([] when none).
taints_of() {
    slices | jq -c --arg d "$1" '[.[].spec.devices // [] | .[] | select(.name == $d) | .taints // []] | first // "absent"'
}

status_field() { # status_field JQ-PATH
    jq -r "$1" "$BATS_TEST_TMPDIR/status.json" 2>/dev/null
}

# For wait_for: the driver's status file says VALUE (or at least N) at PATH.
status_is() { [[ $(status_field "$1") == "$2" ]]; }
status_at_least() { (($(status_field "$1") >= $2)); }

# For wait_for: the taints of device NAME are exactly JSON / their first value is V.
taints_are() { [[ $(taints_of "$1") == "$2" ]]; }
taint_value_is() { [[ $(taints_of "$1" | jq -r '.[0].value') == "$2" ]]; }

# For wait_for: the driver has N slices on the node (any generation).
slice_count_is() { [[ $(slices | jq length) == "$1" ]]; }
