# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# The node environment of the node conformance suite (conformance/node/tests/
# plugin_*.bats): a kubelet plugin under test, run for real with no cluster.
#
#   fakehw (FUSE tree + device nodes) ──> plugin <── kubelet-standin (gRPC)
#                                           │
#                                           └──> apiserver-standin (HTTP)
#
# Every process runs in the test's own temp dir, is started with a bounded
# wait, logs into $NODE_LOGS and is stopped by its PID in node_teardown (never
# by name: other suites run at the same time).  node_teardown always unmounts
# the fakehw tree, fails the test when a process crashed or a sanitizer
# reported (ASan/UBSan builds), and prints the logs when the test failed.
#
# Parameters (environment; docs/node-conformance.md has the details):
#   FAKEHW_BIN         build/bin of this repository (stand-ins, fakehw) (required)
#   NODE_PLUGIN_CMD    command line of the plugin under test, with {placeholders}
#                      (see plugin_command); empty: fakehw-kubelet-plugin
#   NODE_DRIVER_NAME   its driver name (default gpu.fakehw.example.com)
#   NODE_FAKE_DRIVER   true when the plugin is fakehw-kubelet-plugin (default:
#                      true exactly when NODE_PLUGIN_CMD is empty)
#   NODE_SKIP_TAGS     tags whose tests skip (default: none for the fake driver,
#                      "fake-driver fakehw fakegpu-smi" for another one)
#   NODE_WAIT_SCALE    multiplies every wait bound (slow machines; default 1)
#   NODE_STOP_SECONDS  how long the plugin may take to stop on SIGTERM (default 2)
#   NODE_SLICE_SYNC_SECONDS  how long the plugin may take to repair its pool
#                      after someone else changed its slices (default 5 for
#                      the fake driver, 40 for another one: the ResourceSlice
#                      controller of k8s.io/dynamic-resource-allocation waits
#                      its SyncDelay, 30 s by default, after such an event;
#                      before v0.37 it can also wait out its 60 s mutation
#                      cache TTL for a slice deleted within a minute of its
#                      creation: give such a plugin 70)
#   NODE_KUBELET_HEALTH_SERVICES  health services the stand-in kubelet knows,
#                      newest first (default: 1.37's v1, v1alpha1)
#   NODE_HEALTH_SERVICE  forces the health service watch-health opens
#
# Test names end in "[tag,...]" for the tests that need more than the kubelet
# plugin contract; node_setup skips them per NODE_SKIP_TAGS with the reason.
#
# The variables set here are read by the .bats files, which also pass the
# optional arguments of the start functions.
# shellcheck disable=SC2016,SC2034,SC2119,SC2120 # SC2016: jq filters

NODE_BIN=${FAKEHW_BIN:?FAKEHW_BIN must name the build/bin directory with fakehw, the stand-ins and the plugin}

DRIVER=${NODE_DRIVER_NAME:-gpu.fakehw.example.com}
NODE=node-a
NODE_NS=default
if [[ -z ${NODE_FAKE_DRIVER-} ]]; then
    if [[ -z ${NODE_PLUGIN_CMD-} ]]; then NODE_FAKE_DRIVER=true; else NODE_FAKE_DRIVER=false; fi
fi
if [[ -z ${NODE_SKIP_TAGS+set} ]]; then
    if [[ $NODE_FAKE_DRIVER == true ]]; then NODE_SKIP_TAGS=''; else NODE_SKIP_TAGS='fake-driver fakehw fakegpu-smi'; fi
fi
NODE_WAIT_SCALE=${NODE_WAIT_SCALE:-1}
NODE_STOP_SECONDS=${NODE_STOP_SECONDS:-2}
if [[ -z ${NODE_SLICE_SYNC_SECONDS-} ]]; then
    if [[ $NODE_FAKE_DRIVER == true ]]; then NODE_SLICE_SYNC_SECONDS=5; else NODE_SLICE_SYNC_SECONDS=40; fi
fi

# The plugin the suite runs when NODE_PLUGIN_CMD is empty.
NODE_FAKE_PLUGIN_CMD='{bin}/fakehw-kubelet-plugin --driver-name {driver} --node-name {node}
  --kubeconfig {kubeconfig} --kubelet-registrar-directory-path {registrar_dir}
  --kubelet-plugins-directory-path {plugins_dir} --cdi-root {cdi_root}
  --fakehw-root {fakehw_root} --fakegpu-smi {fakegpu_smi} --ready-file {ready_file} -v 2'

RESOURCE_API=/apis/resource.k8s.io/v1
SLICES_PATH=$RESOURCE_API/resourceslices
SLICE_SELECTOR="fieldSelector=spec.nodeName%3D$NODE%2Cspec.driver%3D$DRIVER"

