#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A Docker Engine of fakehw-dra's own for hosts where the system one cannot
# start kind's privileged node containers (no CAP_SYS_RESOURCE in the
# bounding set, Docker 20.10; see docs/install.md "Restricted hosts").
# It runs runc through runc-wrapper, keeps its data apart from the system
# engine's, and lives in a network namespace of its own, so its bridges and
# NAT rules never touch the host's forwarding rules. kind's API server port
# is published inside that namespace: run kind, kubectl and the suite there
# with `docker.sh exec`.
#
#   docker.sh start            start the engine (idempotent)
#   docker.sh stop             stop it (containers stop with it)
#   docker.sh status           exit 0 if it answers
#   docker.sh env              print the DOCKER_HOST line to eval
#   docker.sh exec CMD [ARG]   run CMD in the namespace with DOCKER_HOST set
#   docker.sh load IMAGE...    copy images from the system engine into it
#
#   RESTRICTED_DOCKER_NETNS  namespace name (default fakehw-dra)
#   RESTRICTED_DOCKER_ROOT   state (default /run/fakehw-dra-docker)
#   RESTRICTED_DOCKER_DATA   images and containers (default /var/lib/fakehw-dra-docker)
set -euo pipefail
# shellcheck source=common.sh source-path=SCRIPTDIR/..
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"

netns=${RESTRICTED_DOCKER_NETNS:-fakehw-dra}
root=${RESTRICTED_DOCKER_ROOT:-/run/fakehw-dra-docker}
data=${RESTRICTED_DOCKER_DATA:-/var/lib/fakehw-dra-docker}
sock=$root/docker.sock
host=unix://$sock

answers() {
    DOCKER_HOST=$host docker info >/dev/null 2>&1
}

start() {
    ((EUID == 0)) || die "starting an engine needs root"
    require_tools dockerd docker ip jq nsenter
    if answers; then
        log "the engine already answers on $host"
        return 0
    fi
    mkdir -p "$root" "$data"
    # A copy, so the engine keeps working when the checkout moves.
    install -m 0755 "$REPO_ROOT/scripts/restricted-host/runc-wrapper" "$root/runc"
    ip netns list | grep -qw -- "$netns" || ip netns add "$netns"
    ip netns exec "$netns" ip link set lo up
    jq -n --arg data "$data" --arg root "$root" --arg host "$host" '{
        "data-root": $data, "exec-root": ($root + "/exec"), "pidfile": ($root + "/dockerd.pid"),
        "hosts": [$host], "storage-driver": "overlay2", "mtu": 1400,
        "cgroup-parent": "fakehw-dra-docker",
        "default-runtime": "fakehw-runc",
        "runtimes": {"fakehw-runc": {"path": ($root + "/runc")}}
    }' >"$root/daemon.json"
    log "starting dockerd in network namespace $netns (log: $root/dockerd.log)"
    # nsenter, not "ip netns exec": that one remounts /sys in a new mount
    # namespace, which hides the cgroup v1 hierarchies dockerd needs.
    nsenter --net="/run/netns/$netns" setsid dockerd --config-file "$root/daemon.json" \
        >"$root/dockerd.log" 2>&1 </dev/null &
    local i
    for ((i = 0; i < 60; i++)); do
        answers && { log "ready: export DOCKER_HOST=$host"; return 0; }
        sleep 1
    done
    die "dockerd did not answer on $host within 60 s; see $root/dockerd.log"
}

stop() {
    local pid
    pid=$(cat "$root/dockerd.pid" 2>/dev/null || true)
    if [[ -z $pid ]] || ! kill -0 "$pid" 2>/dev/null; then
        log "no engine running"
        return 0
    fi
    kill "$pid"
    local i
    for ((i = 0; i < 30; i++)); do
        kill -0 "$pid" 2>/dev/null || { log "stopped"; return 0; }
        sleep 1
    done
    die "dockerd $pid did not stop within 30 s"
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) answers ;;
env) echo "export DOCKER_HOST=$host" ;;
exec)
    shift
    (($# > 0)) || die "usage: docker.sh exec CMD [ARG...]"
    answers || die "the engine does not answer on $host: run 'docker.sh start' first"
    exec nsenter --net="/run/netns/$netns" env DOCKER_HOST="$host" "$@"
    ;;
load)
    shift
    answers || die "the engine does not answer on $host: run 'docker.sh start' first"
    for img in "$@"; do
        log "copying $img from the system engine"
        env -u DOCKER_HOST docker save "$img" | DOCKER_HOST=$host docker load >&2 ||
            die "copying $img failed"
    done
    ;;
*) die "usage: docker.sh start|stop|status|env|exec CMD...|load IMAGE..." ;;
esac
