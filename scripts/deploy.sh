#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Deploys fakehw-dra to a cluster, or removes it.
#
#   scripts/deploy.sh render       print the manifests that `apply` would apply
#   scripts/deploy.sh driver-name  print the driver name of those manifests
#   scripts/deploy.sh apply        apply them (the cluster must serve resource.k8s.io/v1)
#   scripts/deploy.sh delete       remove them, then this driver's ResourceSlices
#
# Environment:
#   IMAGE         image of the DaemonSet (default localhost/fakehw-dra:dev)
#   OVERLAY       empty for manifests/base, else a directory of manifests/overlays
#   KUBE_CONTEXT  kubeconfig context (default: the current one)
#   IMAGE_ID      optional image ID; stamped on the pod template so that a
#                 rebuilt image under the same tag rolls the pods (kind-up)
#   FAKEHW_CONFIG optional fakehw config to deploy instead of the manifests'
#                 fakehw.yaml (docs/fakehw.md), e.g. conformance/quickstart/fakehw.yaml
#   WAIT_TIMEOUT  seconds to wait for the pods to go on delete (default 300)
#
# The repository's manifests are never edited: render builds a throw-away
# kustomization that points at the chosen one and sets the image.
set -euo pipefail
# shellcheck source=common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# The image name the manifests use; render replaces it with $IMAGE.
MANIFEST_IMAGE_NAME=localhost/fakehw-dra

usage() {
    sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p;}' "$0" >&2
    exit 2
}

