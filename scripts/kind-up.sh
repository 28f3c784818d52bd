#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A kind cluster with the fake GPUs published and ready for claims:
#   1. checks the tools (docker, kind v0.32.0+ (v0.33.0+ for 1.37), kubectl),
#   2. creates the cluster from kind/cluster-<minor>.yaml, or reuses a running
#      one of the same name,
#   3. builds the image and loads it into the nodes,
#   4. deploys the driver (scripts/deploy.sh),
#   5. waits until every worker published its ResourceSlices, and prints them.
#
# Environment:
#   K8S_VERSION        Kubernetes version, vMAJOR.MINOR.PATCH (default v1.37.0); its
#                      minor picks the kind config, 1.34 to 1.37
#   KIND_CLUSTER_NAME  cluster name (default fakehw-dra)
#   KIND_NODE_IMAGE    node image to use instead of the config's pinned one
#   IMAGE              driver image (default localhost/fakehw-dra:dev)
#   OVERLAY            manifests/overlays/<OVERLAY> instead of manifests/base
#   CONTAINER_TOOL     docker (default) or podman (then kind's podman provider)
#   SKIP_IMAGE_BUILD   1: load $IMAGE as it is, do not build it
#   WAIT_TIMEOUT       seconds to wait for the slices (default 300)
set -euo pipefail
# shellcheck source=common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

: "${K8S_VERSION:=v1.37.0}"
: "${KIND_CLUSTER_NAME:=fakehw-dra}"

# --- inputs, checked before anything is touched ------------------------------