# Why a tag makes a test skip (node_setup).
declare -gA NODE_TAG_REASONS=(
    [fake-driver]="checks behaviour of fakehw-kubelet-plugin itself (its flags, files, checkpoint or log), not the kubelet plugin contract"
    [fakehw]="drives the fake hardware (health flips, config reloads, fakehw restarts), which only fakehw-kubelet-plugin reads"
    [fakegpu-smi]="runs fakegpu-smi in a container, which only fakehw-kubelet-plugin's CDI specs mount"
    [runtime]="runs a container with podman"
)

# --- lifecycle -------------------------------------------------------------

# node_setup [ROOT]: for bats setup(): skips the test when its "[tags]" are in
# NODE_SKIP_TAGS, then lays out the node's directories under ROOT (default
# $BATS_TEST_TMPDIR).  Starts nothing.
node_setup() {
    local tags tag
    if [[ ${BATS_TEST_DESCRIPTION-} =~ \[([a-z0-9,-]+)\]$ ]]; then
        IFS=, read -ra tags <<<"${BASH_REMATCH[1]}"
        for tag in "${tags[@]}"; do
            if [[ " $NODE_SKIP_TAGS " == *" $tag "* ]]; then
                skip "tag $tag is in NODE_SKIP_TAGS: the test ${NODE_TAG_REASONS[$tag]:-has this tag}"
            fi
        done
    fi
    node_layout "${1:-$BATS_TEST_TMPDIR}"
}

# node_layout ROOT: the paths of one node under ROOT.
node_layout() {
    NODE_ROOT=$1
    NODE_LOGS=${BATS_TEST_TMPDIR:-$NODE_ROOT}/logs
    MNT=$NODE_ROOT/fakehw
    DEV_DIR=$NODE_ROOT/dev
    FAKEHW_CONFIG=$NODE_ROOT/fakehw.yaml
    REG_DIR=$NODE_ROOT/kubelet/plugins_registry
    PLUGINS_DIR=$NODE_ROOT/kubelet/plugins
    PLUGIN_DIR=$PLUGINS_DIR/$DRIVER
    DRA_SOCK=$PLUGIN_DIR/dra.sock
    REG_SOCK=$REG_DIR/$DRIVER-reg.sock
    CDI_ROOT=$NODE_ROOT/cdi
    READY_FILE=$NODE_ROOT/ready
    KUBECONFIG_FILE=$NODE_ROOT/kubeconfig
    CHECKPOINT=$PLUGIN_DIR/checkpoint.json
    FAKEHW_LOG=$NODE_LOGS/fakehw.log
    API_LOG=$NODE_LOGS/apiserver-standin.log
    PLUGIN_LOG=$NODE_LOGS/plugin.log
    HEALTH_OUT=$NODE_LOGS/watch-health.out
    FAKEHW_PID='' API_PID='' PLUGIN_PID='' HEALTH_PID='' API=''
    PLUGIN_STATUS='' POOL=$NODE
    NODE_BG_PIDS=()
    declare -gA CLAIM_UIDS=()
    mkdir -p "$NODE_LOGS" "$MNT" "$DEV_DIR" "$REG_DIR" "$PLUGINS_DIR" "$CDI_ROOT"
}

# node_up [FAKEHW_COUNT]: the usual node: fakehw with FAKEHW_COUNT (default 4)
# A100s, the API server stand-in, the plugin, registered, its pool published.
node_up() {
    fakehw_config "${1:-4}"
    node_start ""
}

# node_start DEVICES [PLUGIN_FLAGS...]: the node of the FAKEHW_CONFIG already
# written: fakehw, the API server stand-in, the plugin (with PLUGIN_FLAGS),
# registered, its pool published with DEVICES devices ("" for any number).
node_start() {
    local devices=$1
    shift
    fakehw_start
    api_start
    plugin_start "$@"
    kubelet_register
    wait_pool_published "$devices"
}

