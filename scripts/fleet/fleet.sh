#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A fleet of fake GPU nodes on this host (docs/fleet.md): the control plane
# of scripts/real-node without its kubelet, KWOK (sigs.k8s.io/kwok, built
# from its module) playing NODES nodes, and fakehw-fleet-publisher
# publishing every node's ResourceSlices from one fakehw config.
#
#   fleet.sh up NODES [CONFIG]   start it all; prints the time to publish
#   fleet.sh publish NODES CONFIG  the publisher again, with another config
#   fleet.sh down                delete every slice, stop every process
#   fleet.sh nodes NODES CONFIG  the Node objects as YAML (no cluster needed)
#
# Settings (environment): FLEET_K8S_VERSION (default v1.37.2), KWOK_VERSION
# (default v0.8.0), ETCD_VERSION (default v3.7.0), FAKEHW_BIN (the programs, default build/bin), CLIENT_QPS
# (the scheduler's and controller manager's client rate, default 5000),
# FLEET_TAINT_EFFECT (default NoSchedule), FLEET_HEARTBEAT (lease: a
# node lease renewed every quarter of FLEET_LEASE_SECONDS, default 40, and
# the node status every 10-20 minutes, as kwokctl runs KWOK and as a
# kubelet reports; status: the node status every 20-45 s besides the lease,
# which is what the first fleet figures ran with), REAL_NODE_STATE (default
# /var/lib/fakehw-fleet) and REAL_NODE_RUN (default /run/fakehw-fleet).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${REAL_NODE_STATE:=/var/lib/fakehw-fleet}"
: "${REAL_NODE_RUN:=/run/fakehw-fleet}"
: "${FLEET_K8S_VERSION:=v1.37.2}"
: "${KWOK_VERSION:=v0.8.0}"
: "${ETCD_VERSION:=v3.7.0}" # the node image's, built once for both
: "${FAKEHW_BIN:=$REPO/build/bin}"
: "${CLIENT_QPS:=5000}"
: "${FLEET_TAINT_EFFECT:=NoSchedule}"
: "${FLEET_HEARTBEAT:=lease}"
: "${FLEET_LEASE_SECONDS:=40}"
export REAL_NODE_STATE REAL_NODE_RUN CLIENT_QPS ETCD_VERSION
# shellcheck source=../real-node/lib.sh source-path=SCRIPTDIR
source "$REPO/scripts/real-node/lib.sh"
PROG=fleet # for log and die
KUBECONFIG_FILE=$REAL_NODE_STATE/admin.kubeconfig
DEFAULT_CONFIG=$REPO/bench/fleet/fleet-8gpu.yaml

kctl() { "$REAL_NODE_STATE/bin/kubectl" --kubeconfig "$KUBECONFIG_FILE" "$@"; }

# nodes NODES CONFIG: one Node per fleet node, labelled for KWOK, with the
# allocatable of a GPU node: its GPUs also as nvidia.com/gpu, the
# device-plugin way, for the extended-resource comparison.
nodes() {
    local n=$1 config=$2
    "$FAKEHW_BIN/fakehw-fleet-publisher" --config "$config" --nodes "$n" --check --list 2>/dev/null |
        while read -r name gpus; do
            cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: $name
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {type: kwok, kubernetes.io/hostname: $name, kubernetes.io/os: linux, fakehw.example.com/fleet: "true"}
status:
  allocatable: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "$gpus"}
  capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "$gpus"}
EOF
        done
}

# kwok_bin: builds kwok from its module once (go install, no image).
kwok_bin() {
    local dir
    dir=$(cache_dir)/kwok-$KWOK_VERSION
    if [[ ! -x $dir/kwok ]]; then
        log "building kwok $KWOK_VERSION from sigs.k8s.io/kwok (go install)"
        mkdir -p "$dir"
        GOBIN=$dir GOFLAGS=-buildvcs=false go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" >&2 ||
            die "building kwok failed"
    fi
    echo "$dir/kwok"
}

# kwok_stages: the Stage files KWOK's module ships (the ones kwokctl
# picks): nodes made Ready at once and kept so by the FLEET_HEARTBEAT
# stage, pods made Running once scheduled and deleted when asked.
kwok_stages() {
    local dir heartbeat
    dir=$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION/kustomize/stage
    [[ -d $dir ]] || die "no $dir (the kwok module; go install fetched it)"
    case $FLEET_HEARTBEAT in
    lease) heartbeat="heartbeat-with-lease/node-heartbeat-with-lease.yaml" ;;
    status) heartbeat="heartbeat/node-heartbeat.yaml" ;;
    *) die "FLEET_HEARTBEAT '$FLEET_HEARTBEAT' is not lease or status" ;;
    esac
    local files=("$dir"/node/fast/node-initialize.yaml "$dir/node/$heartbeat"
        "$dir"/pod/general/pod-{create,ready,complete,delete}.yaml)
    local IFS=,
    echo "${files[*]}"
}

