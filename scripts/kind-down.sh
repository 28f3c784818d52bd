#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Deletes the kind cluster made by kind-up.sh, with everything in it.
#
#   KIND_CLUSTER_NAME  cluster name (default fakehw-dra)
#   CONTAINER_TOOL     podman selects kind's podman provider, as in kind-up.sh
set -euo pipefail
# shellcheck source=common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

: "${KIND_CLUSTER_NAME:=fakehw-dra}"
read -r -a tool <<<"${CONTAINER_TOOL:-docker}"
if [[ ${tool[0]:-} == podman ]]; then
    export KIND_EXPERIMENTAL_PROVIDER=${KIND_EXPERIMENTAL_PROVIDER:-podman}
fi
require_tools kind

if ! kind get clusters 2>/dev/null | grep -qx -- "$KIND_CLUSTER_NAME"; then
    log "no kind cluster named $KIND_CLUSTER_NAME; nothing to do"
    exit 0
fi
log "deleting kind cluster $KIND_CLUSTER_NAME"
kind delete cluster --name "$KIND_CLUSTER_NAME" || die "kind delete cluster --name $KIND_CLUSTER_NAME failed"