# node_teardown: for bats teardown().  Stops everything by PID, unmounts the
# tree, and fails when the plugin died on its own, did not exit cleanly on
# SIGTERM (fake driver), or any log holds a sanitizer report.  Prints the
# logs when the test (or this) failed.
node_teardown() {
    local rc=0 pid problems=()
    for pid in "${NODE_BG_PIDS[@]}"; do
        _ne_reap "$pid" TERM 2 || true
    done
    NODE_BG_PIDS=()
    if [[ -n ${PLUGIN_PID-} ]]; then
        if ! _ne_alive "$PLUGIN_PID"; then
            local died=0
            wait "$PLUGIN_PID" 2>/dev/null || died=$?
            problems+=("the plugin (pid $PLUGIN_PID) exited on its own during the test with status $died")
        else
            plugin_stop TERM 10 || problems+=("the plugin did not stop within 10s of SIGTERM; killed it")
            if [[ $NODE_FAKE_DRIVER == true && $PLUGIN_STATUS != 0 ]]; then
                problems+=("the plugin exited with status $PLUGIN_STATUS on SIGTERM (want 0)")
            fi
        fi
    fi
    [[ -z ${API_PID-} ]] || api_stop
    fakehw_cleanup || problems+=("cannot unmount $MNT")
    if declare -F runtime_cleanup >/dev/null; then
        runtime_cleanup || problems+=("runtime_cleanup failed")
    fi
    local log
    for log in "$NODE_LOGS"/*.log; do
        if [[ -f $log ]] && grep -qE 'ERROR: [A-Za-z]+Sanitizer|runtime error:' "$log"; then
            problems+=("sanitizer report in $log")
        fi
    done
    if ((${#problems[@]})); then
        rc=1
        printf 'node_teardown: %s\n' "${problems[@]}" >&2
    fi
    if ((rc)) || [[ ${BATS_TEST_COMPLETED-} != 1 ]]; then
        node_dump_logs >&2
    fi
    return "$rc"
}

# node_dump_logs: the end of every log of the test, for diagnosis.
node_dump_logs() {
    local f
    for f in "$NODE_LOGS"/*; do
        [[ -f $f ]] || continue
        echo "----- ${f#"$NODE_LOGS"/} (last 120 lines)"
        tail -n 120 "$f"
    done
    if [[ -n ${API-} ]] && _ne_alive "${API_PID:-0}"; then
        echo "----- ResourceSlices of $DRIVER on $NODE"
        curl -sS --max-time 2 "$API$SLICES_PATH?$SLICE_SELECTOR" | jq -c '.items[]? | {name: .metadata.name, pool: .spec.pool, devices: [.spec.devices[]? | .name + (if .taints then "(tainted)" else "" end)]}'
    fi
}

# --- waiting and processes ---------------------------------------------------

# _ne_usec SECONDS: decimal seconds (e.g. 1.5) as microseconds, scaled by
# NODE_WAIT_SCALE.
_ne_usec() {
    local s=$1 int frac
    int=${s%%.*}
    frac=${s#"$int"}
    frac=${frac#.}000000
    echo $(((10#${int:-0} * 1000000 + 10#${frac:0:6}) * NODE_WAIT_SCALE))
}

_ne_now() {
    echo "${EPOCHREALTIME/./}"
}

# wait_for SECONDS WHAT CMD...: runs CMD every 50 ms until it succeeds, at
# most SECONDS (× NODE_WAIT_SCALE).  On timeout says what it waited for and
# what CMD printed the last time, and fails.
wait_for() {
    local limit what out deadline
    limit=$(_ne_usec "$1")
    what=$2
    shift 2
    deadline=$(($(_ne_now) + limit))
    while :; do
        if out=$("$@" 2>&1); then
            return 0
        fi
        if (($(_ne_now) > deadline)); then
            printf 'timed out after %ss waiting for %s\n' "$(awk -v u="$limit" 'BEGIN{print u/1e6}')" "$what" >&2
            [[ -z $out ]] || printf 'last output of "%s":\n%s\n' "$*" "$out" >&2
            return 1
        fi
        sleep 0.05
    done
}

# _ne_alive PID: the process runs (a zombie does not count).
_ne_alive() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [[ ${stat:0:1} != Z ]]
}

# _ne_spawn LOG CMD...: CMD in the background, stdin from /dev/null, output
# appended to LOG, bats' fd 3 closed (else bats waits for it); sets _NE_PID.
_ne_spawn() {
    local log=$1
    shift
    "$@" </dev/null >>"$log" 2>&1 3>&- &
    _NE_PID=$!
}

# _ne_reap PID SIGNAL SECONDS: signals a child, waits up to SECONDS for it to
# end, then kills it; sets _NE_STATUS to its exit status; fails when KILL was
# needed.  (Not in a $(...) subshell: only the parent can wait for a child.)
_ne_reap() {
    local pid=$1 sig=$2 limit forced=0
    limit=$(_ne_usec "$3")
    kill "-$sig" "$pid" 2>/dev/null || true
    local deadline=$(($(_ne_now) + limit))
    while _ne_alive "$pid" && (($(_ne_now) < deadline)); do
        sleep 0.02
    done
    if _ne_alive "$pid"; then
        kill -KILL "$pid" 2>/dev/null || true
        forced=1
    fi
    _NE_STATUS=0
    wait "$pid" 2>/dev/null || _NE_STATUS=$?
    return "$forced"
}

# --- fakehw ------------------------------------------------------------------

# fakehw_config COUNT [PROFILE]: the fakehw config of the node: COUNT GPUs of
# PROFILE (default A100-SXM4-80GB).
fakehw_config() {
    printf 'nodes:\n- name: %s\n  devices:\n  - {count: %s, profile: %s}\n' \
        "$NODE" "$1" "${2:-A100-SXM4-80GB}" >"$FAKEHW_CONFIG"
}

_ne_mounted() {
    awk -v m="$1" '$2 == m { found = 1 } END { exit !found }' /proc/self/mounts
}

# fakehw_start [FLAGS...]: fakehw on $MNT with $FAKEHW_CONFIG and device nodes
# in $DEV_DIR; waits until the tree is served.
fakehw_start() {
    _ne_spawn "$FAKEHW_LOG" "$NODE_BIN/fakehw" --config "$FAKEHW_CONFIG" --mount "$MNT" \
        --node "$NODE" --dev-dir "$DEV_DIR" --foreground -v 2 "$@"
    FAKEHW_PID=$_NE_PID
    if ! wait_for 10 "fakehw to serve $MNT" _ne_tree_served; then
        echo "fakehw (pid $FAKEHW_PID) did not come up; its log:" >&2
        tail -n 30 "$FAKEHW_LOG" >&2
        return 1
    fi
}

_ne_tree_served() {
    _ne_alive "$FAKEHW_PID" || {
        echo "fakehw exited"
        return 2
    }
    _ne_mounted "$MNT" && [[ -s $MNT/generation ]]
}

# fakehw_stop: SIGTERM; fakehw unmounts and removes its device nodes.
fakehw_stop() {
    [[ -n $FAKEHW_PID ]] || return 0
    _ne_reap "$FAKEHW_PID" TERM 5 || true
    FAKEHW_PID=''
    [[ $_NE_STATUS == 0 ]] || {
        echo "fakehw exited with status $_NE_STATUS" >&2
        return 1
    }
}

# fakehw_kill9: kills fakehw so that its mount stays behind, stale (ENOTCONN).
fakehw_kill9() {
    _ne_reap "$FAKEHW_PID" KILL 5 || true
    FAKEHW_PID=''
}

# fakehw_reload: SIGHUP (after editing $FAKEHW_CONFIG).
fakehw_reload() {
    kill -HUP "$FAKEHW_PID"
}

# fakehw_flip DEVICE STATE [REASON]
fakehw_flip() {
    local args=(--mount "$MNT" "$1" "$2")
    [[ -z ${3-} ]] || args+=(--reason "$3")
    "$NODE_BIN/fakehw" flip "${args[@]}"
}

# fakehw_cleanup: no daemon and no mount (live or stale) left at $MNT.
fakehw_cleanup() {
    [[ -n ${MNT-} ]] || return 0
    if [[ -n ${FAKEHW_PID-} ]]; then
        fakehw_stop || true
    fi
    if _ne_mounted "$MNT"; then
        fusermount3 -u -z "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null || true
    fi
    ! _ne_mounted "$MNT"
}

# device_attr DEVICE FILE: one attribute from the fakehw tree.
device_attr() {
    cat "$MNT/devices/$1/$2"
}

# --- API server stand-in ---------------------------------------------------------

# api_start [FLAGS...]: apiserver-standin with the Node $NODE; sets $API and
# writes the kubeconfig.
api_start() {
    local port_file=$NODE_ROOT/apiserver.port
    rm -f "$port_file"
    _ne_spawn "$API_LOG" "$NODE_BIN/apiserver-standin" --node "$NODE" --port-file "$port_file" -v 1 "$@"
    API_PID=$_NE_PID
    if ! wait_for 10 "apiserver-standin to listen" _ne_api_listening "$port_file"; then
        tail -n 30 "$API_LOG" >&2
        return 1
    fi
    API=http://127.0.0.1:$(<"$port_file")
    kubeconfig_write "$KUBECONFIG_FILE" "$API"
}

_ne_api_listening() {
    _ne_alive "$API_PID" || {
        echo "apiserver-standin exited"
        return 2
    }
    [[ -s $1 ]]
}

api_stop() {
    _ne_reap "$API_PID" TERM 5 || true
    API_PID=''
    [[ $_NE_STATUS == 0 ]] || echo "apiserver-standin exited with status $_NE_STATUS" >&2
}

# kubeconfig_write FILE SERVER: a kubeconfig for SERVER with an empty user.
kubeconfig_write() {
    cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: standin
  cluster:
    server: $2
users:
- name: node
  user: {}
contexts:
- name: standin
  context:
    cluster: standin
    user: node
current-context: standin
EOF
}

# api METHOD PATH [BODY]: one API request; prints the body and fails unless
# the answer is 2xx (then the status and body go to stderr).  PATCH bodies
# are merge patches.
api() {
    local method=$1 path=$2 ctype=application/json out code
    [[ $method == PATCH ]] && ctype=application/merge-patch+json
    local args=(-sS --max-time 10 -X "$method" -w '\n%{http_code}' "$API$path")
    (($# < 3)) || args+=(-H "Content-Type: $ctype" --data-binary "$3")
    out=$(curl "${args[@]}") || {
        echo "api: $method $path: curl failed" >&2
        return 1
    }
    code=${out##*$'\n'}
    out=${out%$'\n'*}
    printf '%s\n' "$out"
    if [[ $code != 2* ]]; then
        echo "api: $method $path: HTTP $code: $out" >&2
        return 1
    fi
}

# standin_fault JSON: inject a fault (docs/apiserver-standin.md).
standin_fault() {
    api POST /standin/faults "$1" >/dev/null
}

standin_clear_faults() {
    api DELETE /standin/faults >/dev/null
}

# standin_requests: the request log, one compact JSON object per line.
standin_requests() {
    api GET /standin/requests | jq -c '.requests[]'
}

standin_clear_requests() {
    api DELETE /standin/requests >/dev/null
}

# --- ResourceSlices ------------------------------------------------------------

# slices [JQ]: the driver's ResourceSlices of this node as one JSON array,
# sorted by name, or what the jq filter JQ makes of that array.
slices() {
    local body
    body=$(api GET "$SLICES_PATH?$SLICE_SELECTOR") || return 1
    jq -c "${@:2}" ".items | sort_by(.metadata.name) | ${1:-.}" <<<"$body"
}

# pool_settled [DEVICES]: the pool is published and consistent: every slice
# of the driver on this node has one pool name and generation, there are
# resourceSliceCount of them, and (when given) they hold DEVICES devices.
pool_settled() {
    local want=${1-}
    slices '
        length as $n |
        $n > 0 and
        ([.[].spec.pool.name] | unique | length) == 1 and
        ([.[].spec.pool.generation] | unique | length) == 1 and
        all(.[]; .spec.pool.resourceSliceCount == $n) and
        ($want == "" or ([.[].spec.devices[]?] | length) == ($want | tonumber))' -e --arg want "$want" >/dev/null
}

# wait_pool_published [DEVICES] [SECONDS]: waits for pool_settled; sets $POOL.
wait_pool_published() {
    wait_for "${2:-10}" "the pool of $DRIVER on $NODE to be published${1:+ with $1 devices}" pool_settled "${1-}" || {
        slices | jq -c '.[] | {name: .metadata.name, pool: .spec.pool, devices: (.spec.devices | length)}' >&2
        return 1
    }
    POOL=$(slices '.[0].spec.pool.name' -r)
}

# pool_devices [N]: the names of the published devices (slice order, then
# device order), the first N of them.
pool_devices() {
    slices '.[].spec.devices[]?.name' -r | head -n "${1:-1000000}"
}

# --- claims --------------------------------------------------------------------

# Claims are built with printf, not jq: names here are DNS labels, and each
# jq costs tens of milliseconds on a busy machine.

# claim_create NAME [REQUEST=COUNT...]: a ResourceClaim in $NODE_NS with
# ExactCount requests (default gpu=1) of the device class named like the
# driver; sets CLAIM_UID and CLAIM_UIDS[NAME].
claim_create() {
    local name=$1 req requests='' out
    shift
    (($#)) || set -- gpu=1
    for req; do
        requests+=${requests:+,}$(printf '{"name":"%s","exactly":{"deviceClassName":"%s","count":%d}}' \
            "${req%%=*}" "$DRIVER" "${req#*=}")
    done
    claim_post "$name" "$(printf '{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"%s"},"spec":{"devices":{"requests":[%s]}}}' \
        "$name" "$requests")"
}

# claim_post NAME JSON: creates the claim JSON (named NAME) as it is; sets
# CLAIM_UID and CLAIM_UIDS[NAME].
claim_post() {
    local out
    out=$(api POST "$RESOURCE_API/namespaces/$NODE_NS/resourceclaims" "$2") || return 1
    [[ $out =~ \"uid\":\"([0-9a-f-]{36})\" ]] || {
        echo "claim_post: no uid in the answer: $out" >&2
        return 1
    }
    CLAIM_UID=${BASH_REMATCH[1]}
    CLAIM_UIDS[$1]=$CLAIM_UID
}

# claim_allocate_results NAME RESULTS_JSON [CONFIG_JSON]: writes
# status.allocation of claim NAME with these results (and opaque config).
claim_allocate_results() {
    local config=''
    [[ -z ${3-} ]] || config=",\"config\":$3"
    api PATCH "$RESOURCE_API/namespaces/$NODE_NS/resourceclaims/$1/status" \
        "{\"status\":{\"allocation\":{\"devices\":{\"results\":$2$config}}}}" >/dev/null
}

# results REQUEST=DEV[,DEV...]...: allocation results in this driver's pool.
results() {
    local arg dev out='' devs
    for arg; do
        IFS=, read -ra devs <<<"${arg#*=}"
        for dev in "${devs[@]}"; do
            out+=${out:+,}$(printf '{"request":"%s","driver":"%s","pool":"%s","device":"%s"}' \
                "${arg%%=*}" "$DRIVER" "$POOL" "$dev")
        done
    done
    echo "[$out]"
}

# claim_new NAME DEVICE...: a claim with one request "gpu" allocated to
# DEVICE... of this node's pool; sets CLAIM_UID.
claim_new() {
    local name=$1
    shift
    local IFS=,
    claim_create "$name" "gpu=$#" && claim_allocate_results "$name" "$(results "gpu=$*")"
}

# claim_get NAME: the claim as JSON.
claim_get() {
    api GET "$RESOURCE_API/namespaces/$NODE_NS/resourceclaims/$1"
}

claim_delete() {
    api DELETE "$RESOURCE_API/namespaces/$NODE_NS/resourceclaims/$1" >/dev/null
}

# ref NAME: the kubelet's reference NS/NAME/UID of a claim made here.
ref() {
    echo "$NODE_NS/$1/${CLAIM_UIDS[$1]:?no claim $1 was created in this test}"
}

# claim_condition NAME DEVICE: "status reason" of the Ready condition of
# DEVICE in the claim's status.devices (empty when there is none).
claim_condition() {
    claim_get "$1" | jq -r --arg d "$2" --arg driver "$DRIVER" \
        '.status.devices[]? | select(.driver == $driver and .device == $d) | .conditions[]? | select(.type == "Ready") | "\(.status) \(.reason)"'
}

# output_is WHAT TEXT CMD...: whether CMD prints TEXT; if not, says what
# WHAT printed instead (wait_for shows the last of these).
output_is() {
    local what=$1 want=$2 now
    shift 2
    now=$("$@")
    [[ $now == "$want" ]] || {
        echo "$what: \"$now\""
        return 1
    }
}

# condition_is NAME DEVICE TEXT: the claim_condition of DEVICE prints TEXT.
condition_is() {
    output_is "Ready condition of $2 in claim $1" "$3" claim_condition "$1" "$2"
}

# taints DEVICE: "key value effect" of each taint of the published DEVICE.
taints() {
    slices '.[].spec.devices[]? | select(.name == $d) | .taints[]? | "\(.key) \(.value) \(.effect)"' -r --arg d "$1"
}

# taints_are DEVICE TEXT: the device's taints print as TEXT ("" for none).
taints_are() {
    output_is "taints of $1" "$2" taints "$1"
}

# --- the plugin ----------------------------------------------------------------

# plugin_command: NODE_PLUGIN_CMD (or the fake driver's command) with its
# placeholders filled in, ready for eval:
#   {bin} {driver} {node} {kubeconfig} {api_server} {registrar_dir}
#   {plugins_dir} {plugin_dir} {cdi_root} {fakehw_root} {fakegpu_smi}
#   {ready_file} {dev_dir}
plugin_command() {
    local cmd=${NODE_PLUGIN_CMD:-$NODE_FAKE_PLUGIN_CMD} key
    cmd=${cmd//$'\n'/ }
    local -A values=(
        [bin]=$NODE_BIN [driver]=$DRIVER [node]=$NODE [kubeconfig]=$KUBECONFIG_FILE
        [api_server]=$API [registrar_dir]=$REG_DIR [plugins_dir]=$PLUGINS_DIR
        [plugin_dir]=$PLUGIN_DIR [cdi_root]=$CDI_ROOT [fakehw_root]=$MNT
        [fakegpu_smi]=$NODE_BIN/fakegpu-smi [ready_file]=$READY_FILE [dev_dir]=$DEV_DIR
    )
    for key in "${!values[@]}"; do
        cmd=${cmd//"{$key}"/$(printf '%q' "${values[$key]}")}
    done
    if [[ $cmd =~ \{[a-z_]+\} ]]; then
        echo "NODE_PLUGIN_CMD: unknown placeholder ${BASH_REMATCH[0]} (known:$(printf ' {%s}' "${!values[@]}"))" >&2
        return 2
    fi
    echo "$cmd"
}

# plugin_start [FLAGS...]: starts the plugin (FLAGS appended to its command
# line) with its output in $PLUGIN_LOG.  Does not wait: see kubelet_register.
plugin_start() {
    local cmd extra=''
    cmd=$(plugin_command) || return 1
    (($# == 0)) || extra=$(printf ' %q' "$@")
    echo "=== $(date -u +%T.%N) starting: $cmd$extra" >>"$PLUGIN_LOG"
    # The subshell execs the plugin, so $! is the plugin's pid.
    # shellcheck disable=SC2093
    (eval "exec $cmd$extra") </dev/null >>"$PLUGIN_LOG" 2>&1 3>&- &
    PLUGIN_PID=$!
    PLUGIN_STATUS=''
}

# plugin_stop [SIGNAL] [SECONDS]: signals the plugin and waits for it (then
# kills it); sets PLUGIN_STATUS and PLUGIN_STOP_SECONDS (how long it took).
# Fails when it had to be killed.
plugin_stop() {
    local sig=${1:-TERM} start rc=0
    [[ -n $PLUGIN_PID ]] || return 0
    start=$(_ne_now)
    _ne_reap "$PLUGIN_PID" "$sig" "${2:-10}" || rc=1
    PLUGIN_STATUS=$_NE_STATUS
    PLUGIN_STOP_SECONDS=$(awk -v u="$(($(_ne_now) - start))" 'BEGIN{printf "%.3f", u/1e6}')
    echo "=== $(date -u +%T.%N) stopped with $sig: status $PLUGIN_STATUS after ${PLUGIN_STOP_SECONDS}s" >>"$PLUGIN_LOG"
    PLUGIN_PID=''
    return "$rc"
}

# plugin_kill9: SIGKILL, as an OOM kill or a node crash would.
plugin_kill9() {
    plugin_stop KILL 5
}

plugin_alive() {
    [[ -n $PLUGIN_PID ]] && _ne_alive "$PLUGIN_PID"
}

# --- the kubelet stand-in --------------------------------------------------------

ks() {
    "$NODE_BIN/kubelet-standin" "$@"
}

# kubelet_register: registers the plugin like the kubelet (waits up to 10 s
# for its registration socket); sets REGISTRATION (the key=value output) and
# DRA_SOCK (the endpoint it announced).
# NODE_KUBELET_HEALTH_SERVICES: the health services the stand-in kubelet
# knows, newest first (default the 1.37 kubelet's v1,v1alpha1; set
# v1alpha1.DRAResourceHealth to behave as 1.34-1.36).
kubelet_register() {
    local status=0
    REGISTRATION=$(ks register --registry-dir "$REG_DIR" --driver "$DRIVER" --timeout "$((10 * NODE_WAIT_SCALE))" \
        --kubelet-health-services "${NODE_KUBELET_HEALTH_SERVICES:-v1.DRAResourceHealth,v1alpha1.DRAResourceHealth}" 2>&1) || status=$?
    if ((status != 0)) || [[ $REGISTRATION != *registered=true* ]]; then
        printf 'kubelet-standin register failed (status %s):\n%s\n' "$status" "$REGISTRATION" >&2
        plugin_alive || echo "the plugin is not running" >&2
        return 1
    fi
    DRA_SOCK=$(sed -n 's/^endpoint=//p' <<<"$REGISTRATION")
}

# registration_value KEY: a value from the last registration.
registration_value() {
    sed -n "s/^$1=//p" <<<"$REGISTRATION"
}

# prepare_claims REF... / unprepare_claims REF...: one kubelet call.
prepare_claims() {
    ks prepare --endpoint "$DRA_SOCK" "$@"
}

unprepare_claims() {
    ks unprepare --endpoint "$DRA_SOCK" "$@"
}

# prepare_json REF...: the answer as compact JSON (fails when the call does).
prepare_json() {
    local out status=0
    out=$(ks prepare --json --endpoint "$DRA_SOCK" "$@") || status=$?
    jq -c . <<<"$out" 2>/dev/null || echo "$out"
    return "$status"
}

# cdi_ids JSON: the CDI ids of a prepare answer, one per line.
cdi_ids() {
    jq -r '.claims[].devices[]?.cdi[]?' <<<"$1"
}

# health_watch_start: kubelet-standin watch-health in the background, its
# output in $HEALTH_OUT, on the health service the registration picked
# (health_version; NODE_HEALTH_SERVICE forces one).
health_watch_start() {
    local service=${NODE_HEALTH_SERVICE:-$(registration_value health_version)}
    [[ -n $service ]] || {
        echo "the registration picked no health service (the plugin advertises none the kubelet knows)" >&2
        return 1
    }
    : >"$HEALTH_OUT"
    _ne_spawn "$HEALTH_OUT" "$NODE_BIN/kubelet-standin" watch-health --endpoint "$DRA_SOCK" --timeout 120 --service "$service"
    HEALTH_PID=$_NE_PID
    NODE_BG_PIDS+=("$HEALTH_PID")
    wait_for 5 "the first health message" grep -q '^--- update=1 ' "$HEALTH_OUT"
}

# health_latest: the device lines of the newest complete health message.
health_latest() {
    awk '/^--- update=/ { last = cur; cur = ""; next } { cur = cur $0 "\n" } END { printf "%s", last }' "$HEALTH_OUT"
}

# health_latest_has REGEX...: every REGEX matches a line of the newest message.
health_latest_has() {
    local latest re
    latest=$(health_latest)
    for re; do
        grep -qE -- "$re" <<<"$latest" || {
            printf 'no line matches %s in the newest health message:\n%s\n' "$re" "$latest"
            return 1
        }
    done
}

# --- files -----------------------------------------------------------------------

# file_stamps DIR: "path inode mtime(ns) size" of every file under DIR.
file_stamps() {
    find "$1" -type f -printf '%P %i %T@ %s\n' | sort
}

# files_mentioning DIR TEXT: files under DIR whose name or content has TEXT.
files_mentioning() {
    {
        find "$1" -name "*$2*" -print
        grep -rlF -- "$2" "$1" 2>/dev/null
    } | sort -u
}

# cdi_known_ids: "kind=name" of every device of every CDI spec (JSON or YAML)
# in $CDI_ROOT.
cdi_known_ids() {
    local f
    for f in "$CDI_ROOT"/*; do
        case $f in
        *.json) jq -r '.kind as $k | .devices[]? | "\($k)=\(.name)"' "$f" ;;
        *.yaml | *.yml)
            /usr/bin/python3 -c 'import sys, yaml
spec = yaml.safe_load(open(sys.argv[1]))
for d in spec.get("devices") or []:
    print(spec["kind"] + "=" + d["name"])' "$f"
            ;;
        esac
    done
}

# cdi_ids_resolve JSON: every CDI id of a prepare answer names a device of a
# spec in $CDI_ROOT (what the runtime will look up).
cdi_ids_resolve() {
    local known id missing=0
    known=$(cdi_known_ids)
    while read -r id; do
        [[ -n $id ]] || continue
        if ! grep -qxF -- "$id" <<<"$known"; then
            echo "CDI id $id is in no spec of $CDI_ROOT" >&2
            missing=1
        fi
    done < <(cdi_ids "$1")
    if ((missing)); then
        printf 'the specs there define:\n%s\n' "$known" >&2
        return 1
    fi
}

# --- raw gRPC, for requests kubelet-standin's NS/NAME/UID syntax cannot say --

# _pb_hex STRING: the bytes of STRING in hex.
_pb_hex() {
    printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'
}

# _pb_len FIELD HEX: a length-delimited field (wire type 2) holding HEX.
_pb_len() {
    local n=$((${#2} / 2)) varint=''
    while ((n >= 128)); do
        varint+=$(printf '%02x' $(((n & 127) | 128)))
        n=$((n >> 7))
    done
    varint+=$(printf '%02x' "$n")
    printf '%02x%s%s' $((($1 << 3) | 2)) "$varint" "$2"
}

# dra_call_raw METHOD NS UID NAME: one claim {namespace, uid, name} sent with
# kubelet-standin call to the v1 METHOD (NodePrepareResources or
# NodeUnprepareResources).  Prints call's status= and message= lines, then
# answer= with the decoded answer as JSON: {UID: {"error": TEXT, "devices": N}}.
# Fails like kubelet-standin call (3: the RPC failed).
dra_call_raw() {
    local claim out status=0 hex
    claim=$(_pb_len 1 "$(_pb_hex "$2")")$(_pb_len 2 "$(_pb_hex "$3")")$(_pb_len 3 "$(_pb_hex "$4")")
    out=$(ks call --endpoint "$DRA_SOCK" --method "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/$1" \
        --hex "$(_pb_len 1 "$claim")") || status=$?
    grep -v '^response=' <<<"$out"
    hex=$(sed -n 's/^response=//p' <<<"$out")
    printf 'answer=%s\n' "$(/usr/bin/python3 -c "$_PB_DECODE_ANSWER" "$1" "$hex")"
    return "$status"
}

# Decodes Node(Un)PrepareResourcesResponse: map<string uid, entry> claims = 1;
# a prepare entry has repeated Device devices = 1, string error = 2; an
# unprepare entry has string error = 1.
_PB_DECODE_ANSWER='
import json, sys
def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            val, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            val, i = b[i:i + n], i + n
        else:
            raise SystemExit("unexpected wire type %d" % wt)
        yield num, val
def varint(b, i):
    shift = val = 0
    while True:
        c = b[i]; i += 1
        val |= (c & 127) << shift; shift += 7
        if c < 128:
            return val, i
prepare = sys.argv[1] == "NodePrepareResources"
out = {}
for num, entry in fields(bytes.fromhex(sys.argv[2])):
    uid, res = "", {"error": "", "devices": 0}
    for k, v in fields(entry):
        if k == 1:
            uid = v.decode()
        elif k == 2:
            for f, x in fields(v):
                if prepare and f == 1:
                    res["devices"] += 1
                elif f == (2 if prepare else 1):
                    res["error"] = x.decode()
    out[uid] = res
print(json.dumps(out, sort_keys=True))
'
