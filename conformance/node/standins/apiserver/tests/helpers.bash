# SPDX-License-Identifier: Apache-2.0
# Shared helpers of the apiserver-standin suites: start/stop the stand-in,
# make requests with curl, build ResourceSlice bodies with jq.
# shellcheck shell=bash

bats_load_library bats-support
bats_load_library bats-assert

STANDIN="${FAKEHW_BIN:?FAKEHW_BIN must name the build/bin directory}/apiserver-standin"
# shellcheck disable=SC2034 # the paths are used by the .bats files
{
    SLICES=/apis/resource.k8s.io/v1/resourceslices
    CLAIMS=/apis/resource.k8s.io/v1/namespaces/default/resourceclaims
    CLASSES=/apis/resource.k8s.io/v1/deviceclasses
}

# start_standin [flags...]: runs it in the background; sets URL and STANDIN_PID.
start_standin() {
    PORT_FILE="$BATS_TEST_TMPDIR/port"
    rm -f "$PORT_FILE"
    "$STANDIN" --port-file "$PORT_FILE" "$@" >"$BATS_TEST_TMPDIR/stdout" 2>"$BATS_TEST_TMPDIR/stderr" &
    STANDIN_PID=$!
    local _
    for _ in $(seq 1 1000); do
        [[ -s $PORT_FILE ]] && break
        if ! kill -0 "$STANDIN_PID" 2>/dev/null; then
            cat "$BATS_TEST_TMPDIR/stderr"
            STANDIN_PID=
            return 1
        fi
        sleep 0.01
    done
    [[ -s $PORT_FILE ]] || { echo "apiserver-standin wrote no port file"; return 1; }
    URL="http://127.0.0.1:$(cat "$PORT_FILE")"
}

# stop_standin: SIGTERM; fails (showing its log) unless it exits 0, so
# sanitizer reports and unclean shutdowns fail the test.
stop_standin() {
    [[ -n ${STANDIN_PID:-} ]] || return 0
    local rc=0
    kill -TERM "$STANDIN_PID" 2>/dev/null || true
    wait "$STANDIN_PID" || rc=$?
    STANDIN_PID=
    if ((rc != 0)); then
        echo "apiserver-standin exited with $rc:"
        cat "$BATS_TEST_TMPDIR/stderr"
        return 1
    fi
}

# api METHOD PATH [BODY [CONTENT_TYPE]]: sets STATUS (HTTP code) and BODY.
api() {
    local method=$1 path=$2 body=${3:-} ctype=${4:-application/json}
    local args=(-s -o "$BATS_TEST_TMPDIR/body" -w '%{http_code}' -X "$method")
    if [[ -n $body ]]; then
        args+=(-H "Content-Type: $ctype" --data-binary "$body")
    fi
    STATUS=$(curl "${args[@]}" "$URL$path")
    BODY=$(cat "$BATS_TEST_TMPDIR/body")
}

# expect STATUS [JQ_FILTER...]: the last answer had this status and every
# filter is true of its body.
expect() {
    if [[ $STATUS != "$1" ]]; then
        echo "expected HTTP $1, got $STATUS: $BODY"
        return 1
    fi
    shift
    local f
    for f in "$@"; do
        if ! jq -e "$f" >/dev/null <<<"$BODY"; then
            echo "not true of the body: $f"
            echo "$BODY"
            return 1
        fi
    done
}

# slice NAME NODE DRIVER [DEVICES_JSON]: a ResourceSlice body; NAME ending in
# "-" becomes generateName.
slice() {
    local name=$1 node=$2 driver=$3
    local devices=${4:-'[{"name":"gpu-0"}]'}
    jq -cn --arg name "$name" --arg node "$node" --arg driver "$driver" --argjson devices "$devices" '
        {apiVersion: "resource.k8s.io/v1", kind: "ResourceSlice",
         metadata: (if ($name | endswith("-")) then {generateName: $name} else {name: $name} end),
         spec: {driver: $driver, nodeName: $node,
                pool: {name: $node, generation: 1, resourceSliceCount: 1},
                devices: $devices}}'
}

# devices N [JQ_EXPR_PER_DEVICE]: N devices named gpu-0.., each merged with the expression.
devices() {
    jq -cn --argjson n "$1" "[range(\$n) | {name: \"gpu-\\(.)\"} + (${2:-{\}})]"
}
