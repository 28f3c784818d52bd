#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The conformance suite's test image without a registry: Debian's static
# busybox (busybox-static) alone in an image, with its applets linked in
# /bin. Use it with CONFORMANCE_IMAGE=<image> once it is in the cluster
# (kind load docker-image; make conformance-matrix loads it itself).
#
#   busybox-image.sh [IMAGE]     default fakehw-dra/busybox:<Debian's version>
set -euo pipefail
# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$NODE_IMAGE_DIR/debian-rootfs.sh" fakehw-dra/debian-busybox:bookworm busybox-static
rootfs=$(cache_dir)/rootfs-${DEBIAN_SUITE:-bookworm}-$(printf '%s\n' busybox-static | sort | sha256sum | cut -c1-12)
[[ -x $rootfs/bin/busybox ]] || die "no /bin/busybox in $rootfs"
# shellcheck disable=SC2016 # a dpkg-query format, not a shell expansion
version=$(chroot "$rootfs" dpkg-query -W -f '${Version}' busybox-static | sed 's/^1://; s/-.*//')
image=${1:-fakehw-dra/busybox:$version}

ctx=$(cache_dir)/busybox-context
rm -rf "$ctx" && mkdir -p "$ctx"
cp "$rootfs/bin/busybox" "$ctx/busybox"
docker build -t "$image" "$ctx" -f - >&2 <<'DOCKERFILE' || die "building $image failed"
FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "--install", "-s", "/bin"]
CMD ["/bin/sh"]
DOCKERFILE
docker run --rm "$image" sh -c 'cat /dev/null && env >/dev/null' ||
    die "$image cannot run sh, cat and env"
log "built $image (busybox $version)"
echo "$image"
