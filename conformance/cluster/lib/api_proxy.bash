# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Reads through `kubectl proxy`.  Every `kubectl get` costs some 0.2 s of a
# CPU (a Go program starting, its discovery cache, a TLS handshake), and the
# scenarios make thousands of them, polls included: on a small cluster that
# CPU is taken from the API server, the scheduler and the kubelets under
# test.  So the preflight starts one `kubectl proxy` on a unix socket
# (kubectl still holds the credentials and the context), and `kc` sends the
# plain reads, `get KIND [NAME] -o json|name` with a namespace and
# selectors, through it with curl: the same objects, the same error lines, a
# few milliseconds each.  Everything else (writes, exec, logs, other output
# formats, several kinds at once) stays with kubectl.  Without curl, or with
# CONFORMANCE_API_PROXY=false, every call is kubectl's.

# api_resource NAME: "<path prefix> <plural> <namespaced 0|1> <Kind> <apiVersion> <name prefix>"
# of a kind the suite reads; fails for any other (kubectl then answers).
api_resource() {
    case $1 in
    pod | pods | po) echo "/api/v1 pods 1 Pod v1 pod" ;;
    node | nodes | no) echo "/api/v1 nodes 0 Node v1 node" ;;
    namespace | namespaces | ns) echo "/api/v1 namespaces 0 Namespace v1 namespace" ;;
    event | events | ev) echo "/api/v1 events 1 Event v1 event" ;;
    daemonset | daemonsets | ds) echo "/apis/apps/v1 daemonsets 1 DaemonSet apps/v1 daemonset.apps" ;;
    resourceclaim | resourceclaims)
        echo "/apis/resource.k8s.io/v1 resourceclaims 1 ResourceClaim resource.k8s.io/v1 resourceclaim.resource.k8s.io"
        ;;
    resourceclaimtemplate | resourceclaimtemplates)
        echo "/apis/resource.k8s.io/v1 resourceclaimtemplates 1 ResourceClaimTemplate resource.k8s.io/v1 resourceclaimtemplate.resource.k8s.io"
        ;;
    resourceslice | resourceslices)
        echo "/apis/resource.k8s.io/v1 resourceslices 0 ResourceSlice resource.k8s.io/v1 resourceslice.resource.k8s.io"
        ;;
    deviceclass | deviceclasses)
        echo "/apis/resource.k8s.io/v1 deviceclasses 0 DeviceClass resource.k8s.io/v1 deviceclass.resource.k8s.io"
        ;;
    *) return 1 ;;
    esac
}