wait_until() { # wait_until WHAT SECONDS COMMAND...
    local what=$1 secs=$2 i
    shift 2
    for ((i = 0; i < secs; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 1
    done
    die "$what: not after ${secs}s (logs in $LOGS)"
}

ready_nodes() { # ready_nodes N: true once N fleet nodes are Ready
    local ready
    ready=$(kctl get nodes -l type=kwok --no-headers 2>/dev/null | awk '$2 == "Ready"' | wc -l)
    [[ $ready -ge $1 ]]
}

up() {
    local n=${1:?usage: fleet.sh up NODES [CONFIG]} config=${2:-$DEFAULT_CONFIG} kwok
    [[ $n =~ ^[1-9][0-9]*$ ]] || die "NODES '$n' is not a positive number"
    [[ -x $FAKEHW_BIN/fakehw-fleet-publisher ]] || die "no $FAKEHW_BIN/fakehw-fleet-publisher (make all)"
    [[ $FLEET_LEASE_SECONDS =~ ^[1-9][0-9]*$ ]] || die "FLEET_LEASE_SECONDS '$FLEET_LEASE_SECONDS' is not a positive number"
    # The config first: a fleet that would break an API limit starts nothing.
    "$FAKEHW_BIN/fakehw-fleet-publisher" --config "$config" --nodes "$n" --check >&2
    kwok=$(kwok_bin)
    rm -rf "$REAL_NODE_STATE/etcd" # a fresh cluster every time
    "$REPO/scripts/real-node/node.sh" control-plane "$FLEET_K8S_VERSION"
    kctl apply -f "$REPO/manifests/base/deviceclasses.yaml" >/dev/null
    # KWOK first, so every Node is made Ready as it is created: thousands
    # of NotReady Nodes put the node lifecycle controller in full
    # disruption mode, and kube-controller-manager v1.37.2 dies with a nil
    # pointer when it leaves that mode while Nodes are still being added.
    local stages
    stages=$(kwok_stages)
    start_in "$REAL_NODE_RUN" kwok "$kwok" --kubeconfig "$KUBECONFIG_FILE" --config "$stages" \
        --node-lease-duration-seconds "$FLEET_LEASE_SECONDS" \
        --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake --cidr 10.0.0.0/16
    nodes "$n" "$config" | kctl apply -f - >/dev/null
    wait_until "$n nodes Ready" 600 ready_nodes "$n"
    log "$n KWOK nodes Ready"
    local p
    for p in kube-apiserver kube-controller-manager kube-scheduler kwok; do
        kill -0 "$(cat "$REAL_NODE_RUN/$p.pid")" 2>/dev/null || die "$p exited (log in $LOGS/$p.log)"
    done
    publish "$n" "$config"
    log "export KUBECONFIG=$KUBECONFIG_FILE"
}

# publish NODES CONFIG: (re)starts the publisher with CONFIG; a running one
# is stopped first, which deletes its slices.
publish() {
    local n=$1 config=$2 t0 ms
    "$FAKEHW_BIN/fakehw-fleet-publisher" --config "$config" --nodes "$n" --check >&2
    stop_pid fleet-publisher
    t0=$(date +%s%N)
    rm -f "$REAL_NODE_RUN/fleet.ready"
    start_in "$REAL_NODE_RUN" fleet-publisher "$FAKEHW_BIN/fakehw-fleet-publisher" \
        --config "$config" --nodes "$n" --kubeconfig "$KUBECONFIG_FILE" \
        --taint-effect "$FLEET_TAINT_EFFECT" --ready-file "$REAL_NODE_RUN/fleet.ready"
    wait_until "every pool published" 1800 test -f "$REAL_NODE_RUN/fleet.ready"
    ms=$((($(date +%s%N) - t0) / 1000000))
    log "published: $(tr '\n' ' ' <"$REAL_NODE_RUN/fleet.ready")(${ms} ms from the start)"
}

stop_pid() { # stop_pid NAME: SIGTERM, then waits up to 120 s
    local f=$REAL_NODE_RUN/$1.pid pid i
    [[ -f $f ]] || return 0
    pid=$(cat "$f")
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 600; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$f"
}

down() {
    # The publisher deletes its slices on SIGTERM; the API server must be up.
    stop_pid fleet-publisher
    if [[ -f $REAL_NODE_RUN/kube-apiserver.pid ]]; then
        local left
        left=$(kctl get resourceslices --no-headers 2>/dev/null | wc -l || true)
        log "ResourceSlices left after the publisher: ${left:-?}"
    fi
    stop_pid kwok
    "$REPO/scripts/real-node/node.sh" down
}

case ${1:-} in
up) up "${2:-}" "${3:-}" ;;
down) down ;;
publish)
    [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "usage: fleet.sh publish NODES CONFIG"
    publish "$2" "${3:?usage: fleet.sh publish NODES CONFIG}"
    ;;
nodes) nodes "${2:?usage: fleet.sh nodes NODES CONFIG}" "${3:?usage: fleet.sh nodes NODES CONFIG}" ;;
*) die "usage: fleet.sh up NODES [CONFIG] | publish NODES CONFIG | down | nodes NODES CONFIG" ;;
esac
