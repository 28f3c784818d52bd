# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Shared helpers of the deployment scripts (kind-up, kind-down, deploy,
# image, wait-slices).  Sourced, never run.  Every script says what it is
# doing on stderr, prefixed with its name, and fails with one clear line.

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROG=$(basename "$0" .sh)

# Defaults shared by every script; the Makefile passes its own values.
: "${IMAGE:=localhost/fakehw-dra:dev}"
: "${NAMESPACE:=fakehw-dra}"
: "${DAEMONSET:=fakehw-dra-kubelet-plugin}"
: "${WAIT_TIMEOUT:=300}"
export IMAGE NAMESPACE DAEMONSET WAIT_TIMEOUT

log() {
    printf '%s: %s\n' "$PROG" "$*" >&2
}

die() {
    printf '%s: error: %s\n' "$PROG" "$*" >&2
    exit 1
}

# How to get each tool the scripts may need, for the "not found" message.
install_hint() {
    case $1 in
    docker) echo "Docker Engine or Docker Desktop: https://docs.docker.com/engine/install/" ;;
    podman) echo "podman: https://podman.io/docs/installation" ;;
    kind) echo "kind v0.33.0 (v0.32.0 will do for 1.34 to 1.36): make deps-cluster, or go install sigs.k8s.io/kind@v0.33.0" ;;
    kubectl) echo "kubectl 1.34 or newer: make deps-cluster builds one, or https://kubernetes.io/docs/tasks/tools/#kubectl" ;;
    *) echo "$1" ;;
    esac
}

# require_tools TOOL...: fails naming every missing tool and where to get it.
require_tools() {
    local t missing=()
    for t in "$@"; do
        command -v "$t" >/dev/null 2>&1 || missing+=("$t")
    done
    ((${#missing[@]} == 0)) && return 0
    {
        printf '%s: error: missing required tools: %s\n' "$PROG" "${missing[*]}"
        for t in "${missing[@]}"; do
            printf '  %-8s install %s\n' "$t" "$(install_hint "$t")"
        done
    } >&2
    exit 1
}

# kubectl against $KUBE_CONTEXT when set, else the current context.
kc() {
    local args=()
    [[ -n ${KUBE_CONTEXT:-} ]] && args+=(--context "$KUBE_CONTEXT")
    kubectl "${args[@]}" "$@"
}

# The kustomize directory of $OVERLAY: manifests/base when empty, else
# manifests/overlays/$OVERLAY.  Fails listing the overlays that exist.
manifests_dir() {
    local overlay=${OVERLAY:-}
    if [[ -z $overlay || $overlay == base ]]; then
        echo "$REPO_ROOT/manifests/base"
        return 0
    fi
    if [[ $overlay == */* || ! -f $REPO_ROOT/manifests/overlays/$overlay/kustomization.yaml ]]; then
        local d have=()
        for d in "$REPO_ROOT"/manifests/overlays/*/kustomization.yaml; do
            [[ -f $d ]] && have+=("$(basename "$(dirname "$d")")")
        done
        die "OVERLAY=$overlay: no such overlay in manifests/overlays (have: ${have[*]:-none}; empty means manifests/base)"
    fi
    echo "$REPO_ROOT/manifests/overlays/$overlay"
}

# wait_until DESCRIPTION TIMEOUT_SECONDS COMMAND...: runs COMMAND every 2 s
# until it succeeds.  COMMAND's last output line is shown whenever it changes,
# so a long wait shows progress; on timeout the function returns 1.
wait_until() {
    local what=$1 timeout=$2 out last=
    shift 2
    local deadline=$((SECONDS + timeout))
    log "waiting up to ${timeout}s for $what"
    while :; do
        if out=$("$@" 2>&1); then
            return 0
        fi
        out=${out##*$'\n'}
        if [[ -n $out && $out != "$last" ]]; then
            log "  $out"
            last=$out
        fi
        if ((SECONDS >= deadline)); then
            log "timed out after ${timeout}s waiting for $what"
            return 1
        fi
        sleep 2
    done
}
