#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Kubernetes programs a kind node needs from the k8s.io/kubernetes
# Go module, through the Go module proxy: no git clone, no release download.
#
#   kube-binaries.sh VERSION OUTDIR     e.g. kube-binaries.sh v1.37.2 out/
#
# KUBE_PROGRAMS (space-separated) builds only those, e.g. "kubectl".
#
# k8s.io/kubernetes replaces its k8s.io/* staging modules with local paths,
# which a module consumer cannot use; a throwaway module pins each of them to
# the matching published v0.X.Y instead. The version variables are set as
# hack/lib/version.sh sets them, so kubeadm and the kubelet report VERSION.
# A release that needs a newer Go than this machine's is built with the Go
# toolchain versions.sh names for its minor (use_kube_toolchain in lib.sh).
set -euo pipefail
# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=versions.sh source-path=SCRIPTDIR
source "$NODE_IMAGE_DIR/versions.sh"

version=${1:?usage: kube-binaries.sh VERSION OUTDIR}
out=${2:?usage: kube-binaries.sh VERSION OUTDIR}
parse_kube_version "$version"
use_local_go || die "no Go 1.$NODE_IMAGE_GO_MIN_MINOR or newer here: make deps-node-image fetches one"

read -ra programs <<<"${KUBE_PROGRAMS:-kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubelet kubeadm kubectl}"
((${#programs[@]} > 0)) || die "KUBE_PROGRAMS names no program"
have_all=1
for p in "${programs[@]}"; do [[ -x $out/$p ]] || have_all=0; done
if ((have_all)) && [[ $(cat "$out/.version" 2>/dev/null) == "$version" ]]; then
    log "Kubernetes $version programs are already in $out"
    exit 0
fi

use_kube_toolchain "$version"
# A module per set of programs, named after them with dashes.
work=$(cache_dir)/kube-module-$version${KUBE_PROGRAMS:+-$(IFS=-; echo "${programs[*]}")}
mkdir -p "$work" "$out"
log "resolving k8s.io/kubernetes@$version through the Go module proxy"
modfile=$(module_field "k8s.io/kubernetes@$version" GoMod)
[[ -f $modfile ]] || die "the Go module proxy did not serve k8s.io/kubernetes@$version"

staging_version="v0.${KUBE_MINOR}.${KUBE_PATCH}${KUBE_PRE}"
{
    echo "module fakehw-dra.local/kube-build"
    echo
    echo "go $(sed -n 's/^go \(.*\)$/\1/p' "$modfile")"
    echo
    echo "require k8s.io/kubernetes $version"
    echo
    # Every "k8s.io/x => ./staging/src/k8s.io/x" becomes "k8s.io/x => k8s.io/x v0.X.Y".
    sed -n 's#^\s*\(k8s\.io/[^ ]*\) => \./staging/src/.*$#replace \1 => \1 '"$staging_version"'#p' "$modfile"
} >"$work/go.mod"
grep -q '^replace ' "$work/go.mod" || die "no staging replacements found in $modfile"

pkgs=()
for p in "${programs[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$p"); done
if ! (cd "$work" && GOFLAGS=-mod=mod go get "${pkgs[@]/%/@$version}") 2>"$work/go-get.log"; then
    cat "$work/go-get.log" >&2
    refused=$(refused_modules "$work/go-get.log")
    [[ -z $refused ]] ||
        die "the Go module proxy does not serve $refused, which Kubernetes $version needs: it cannot be built here"
    die "go get of the Kubernetes $version commands failed (see above)"
fi

ldflags="-s -w"
for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$KUBE_MINOR"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit=module-$version"
    ldflags+=" -X $pkg.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
done
# One go build for all of them: one package graph to load, and the
# programs' shared packages and their links scheduled together on every core.
log "building ${programs[*]} $version"
(cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" \
    -o "$out/" "${pkgs[@]}") >&2 || die "building the Kubernetes $version programs failed (see above)"
for p in "${programs[@]}"; do [[ -x $out/$p ]] || die "go build wrote no $out/$p"; done
echo "$version" >"$out/.version"
log "built ${programs[*]} $version into $out"
