#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds kubectl VERSION from the k8s.io/kubernetes Go module through the Go
# module proxy with scripts/node-image/kube-binaries.sh, kubectl alone (a few
# minutes, not an hour).  A kubectl that
# kube-binaries.sh already built for VERSION (a node image of that release)
# is copied instead.
#
#   kubectl.sh VERSION OUT      e.g. kubectl.sh v1.37.2 build/job/kubectl
#
# The build is kept in the node-image cache (NODE_IMAGE_CACHE, default
# ~/.cache/fakehw-dra/node-image) as kubectl-VERSION/kubectl.
set -euo pipefail
# shellcheck source=../node-image/lib.sh source-path=SCRIPTDIR/../node-image
source "$(dirname "${BASH_SOURCE[0]}")/../node-image/lib.sh"
# shellcheck source=../node-image/versions.sh source-path=SCRIPTDIR/../node-image
source "$NODE_IMAGE_DIR/versions.sh"

version=${1:?usage: kubectl.sh VERSION OUT}
out=${2:?usage: kubectl.sh VERSION OUT}
parse_kube_version "$version"

# reports_version FILE: FILE is a kubectl that says it is $version.
reports_version() {
    [[ -x $1 ]] && [[ $("$1" version --client -o json 2>/dev/null |
        sed -n 's/^ *"gitVersion": "\(.*\)",$/\1/p' | head -n 1) == "$version" ]]
}

cache=$(cache_dir)
built=$cache/kubectl-$version/kubectl
if ! reports_version "$built"; then
    if reports_version "$cache/kubernetes-$version/kubectl"; then
        log "kubectl $version from the node image build in $cache/kubernetes-$version"
        mkdir -p "$(dirname "$built")"
        cp "$cache/kubernetes-$version/kubectl" "$built.tmp" && mv "$built.tmp" "$built"
    else
        KUBE_PROGRAMS=kubectl "$NODE_IMAGE_DIR/kube-binaries.sh" "$version" "$(dirname "$built")"
        reports_version "$built" || die "the kubectl built in $built does not report $version"
    fi
fi
mkdir -p "$(dirname "$out")"
cp "$built" "$out.tmp" && mv "$out.tmp" "$out"
log "kubectl $version in $out"
