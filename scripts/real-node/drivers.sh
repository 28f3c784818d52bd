#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# DRA drivers as host processes on the node of node.sh, for side-by-side
# measurements (docs/benchmarks.md, scripts/side-by-side/side_by_side.py).
#
#   drivers.sh fakehw [NAME]        fakehw (12 fake A100s) and this tree's
#                                   kubelet plugin as driver NAME (default
#                                   gpu.fakehw.example.com); a second NAME
#                                   runs a second plugin on the same tree
#   drivers.sh test-driver          the upstream Go DRA test driver
#                                   (test-driver.cdi.k8s.io, 12 devices),
#                                   built from k8s.io/kubernetes at the
#                                   node's version
#   drivers.sh stop                 stops every driver this script started
#
# Each driver gets a DeviceClass named like it. PLUGIN (default
# build/bin/fakehw-kubelet-plugin of this tree) selects the plugin build,
# PLUGIN_ENV adds environment ("LOG_VERBOSITY=3 GRPC_WORKERS=2"). The plugins
# use the node's admin kubeconfig (not the RBAC of manifests/base: these are
# measurements, not a deployment).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)

# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$HERE/lib.sh"
PROG=real-node-drivers # for log and die
: "${PLUGIN:=$REPO/build/bin/fakehw-kubelet-plugin}"
: "${FAKEHW:=$REPO/build/bin/fakehw}"
KUBECONFIG=$REAL_NODE_STATE/admin.kubeconfig
export KUBECONFIG
FAKEHW_MOUNT=$REAL_NODE_RUN/fakehw

kubectl() { "$REAL_NODE_STATE/bin/kubectl" "$@"; }

start() { start_in "$REAL_NODE_RUN/drivers" "$@"; } # start NAME COMMAND...

device_class() { # device_class NAME DRIVER
    kubectl apply -f - >/dev/null <<EOF
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $1}
spec:
  selectors:
  - cel: {expression: 'device.driver == "$2"'}
EOF
}

wait_slices() { # wait_slices DRIVER
    local i
    for ((i = 0; i < 150; i++)); do
        kubectl get resourceslices -o jsonpath='{range .items[*]}{.spec.driver}{"\n"}{end}' |
            grep -qx "$1" && return 0
        sleep 0.2
    done
    die "no ResourceSlice of $1 after 30s (logs in $LOGS)"
}

fakehw() {
    local name=${1:-gpu.fakehw.example.com}
    [[ -x $PLUGIN ]] || die "no $PLUGIN: make build first"
    if ! mountpoint -q "$FAKEHW_MOUNT"; then
        mkdir -p "$FAKEHW_MOUNT"
        cat >"$REAL_NODE_STATE/fakehw.yaml" <<EOF
nodes:
- name: $NODE_NAME
  devices:
  - {profile: A100-SXM4-80GB, count: 12}
EOF
        start fakehw "$FAKEHW" --config "$REAL_NODE_STATE/fakehw.yaml" --mount "$FAKEHW_MOUNT" \
            --node "$NODE_NAME" --foreground --clear-stale
        local i
        for ((i = 0; i < 50; i++)); do
            [[ -e $FAKEHW_MOUNT/node ]] && break
            sleep 0.1
        done
        [[ -e $FAKEHW_MOUNT/node ]] || die "fakehw did not mount $FAKEHW_MOUNT"
    fi
    # Each plugin instance needs its own ready file and metrics port.
    local n
    n=$(find "$REAL_NODE_RUN/drivers" -name 'plugin-*.pid' 2>/dev/null | wc -l)
    # shellcheck disable=SC2086 # PLUGIN_ENV is a list of NAME=VALUE words
    start "plugin-$name" env DRIVER_NAME="$name" NODE_NAME="$NODE_NAME" KUBECONFIG="$KUBECONFIG" \
        FAKEHW_ROOT="$FAKEHW_MOUNT" FAKEGPU_SMI="$REPO/build/bin/fakegpu-smi" \
        READY_FILE="$REAL_NODE_RUN/drivers/$name.ready" METRICS_ADDRESS="127.0.0.1:$((9400 + n))" \
        ${PLUGIN_ENV:-} "$PLUGIN"
    device_class "$name" "$name"
    wait_slices "$name"
    log "$name published"
}

test_driver() {
    local version bin work
    version=$(cat "$REAL_NODE_STATE/version" 2>/dev/null) || die "no node (node.sh up first)"
    bin=$(cache_dir)/dra-test-driver-$version
    if [[ ! -x $bin ]]; then
        # The kube-binaries.sh work module already pins the staging modules.
        work=$(cache_dir)/kube-module-$version
        parse_kube_version "$version"
        # shellcheck source=../node-image/versions.sh source-path=SCRIPTDIR
        source "$REPO/scripts/node-image/versions.sh"
        use_kube_toolchain "$version"
        [[ -f $work/go.mod ]] || die "no $work/go.mod: run node.sh up $version first"
        log "building the Go DRA test driver $version"
        (cd "$work" && GOFLAGS=-mod=mod go build -o "$bin" k8s.io/kubernetes/test/e2e/dra/test-driver) ||
            die "building k8s.io/kubernetes/test/e2e/dra/test-driver failed"
    fi
    mkdir -p /var/lib/kubelet/plugins/test-driver.cdi.k8s.io
    start test-driver "$bin" --kubeconfig "$KUBECONFIG" kubelet-plugin --node-name "$NODE_NAME" \
        --num-devices 12 --cdi-dir /var/run/cdi --datadir /var/lib/kubelet/plugins \
        --plugin-registration-path /var/lib/kubelet/plugins_registry
    device_class test-driver.cdi.k8s.io test-driver.cdi.k8s.io
    wait_slices test-driver.cdi.k8s.io
    log "test-driver.cdi.k8s.io published"
}

stop() {
    local f pid
    for f in "$REAL_NODE_RUN"/drivers/*.pid; do
        [[ -f $f ]] || continue
        pid=$(cat "$f")
        kill -TERM -- "-$pid" 2>/dev/null || true
        rm -f "$f"
    done
    sleep 1
    if mountpoint -q "$FAKEHW_MOUNT"; then umount -l "$FAKEHW_MOUNT" || true; fi
    log "drivers stopped"
}

case ${1:-} in
fakehw) fakehw "${2:-}" ;;
test-driver) test_driver ;;
stop) stop ;;
*) die "usage: drivers.sh fakehw [NAME] | test-driver | stop" ;;
esac
