#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the fakehw-dra container image (Dockerfile at the top of the
# repository): fakehw, fakehw-kubelet-plugin and fakegpu-smi on Debian 12.
#
#   IMAGE           tag to build (default localhost/fakehw-dra:dev)
#   CONTAINER_TOOL  docker (default) or podman, with any global flags it
#                   needs, e.g. "podman --cgroup-manager=cgroupfs"
#   BUILD_IMAGE     base of the build stage (default debian:12)
#   RUNTIME_IMAGE   base of the image itself (default debian:12-slim)
set -euo pipefail
# shellcheck source=common.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

read -r -a tool <<<"${CONTAINER_TOOL:-docker}"
((${#tool[@]} > 0)) || die "CONTAINER_TOOL is empty"
require_tools "${tool[0]}"

build_args=()
[[ -n ${BUILD_IMAGE:-} ]] && build_args+=(--build-arg "BUILD_IMAGE=$BUILD_IMAGE")
[[ -n ${RUNTIME_IMAGE:-} ]] && build_args+=(--build-arg "RUNTIME_IMAGE=$RUNTIME_IMAGE")
# The build context has no .git: the commit the programs report comes from here.
commit=$(git -C "$REPO_ROOT" describe --always --dirty 2>/dev/null || true)
[[ -n $commit ]] && build_args+=(--build-arg "FAKEHW_GIT_COMMIT=$commit")

log "building $IMAGE with ${tool[*]}"
"${tool[@]}" build "${build_args[@]}" -t "$IMAGE" -f "$REPO_ROOT/Dockerfile" "$REPO_ROOT" ||
    die "building $IMAGE failed (see the build output above)"
log "built $IMAGE"
