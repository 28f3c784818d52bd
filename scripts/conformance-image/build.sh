#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the fakehw-dra/conformance image: the cluster suite and the tools
# it runs on (scripts/conformance-image/Dockerfile), with no registry.
#   1. kubectl KUBECTL_VERSION from the k8s.io/kubernetes Go module (kubectl.sh;
#      cached, or taken from a node image build of the same release),
#   2. a build context in $BUILD/conformance-image: the Dockerfile, kubectl,
#      the entrypoint and conformance/cluster without its self-tests,
#   3. docker build on a local Debian 12 image, packages from the Debian mirror.
#
#   CONFORMANCE_KIT_IMAGE   tag (default fakehw-dra/conformance:dev)
#   CONFORMANCE_BASE_IMAGE  base image (default: fakehw-dra/kind-rootfs:bookworm,
#                           made by make node-image, else fakehw-dra/debian:12 of
#                           make base-image; debian:12 where a registry is reachable)
#   KUBECTL_VERSION         kubectl to build (default v1.37.2)
#   BUILD                   build directory (default build)
#   CONTAINER_TOOL          docker (default) or podman, with any global flags
set -euo pipefail
# shellcheck source=common.sh source-path=SCRIPTDIR/..
source "$(dirname "${BASH_SOURCE[0]}")/../common.sh"

image=${CONFORMANCE_KIT_IMAGE:-fakehw-dra/conformance:dev}
kubectl_version=${KUBECTL_VERSION:-v1.37.2}
build=${BUILD:-build}
[[ $build == /* ]] || build=$REPO_ROOT/$build
ctx=$build/conformance-image
here=$REPO_ROOT/scripts/conformance-image

read -r -a tool <<<"${CONTAINER_TOOL:-docker}"
((${#tool[@]} > 0)) || die "CONTAINER_TOOL is empty"
require_tools "${tool[0]}"
[[ $kubectl_version =~ ^v1\.([0-9]+)\.[0-9]+(-(alpha|beta|rc)\.[0-9]+)?$ ]] ||
    die "KUBECTL_VERSION=$kubectl_version: expected v1.MINOR.PATCH"
((BASH_REMATCH[1] >= 34)) || die "KUBECTL_VERSION=$kubectl_version: the suite needs kubectl 1.34 or newer"

base=${CONFORMANCE_BASE_IMAGE:-}
if [[ -z $base ]]; then
    for candidate in fakehw-dra/kind-rootfs:bookworm fakehw-dra/debian:12; do
        if "${tool[@]}" image inspect "$candidate" >/dev/null 2>&1; then
            base=$candidate
            break
        fi
    done
    [[ -n $base ]] || die "no local Debian 12 image to build on: make base-image makes fakehw-dra/debian:12" \
        "(root, debootstrap), or set CONFORMANCE_BASE_IMAGE=debian:12 where a registry is reachable"
fi

rm -rf "$ctx"
mkdir -p "$ctx/suite/conformance"
"$here/kubectl.sh" "$kubectl_version" "$ctx/kubectl"
cp "$here/Dockerfile" "$ctx/Dockerfile"
install -m 0755 "$here/entrypoint.sh" "$ctx/entrypoint.sh"
# The suite as it is in the working tree, without the self-tests and reports.
cp -a "$REPO_ROOT/conformance/cluster" "$ctx/suite/conformance/cluster"
rm -rf "$ctx/suite/conformance/cluster/selftest" "$ctx/suite/conformance/cluster/build.mk"
kit_version=${CONFORMANCE_KIT_VERSION:-$(git -C "$REPO_ROOT" describe --always --dirty 2>/dev/null || echo unknown)}

log "building $image on $base (kubectl $kubectl_version, kit $kit_version) with ${tool[*]}"
"${tool[@]}" build --build-arg "BASE_IMAGE=$base" --build-arg "KIT_VERSION=$kit_version" \
    -t "$image" "$ctx" || die "building $image failed (see the build output above)"
log "built $image"
