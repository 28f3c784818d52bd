#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the node-image scripts need on this machine (NODE_IMAGE_NEEDS in
# lib.sh), for make deps-node-image and make deps-check.
#
#   prereqs.sh packages            the Debian packages, one a line
#   prereqs.sh needs               the table: NAME PACKAGE ("-": not a Debian package)
#   prereqs.sh check [rootfs]      fails naming what is missing; rootfs: only
#                                  what make base-image needs (debian-rootfs.sh)
#   prereqs.sh check-tools         the same without the Docker Engine (what CI
#                                  can check: it runs no engine of its own)
set -euo pipefail
# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

case ${1:-} in
packages) need_packages ;;
needs) echo "$NODE_IMAGE_NEEDS" ;;
check)
    if [[ ${2:-} == rootfs ]]; then
        check_prereqs docker debootstrap
    else
        # shellcheck disable=SC2046 # one word a name
        check_prereqs $(cut -d' ' -f1 <<<"$NODE_IMAGE_NEEDS")
    fi
    log "everything it needs is here"
    ;;
check-tools)
    # shellcheck disable=SC2046 # one word a name
    check_prereqs $(cut -d' ' -f1 <<<"$NODE_IMAGE_NEEDS" | grep -vx docker)
    log "everything it needs but the Docker Engine is here"
    ;;
*) die "usage: prereqs.sh packages | needs | check [rootfs] | check-tools" ;;
esac