# api_read_plan ARGS...: when ARGS (kubectl's, after kc's own flags) are a
# read the proxy can answer, sets API_PATH, API_KIND, API_VERSION,
# API_NAME_PREFIX, API_NAME, API_OUTPUT, API_FIELDS and API_LABELS; fails
# otherwise.
api_read_plan() {
    [[ ${1:-} == get ]] || return 1
    shift
    local kind='' ns='' res
    API_NAME='' API_OUTPUT='' API_FIELDS='' API_LABELS=''
    while (($#)); do
        case $1 in
        -n | --namespace) ns=${2:-} && shift ;;
        --namespace=*) ns=${1#*=} ;;
        -o | --output) API_OUTPUT=${2:-} && shift ;;
        --output=*) API_OUTPUT=${1#*=} ;;
        --field-selector) API_FIELDS=${2:-} && shift ;;
        --field-selector=*) API_FIELDS=${1#*=} ;;
        -l | --selector) API_LABELS=${2:-} && shift ;;
        --selector=*) API_LABELS=${1#*=} ;;
        -*) return 1 ;;
        *)
            if [[ -z $kind ]]; then
                kind=$1
            elif [[ -z $API_NAME ]]; then
                API_NAME=$1
            else
                return 1
            fi
            ;;
        esac
        shift
    done
    [[ $API_OUTPUT == json || $API_OUTPUT == name ]] || return 1
    res=$(api_resource "$kind") || return 1
    local prefix plural namespaced
    read -r prefix plural namespaced API_KIND API_VERSION API_NAME_PREFIX <<<"$res"
    if ((namespaced)); then
        # kubectl's default namespace comes from the context: its call.
        [[ -n $ns ]] || return 1
        API_PATH=$prefix/namespaces/$ns/$plural
    else
        API_PATH=$prefix/$plural
    fi
    if [[ -n $API_NAME ]]; then
        [[ -z $API_FIELDS && -z $API_LABELS && $API_NAME != */* ]] || return 1
        API_PATH+=/$API_NAME
    fi
}

# api_get ARGS...: the read of api_read_plan through the proxy, printed as
# kubectl prints it; a refused read prints kubectl's "Error from server
# (Reason): message" on stderr and fails.
api_get() {
    local out code body query=()
    [[ -z $API_FIELDS ]] || query+=(--data-urlencode "fieldSelector=$API_FIELDS")
    [[ -z $API_LABELS ]] || query+=(--data-urlencode "labelSelector=$API_LABELS")
    out=$(curl -sS --max-time 30 --unix-socket "$CONFORMANCE_API_SOCKET" -G "${query[@]}" \
        -w '\n%{http_code}' "http://localhost$API_PATH") || {
        printf 'the API proxy at %s did not answer: %s\n' "$CONFORMANCE_API_SOCKET" "$out" >&2
        return 1
    }
    code=${out##*$'\n'}
    body=${out%$'\n'*}
    if [[ $code != 200 ]]; then
        jq -r --arg code "$code" '"Error from server (\(.reason // "HTTP " + $code)): \(.message // "no message")"' \
            <<<"$body" >&2 2>/dev/null || printf 'Error from server (HTTP %s): %s\n' "$code" "$body" >&2
        return 1
    fi
    if [[ -n $API_NAME ]]; then
        if [[ $API_OUTPUT == name ]]; then
            printf '%s/%s\n' "$API_NAME_PREFIX" "$API_NAME"
        else
            printf '%s\n' "$body"
        fi
    elif [[ $API_OUTPUT == name ]]; then
        jq -r --arg p "$API_NAME_PREFIX" '.items[] | "\($p)/\(.metadata.name)"' <<<"$body"
    else
        # A list as kubectl prints it: each item with its kind.
        jq --arg k "$API_KIND" --arg v "$API_VERSION" \
            '{apiVersion: "v1", kind: "List", metadata: {resourceVersion: ""}, items: [.items[] | {apiVersion: $v, kind: $k} + .]}' \
            <<<"$body"
    fi
}

# start_api_proxy DIR: starts `kubectl proxy` on DIR/api.sock, waits until
# it answers, and exports CONFORMANCE_API_SOCKET; API_READS says how the
# reads go, and why not through the proxy when it cannot start (they then
# stay with kubectl).  The proxy ends with the
# process that runs the suite (its pid is the second argument, default $$).
# shellcheck disable=SC2034 # API_READS is read by the preflight (lib/checks.bash)
start_api_proxy() {
    local dir=$1 owner=${2:-$$} sock args=() i watcher
    [[ $CONFORMANCE_API_PROXY == true ]] || {
        API_READS="reads through kubectl (CONFORMANCE_API_PROXY=false)"
        return 0
    }
    command -v curl >/dev/null 2>&1 || {
        API_READS="reads through kubectl (no curl on PATH for kubectl proxy)"
        return 0
    }
    sock=$dir/api.sock
    rm -f "$sock"
    [[ -z ${CONFORMANCE_KUBE_CONTEXT:-} ]] || args+=(--context "$CONFORMANCE_KUBE_CONTEXT")
    # The watcher stops the proxy when the suite's process is gone, so an
    # interrupted run leaves no proxy behind.
    (
        local proxy fd
        # bats waits for every pipe it handed out; the proxy holds none.
        for fd in /proc/"$BASHPID"/fd/*; do
            fd=${fd##*/}
            ((fd <= 2)) || eval "exec $fd>&-"
        done
        "${CONFORMANCE_KUBECTL:-kubectl}" proxy "${args[@]}" --unix-socket "$sock" >"$dir/api-proxy.log" 2>&1 &
        proxy=$!
        while kill -0 "$owner" 2>/dev/null && kill -0 "$proxy" 2>/dev/null; do sleep 1; done
        kill "$proxy" 2>/dev/null
        rm -f "$sock"
    ) </dev/null >/dev/null 2>&1 &
    watcher=$!
    for ((i = 0; i < 100; i++)); do
        if [[ -S $sock ]] && curl -sf --max-time 5 --unix-socket "$sock" http://localhost/version >/dev/null 2>&1; then
            export CONFORMANCE_API_SOCKET=$sock
            API_READS="reads through kubectl proxy on $sock"
            return 0
        fi
        kill -0 "$watcher" 2>/dev/null || break
        sleep 0.1
    done
    API_READS="reads through kubectl (kubectl proxy did not answer on its socket within 10s: $(tail -n 1 "$dir/api-proxy.log" 2>/dev/null))"
}
