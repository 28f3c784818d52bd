#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Lays out the upstream generated.proto files of the Kubernetes types the
# API server stand-in speaks protobuf for, and the Go source of those types
# (for their JSON names and tags), from the k8s.io/api and
# k8s.io/apimachinery modules at one pinned version.  The modules come from
# the Go module cache, through the module proxy the first time.  Nothing
# downloaded is kept in the repository: the files go into a build directory.
#
#   k8s-protos.sh VERSION OUTDIR
#
# OUTDIR gets k8s.io/api/... and k8s.io/apimachinery/... trees holding, per
# package, generated.proto and the package's Go type files.
set -euo pipefail

die() {
    printf 'k8s-protos: error: %s\n' "$*" >&2
    exit 1
}

[ $# -eq 2 ] || die "usage: k8s-protos.sh VERSION OUTDIR"
version=$1
out=$2
case $version in
v0.*) ;;
*) die "VERSION must be a k8s.io/api module version such as v0.37.2, not \"$version\"" ;;
esac
# The toolchain make deps finds or fetches (scripts/install-go-tools.sh).
PATH=$PATH:/usr/local/go/bin:${GO_TOOLCHAIN_DIR:-/usr/local/lib/fakehw-dra-go}/go/bin
command -v go >/dev/null 2>&1 || die "go is needed to fetch k8s.io/api $version from the module proxy (make deps)"

# The packages whose types are served, and the ones they import.
api_pkgs="core/v1 resource/v1 coordination/v1"
machinery_pkgs="pkg/api/resource pkg/apis/meta/v1 pkg/runtime pkg/runtime/schema pkg/util/intstr"

# go mod download works outside a module; -json gives the unpacked Dir.
module_dir() {
    local json
    json=$(cd / && GOFLAGS=-mod=mod go mod download -json "$1@$version") ||
        die "go mod download $1@$version failed (is the module proxy reachable?)"
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$json"
}

copy_pkg() { # module_dir module pkg
    local src=$1/$3 dst=$out/$2/$3
    [ -f "$src/generated.proto" ] || die "$2@$version has no $3/generated.proto"
    mkdir -p "$dst"
    install -m 0644 "$src/generated.proto" "$dst/"
    local f
    for f in "$src"/*.go; do
        case ${f##*/} in
        *_test.go | zz_generated* | generated.pb.go) ;;
        *) install -m 0644 "$f" "$dst/" ;;
        esac
    done
}

rm -rf "$out.tmp"
mkdir -p "$out.tmp"
final=$out
out=$out.tmp
api_dir=$(module_dir k8s.io/api)
machinery_dir=$(module_dir k8s.io/apimachinery)
{ [ -d "$api_dir" ] && [ -d "$machinery_dir" ]; } || die "module directories not found"
for p in $api_pkgs; do copy_pkg "$api_dir" k8s.io/api "$p"; done
for p in $machinery_pkgs; do copy_pkg "$machinery_dir" k8s.io/apimachinery "$p"; done
echo "$version" >"$out/VERSION"
rm -rf "$final"
mv "$out" "$final"