# Splits $IMAGE into name, tag and digest, as kustomize's images field wants.
# "reg:5000/a/b:tag@sha256:..." -> name reg:5000/a/b, tag tag, digest sha256:...
split_image() {
    local ref=$IMAGE last
    image_digest=
    image_tag=
    if [[ $ref == *@* ]]; then
        image_digest=${ref#*@}
        ref=${ref%%@*}
    fi
    last=${ref##*/}
    if [[ $last == *:* ]]; then
        image_tag=${last##*:}
        ref=${ref%:*}
    fi
    image_name=$ref
    [[ -n $image_name && $image_name != *[[:space:]]* ]] || die "IMAGE=$IMAGE is not an image reference"
    if [[ -n $image_digest && ! $image_digest =~ ^sha256:[0-9a-f]{64}$ ]]; then
        die "IMAGE=$IMAGE: the digest must be sha256:<64 hex digits>"
    fi
}

# Makes the throw-away kustomization and prints its directory.  It lives in
# build/ because kustomize takes only relative paths to other kustomizations,
# and from build/deploy.XXXXXX the manifests are always ../../manifests/...
make_kustomization() {
    local dir
    mkdir -p "$REPO_ROOT/build" || die "cannot create $REPO_ROOT/build"
    dir=$(mktemp -d "$REPO_ROOT/build/deploy.XXXXXX") || die "cannot create a directory in $REPO_ROOT/build"
    {
        echo "apiVersion: kustomize.config.k8s.io/v1beta1"
        echo "kind: Kustomization"
        echo "resources:"
        echo "  - ../../${SRC#"$REPO_ROOT"/}"
        echo "images:"
        echo "  - name: $MANIFEST_IMAGE_NAME"
        echo "    newName: $image_name"
        # No tag and no digest means :latest, as for docker pull.
        if [[ -n $image_tag ]]; then
            echo "    newTag: \"$image_tag\""
        elif [[ -z $image_digest ]]; then
            echo "    newTag: latest"
        fi
        [[ -n $image_digest ]] && echo "    digest: $image_digest"
        if [[ -n ${FAKEHW_CONFIG:-} ]]; then
            # The same ConfigMap with the file's content: its name's hash
            # changes with it, so the DaemonSet rolls.
            echo "configMapGenerator:"
            echo "  - name: fakehw-config"
            echo "    namespace: $NAMESPACE"
            echo "    behavior: replace"
            echo "    files: [fakehw.yaml]"
            echo "    options: {labels: {app.kubernetes.io/name: fakehw-dra}}"
        fi
        if [[ -n ${IMAGE_ID:-} ]]; then
            echo "patches:"
            echo "  - target: {kind: DaemonSet, name: $DAEMONSET}"
            echo "    patch: |-"
            echo "      - op: add"
            echo "        path: /spec/template/metadata/annotations"
            echo "        value: {fakehw.example.com/image-id: \"$IMAGE_ID\"}"
        fi
    } >"$dir/kustomization.yaml" || die "cannot write $dir/kustomization.yaml"
    if [[ -n ${FAKEHW_CONFIG:-} ]]; then
        cp "$FAKEHW_CONFIG" "$dir/fakehw.yaml" || die "cannot copy FAKEHW_CONFIG=$FAKEHW_CONFIG"
    fi
    KUSTOMIZATION=$dir
}

cleanup() {
    [[ -n ${KUSTOMIZATION:-} ]] && rm -rf "$KUSTOMIZATION"
    return 0
}

render() {
    kubectl kustomize "$KUSTOMIZATION" || die "kubectl kustomize $SRC failed"
}

# The DRIVER_NAME of the plugin container in the rendered manifests
# (kustomize prints "- name: DRIVER_NAME" and then "value: <name>").
driver_name() {
    local rendered name
    rendered=$(render) || exit 1
    name=$(awk '$1 == "-" && $2 == "name:" && $3 == "DRIVER_NAME" { getline; if ($1 == "value:") print $2; exit }' <<<"$rendered")
    [[ -n $name ]] || die "no DRIVER_NAME in the rendered manifests of $SRC"
    echo "$name"
}

# Fails, saying so, when the API server cannot be reached; else prints its
# /version answer.
reach_cluster() {
    local version
    version=$(kc get --raw /version 2>&1) ||
        die "cannot reach the cluster${KUBE_CONTEXT:+ (context $KUBE_CONTEXT)}: $version"
    echo "$version"
}

# Fails unless the API server is 1.34+ and serves resource.k8s.io/v1.
check_cluster() {
    local version minor
    version=$(reach_cluster) || exit 1
    minor=$(sed -n 's/.*"minor": *"\([0-9]*\).*/\1/p' <<<"$version")
    [[ -n $minor ]] || die "cannot read the server version from: $version"
    ((minor >= 34)) || die "the cluster runs Kubernetes 1.$minor; fakehw-dra needs 1.34 or newer (resource.k8s.io/v1)"
    # A cluster that has just started may not list every group yet (seen on
    # a loaded machine right after kind create): ask again for a while.
    local i
    for ((i = 0; i < ${DISCOVERY_RETRIES:-30}; i++)); do
        kc api-resources --api-group=resource.k8s.io -o name 2>/dev/null | grep -qx 'deviceclasses.resource.k8s.io' &&
            return 0
        sleep 2
    done
    die "the cluster does not serve resource.k8s.io DeviceClasses: is the resource.k8s.io API group disabled?"
}

apply() {
    check_cluster
    log "applying $SRC with image $IMAGE${KUBE_CONTEXT:+ to context $KUBE_CONTEXT}"
    kc apply -k "$KUSTOMIZATION" || die "kubectl apply failed"
}

delete() {
    local driver
    driver=$(driver_name) || exit 1
    # Without a cluster every delete below would fail for that reason alone.
    reach_cluster >/dev/null || exit 1
    # The DaemonSet first, and wait: its pods unregister from the kubelet and
    # unmount fakehw while their RBAC still exists.
    log "deleting DaemonSet $NAMESPACE/$DAEMONSET"
    kc -n "$NAMESPACE" delete daemonset "$DAEMONSET" --ignore-not-found --wait=true --timeout="${WAIT_TIMEOUT}s" ||
        die "the DaemonSet's pods did not go within ${WAIT_TIMEOUT}s"
    log "deleting the rest of $SRC"
    kc delete -k "$KUSTOMIZATION" --ignore-not-found --wait=true --timeout="${WAIT_TIMEOUT}s" || die "kubectl delete failed"
    # The kubelet would wipe them 30 s after the plugin went; do it now.
    log "deleting the ResourceSlices of $driver"
    kc delete resourceslices --field-selector "spec.driver=$driver" --ignore-not-found ||
        die "deleting the ResourceSlices of $driver failed"
}

(($# == 1)) || usage
case $1 in
render | driver-name | apply | delete) ;;
*) usage ;;
esac
require_tools kubectl
SRC=$(manifests_dir) || exit 1
split_image
[[ -z ${FAKEHW_CONFIG:-} || (-f $FAKEHW_CONFIG && -r $FAKEHW_CONFIG) ]] ||
    die "FAKEHW_CONFIG=$FAKEHW_CONFIG: no such readable file"
trap cleanup EXIT
make_kustomization
case $1 in
render) render ;;
driver-name) driver_name ;;
apply) apply ;;
delete) delete ;;
esac
