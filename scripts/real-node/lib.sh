# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Shared by node.sh and drivers.sh: where the node keeps its state, and
# starting a process in the background with its log and pid file. Sourced.
# shellcheck source=../node-image/lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../node-image/lib.sh" # log, die, cache_dir, module_field

: "${REAL_NODE_STATE:=/var/lib/fakehw-real-node}"
: "${REAL_NODE_RUN:=/run/fakehw-real-node}"
: "${NODE_NAME:=$(hostname | tr '[:upper:]' '[:lower:]')}"
LOGS=$REAL_NODE_STATE/logs

# start_in PIDDIR NAME COMMAND...: runs COMMAND in its own session, output in
# $LOGS/NAME.log, its pid in PIDDIR/NAME.pid.
start_in() {
    local piddir=$1 name=$2
    shift 2
    mkdir -p "$LOGS" "$piddir"
    setsid "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
    echo $! >"$piddir/$name.pid"
    log "started $name (pid $!, log $LOGS/$name.log)"
}