supported_minors() {
    local f have=()
    for f in "$REPO_ROOT"/kind/cluster-*.yaml; do
        [[ -f $f ]] || continue
        f=${f##*/cluster-}
        have+=("${f%.yaml}")
    done
    echo "${have[*]:-none}"
}

[[ $K8S_VERSION =~ ^v?1\.([0-9]+)\.([0-9]+)$ ]] ||
    die "K8S_VERSION=$K8S_VERSION: expected vMAJOR.MINOR.PATCH, for example v1.37.0"
minor=1.${BASH_REMATCH[1]}
version=v${K8S_VERSION#v}
config=$REPO_ROOT/kind/cluster-$minor.yaml
[[ -f $config ]] ||
    die "K8S_VERSION=$K8S_VERSION: no kind config for Kubernetes $minor (kind/ has: $(supported_minors))"
# The kind release that built the node image the config pins.
case $minor in
1.34 | 1.35 | 1.36) MIN_KIND_VERSION=0.32.0 ;;
*) MIN_KIND_VERSION=0.33.0 ;;
esac
[[ $KIND_CLUSTER_NAME =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] ||
    die "KIND_CLUSTER_NAME=$KIND_CLUSTER_NAME: use lower-case letters, digits and '-'"
export OVERLAY=${OVERLAY:-}
manifests_dir >/dev/null

# The config pins one node image (tag@digest) for all nodes.  Another patch
# release of the same minor is passed with --image, which replaces it.
pinned=$(sed -n 's/^[[:space:]]*image:[[:space:]]*\(kindest\/node:[^[:space:]]*\).*/\1/p' "$config" | sort -u)
[[ $(wc -l <<<"$pinned") -eq 1 && -n $pinned ]] || die "$config must name exactly one node image"
image_args=()
if [[ -n ${KIND_NODE_IMAGE:-} ]]; then
    node_image=$KIND_NODE_IMAGE
    image_args=(--image "$node_image")
elif [[ ${pinned%%@*} == "kindest/node:$version" ]]; then
    node_image=$pinned
else
    node_image=kindest/node:$version
    image_args=(--image "$node_image")
    log "note: $node_image is not the image $(basename "$config") pins (${pinned%%@*}); it must exist on Docker Hub or locally"
fi

# --- tools ---------------------------------------------------------------------

read -r -a tool <<<"${CONTAINER_TOOL:-docker}"
((${#tool[@]} > 0)) || die "CONTAINER_TOOL is empty"
require_tools "${tool[0]}" kind kubectl
if [[ ${tool[0]} == podman ]]; then
    export KIND_EXPERIMENTAL_PROVIDER=${KIND_EXPERIMENTAL_PROVIDER:-podman}
fi
"${tool[@]}" info >/dev/null 2>&1 ||
    die "'${tool[*]} info' failed: ${tool[0]} is installed but its engine does not answer (is it running, may you use it?)"

# "kind v0.32.0 go1.25.1 linux/amd64" -> 0.32.0
kind_version=$(kind version 2>/dev/null | sed -n 's/^kind v\([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\).*/\1/p')
[[ -n $kind_version ]] || die "cannot tell the version of kind from '$(kind version 2>&1 | head -n1)'"
if [[ $(printf '%s\n%s\n' "$MIN_KIND_VERSION" "$kind_version" | sort -t. -k1,1n -k2,2n -k3,3n | head -n1) != "$MIN_KIND_VERSION" ]]; then
    die "kind $kind_version is older than v$MIN_KIND_VERSION, which built the node image $(basename "$config") pins: install $(install_hint kind)"
fi

# --- cluster -------------------------------------------------------------------

KUBE_CONTEXT=kind-$KIND_CLUSTER_NAME
export KUBE_CONTEXT

if kind get clusters 2>/dev/null | grep -qx -- "$KIND_CLUSTER_NAME"; then
    running=$("${tool[@]}" inspect -f '{{.State.Running}}' "$KIND_CLUSTER_NAME-control-plane" 2>/dev/null || true)
    [[ $running == true ]] ||
        die "kind cluster $KIND_CLUSTER_NAME exists but its control plane container is not running; start its containers (${tool[0]} start $KIND_CLUSTER_NAME-control-plane ...) or recreate it: make kind-down kind-up"
    log "reusing the running kind cluster $KIND_CLUSTER_NAME"
    kubectl config get-contexts "$KUBE_CONTEXT" >/dev/null 2>&1 ||
        kind export kubeconfig --name "$KIND_CLUSTER_NAME" >&2 ||
        die "cannot write the kubeconfig context $KUBE_CONTEXT"
    running_version=$(kc get nodes -o jsonpath='{.items[0].status.nodeInfo.kubeletVersion}' 2>/dev/null || true)
    if [[ -n $running_version && $running_version != "$version"* ]]; then
        log "note: the cluster runs $running_version, not $version; it is kept (make kind-down first to change versions)"
    fi
else
    log "creating kind cluster $KIND_CLUSTER_NAME from ${config#"$REPO_ROOT"/} with $node_image"
    kind create cluster --name "$KIND_CLUSTER_NAME" --config "$config" "${image_args[@]}" --wait 120s ||
        die "kind create cluster failed (see above); 'make kind-down' removes what is left"
fi

# --- image ---------------------------------------------------------------------

if [[ ${SKIP_IMAGE_BUILD:-0} != 1 ]]; then
    "$REPO_ROOT/scripts/image.sh"
fi
image_id=$("${tool[@]}" image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null) ||
    die "image $IMAGE is not in ${tool[0]}'s local store: build it (make image) or unset SKIP_IMAGE_BUILD"
log "loading $IMAGE into the nodes of $KIND_CLUSTER_NAME"
if [[ ${tool[0]} == docker ]]; then
    kind load docker-image "$IMAGE" --name "$KIND_CLUSTER_NAME" >&2 || die "kind load docker-image $IMAGE failed"
else
    archive=$(mktemp "${TMPDIR:-/tmp}/fakehw-dra-image.XXXXXX")
    trap 'rm -f "$archive"' EXIT
    "${tool[@]}" save -o "$archive" "$IMAGE" || die "${tool[*]} save $IMAGE failed"
    kind load image-archive "$archive" --name "$KIND_CLUSTER_NAME" >&2 || die "kind load image-archive failed"
fi

# --- driver --------------------------------------------------------------------

IMAGE_ID=$image_id "$REPO_ROOT/scripts/deploy.sh" apply
"$REPO_ROOT/scripts/wait-slices.sh"
log "ready: kind cluster $KIND_CLUSTER_NAME (context $KUBE_CONTEXT); try kubectl apply -f manifests/examples/"
