#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes a Debian root filesystem with debootstrap from the Debian mirror and
# imports it into the Docker Engine as an image: the offline stand-in for
# debian:12 (no registry needed), and the root of the kind base image.
#
#   debian-rootfs.sh IMAGE [PACKAGE...]
#
#   DEBIAN_SUITE   suite (default bookworm, Debian 12)
#   DEBIAN_MIRROR  mirror (default: debootstrap's own)
# The image is rebuilt only when it is missing; remove it to refresh.
set -euo pipefail
# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

image=${1:?usage: debian-rootfs.sh IMAGE [PACKAGE...]}
shift
suite=${DEBIAN_SUITE:-bookworm}
mirror=${DEBIAN_MIRROR:-}

if docker image inspect "$image" >/dev/null 2>&1; then
    log "$image exists"
    exit 0
fi
check_prereqs docker debootstrap

base=$(cache_dir)/rootfs-$suite
if [[ ! -x $base/bin/bash ]]; then
    log "debootstrap $suite from ${mirror:-the default mirror} into $base"
    rm -rf "$base.tmp"
    debootstrap --variant=minbase "$suite" "$base.tmp" ${mirror:+"$mirror"} >&2 ||
        die "debootstrap $suite failed (see above)"
    mv "$base.tmp" "$base"
fi

rootfs=$base
if (($# > 0)); then
    # A copy per package set, so the plain base stays plain.
    rootfs=$(cache_dir)/rootfs-$suite-$(printf '%s\n' "$@" | sort | sha256sum | cut -c1-12)
    if [[ ! -e $rootfs/.packages-installed ]]; then
        rm -rf "$rootfs"
        cp -a "$base" "$rootfs"
        log "installing $* into $rootfs"
        mount -t proc proc "$rootfs/proc"
        trap 'umount "$rootfs/proc" 2>/dev/null || true' EXIT
        if ! chroot "$rootfs" /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get update >&2 ||
            ! chroot "$rootfs" /usr/bin/env DEBIAN_FRONTEND=noninteractive \
                apt-get install -y --no-install-recommends "$@" >&2; then
            die "installing $* failed (see above)"
        fi
        umount "$rootfs/proc"
        trap - EXIT
        touch "$rootfs/.packages-installed"
    fi
fi

log "importing $rootfs as $image"
tar --numeric-owner --exclude=./.packages-installed --exclude='./var/cache/apt/archives/*.deb' \
    --exclude='./var/lib/apt/lists/*' -C "$rootfs" -c . |
    docker import --change 'CMD ["/bin/bash"]' - "$image" >/dev/null ||
    die "docker import of $rootfs failed"
log "imported $image"
