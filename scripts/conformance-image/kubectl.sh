#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds kubectl VERSION from the k8s.io/kubernetes Go module through the Go
# module proxy, as scripts/node-image/kube-binaries.sh builds a node's
# programs, but kubectl alone (a few minutes, not an hour).  A kubectl that
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
        command -v go >/dev/null || die "go not found: kubectl is built from its Go module"
        use_kube_toolchain "$version" # 1.38 needs Go 1.27
        work=$cache/kubectl-module-$version
        mkdir -p "$work" "$(dirname "$built")"
        log "resolving k8s.io/kubernetes@$version through the Go module proxy"
        modfile=$(module_field "k8s.io/kubernetes@$version" GoMod)
        [[ -f $modfile ]] || die "the Go module proxy did not serve k8s.io/kubernetes@$version"
        # k8s.io/kubernetes replaces its staging modules with local paths, which
        # a module consumer cannot use: pin each to the published v0.X.Y.
        staging_version="v0.${KUBE_MINOR}.${KUBE_PATCH}${KUBE_PRE}"
        {
            echo "module fakehw-dra.local/kubectl-build"
            echo
            echo "go $(sed -n 's/^go \(.*\)$/\1/p' "$modfile")"
            echo
            echo "require k8s.io/kubernetes $version"
            echo
            sed -n 's#^\s*\(k8s\.io/[^ ]*\) => \./staging/src/.*$#replace \1 => \1 '"$staging_version"'#p' "$modfile"
        } >"$work/go.mod"
        grep -q '^replace ' "$work/go.mod" || die "no staging replacements found in $modfile"
        if ! (cd "$work" && GOFLAGS=-mod=mod go get "k8s.io/kubernetes/cmd/kubectl@$version") 2>"$work/go-get.log"; then
            cat "$work/go-get.log" >&2
            refused=$(refused_modules "$work/go-get.log")
            [[ -z $refused ]] ||
                die "the Go module proxy does not serve $refused, which kubectl $version needs: it cannot be built here"
            die "go get of k8s.io/kubernetes/cmd/kubectl@$version failed (see above)"
        fi
        ldflags="-s -w"
        for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
            ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$KUBE_MINOR"
            ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit=module-$version"
            ldflags+=" -X $pkg.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
        done
        log "building kubectl $version (static, CGO_ENABLED=0)"
        (cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" \
            -o "$built.tmp" k8s.io/kubernetes/cmd/kubectl) >&2 || die "building kubectl $version failed (see above)"
        mv "$built.tmp" "$built"
        reports_version "$built" || die "the kubectl built in $built does not report $version"
    fi
fi
mkdir -p "$(dirname "$out")"
cp "$built" "$out.tmp" && mv "$out.tmp" "$out"
log "kubectl $version in $out"
