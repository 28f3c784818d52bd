#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the kind base image offline (kind-base.Dockerfile): a Debian root
# with kind's packages, kind's node files (entrypoint, systemd units,
# containerd config) from the sigs.k8s.io/kind Go module, and containerd,
# runc, crictl and the CNI plugins built from their Go modules.
#
#   kind-base.sh IMAGE
set -euo pipefail
# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=versions.sh source-path=SCRIPTDIR
source "$NODE_IMAGE_DIR/versions.sh"

image=${1:?usage: kind-base.sh IMAGE}
if docker image inspect "$image" >/dev/null 2>&1; then
    log "$image exists"
    exit 0
fi

# kind's base image package list, less nfs-common and open-iscsi (no
# network storage in a test cluster).
rootfs_image=fakehw-dra/kind-rootfs:bookworm
"$NODE_IMAGE_DIR/debian-rootfs.sh" "$rootfs_image" systemd conntrack iptables nftables iproute2 \
    ethtool util-linux mount kmod libseccomp2 pigz fuse-overlayfs e2fsprogs bash ca-certificates \
    curl jq procps

programs=$("$NODE_IMAGE_DIR/go-programs.sh" node)
kind_dir=$(module_field "sigs.k8s.io/kind@$KIND_MODULE_VERSION" Dir)
[[ -d $kind_dir/images/base/files ]] ||
    die "sigs.k8s.io/kind@$KIND_MODULE_VERSION from the Go module proxy has no images/base/files"

ctx=$(cache_dir)/kind-base-context
rm -rf "$ctx"
mkdir -p "$ctx/bin" "$ctx/sbin" "$ctx/cni"
cp -r "$kind_dir/images/base/files" "$ctx/files"
chmod -R u+w,go+r "$ctx/files"
c=$programs/containerd-$CONTAINERD_VERSION
cp "$c/containerd" "$c/ctr" "$c/containerd-shim-runc-v2" "$programs/crictl-$CRICTL_VERSION/crictl" "$ctx/bin/"
cp "$programs/runc-$RUNC_VERSION/runc" "$ctx/sbin/"
cp "$programs/cni-$CNI_PLUGINS_VERSION"/* "$ctx/cni/"
cp "$NODE_IMAGE_DIR/kind-base.Dockerfile" "$ctx/Dockerfile"

log "building $image"
docker build --build-arg "ROOTFS_IMAGE=$rootfs_image" -t "$image" "$ctx" >&2 ||
    die "building $image failed (see above)"
log "built $image"
