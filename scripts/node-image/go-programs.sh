#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the node's own programs and the programs of its preloaded images
# from their Go modules, through the Go module proxy: containerd, runc,
# crictl, the CNI plugins kind uses, etcd and CoreDNS. Each lands in
# $(cache_dir)/programs/<name>-<version>/ and is built once.
#
#   go-programs.sh node                 containerd, runc, crictl, CNI plugins
#   go-programs.sh etcd VERSION         e.g. v3.7.0
#   go-programs.sh coredns VERSION      e.g. v1.14.6
# Prints the directory holding the programs on stdout.
set -euo pipefail
# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=versions.sh source-path=SCRIPTDIR
source "$NODE_IMAGE_DIR/versions.sh"

# build NAME MODULE VERSION OUTDIR CGO TAGS PKG:BINARY...: builds each package
# of MODULE@VERSION in a throwaway module, so the module's own replace
# directives (which `go install pkg@version` refuses) do not matter.
build() {
    local name=$1 module=$2 version=$3 out=$4 cgo=$5 tags=$6
    shift 6
    local pkg bin missing=0 spec
    for spec in "$@"; do [[ -x $out/${spec#*:} ]] || missing=1; done
    ((missing)) || return 0
    local work
    work=$(cache_dir)/go-$name-$version
    mkdir -p "$work" "$out"
    printf 'module fakehw-dra.local/build-%s\n\ngo 1.26\n' "$name" >"$work/go.mod"
    log "building $name $version from $module"
    local pkgs=()
    for spec in "$@"; do pkgs+=("${spec%%:*}@$version"); done
    (cd "$work" && GOFLAGS=-mod=mod go get "${pkgs[@]}") >&2 ||
        die "go get ${pkgs[*]} failed (see above)"
    for spec in "$@"; do
        pkg=${spec%%:*} bin=${spec#*:}
        (cd "$work" && CGO_ENABLED=$cgo GOFLAGS=-mod=mod go build -trimpath -tags "$tags" \
            -ldflags "-s -w" -o "$out/$bin" "$pkg") >&2 ||
            die "building $pkg $version failed (see above)"
    done
}

use_local_go || die "no Go 1.$NODE_IMAGE_GO_MIN_MINOR or newer here: make deps-node-image fetches one"
programs=$(cache_dir)/programs
case ${1:-} in
node)
    build containerd github.com/containerd/containerd/v2 "$CONTAINERD_VERSION" \
        "$programs/containerd-$CONTAINERD_VERSION" 1 "no_aufs no_zfs no_btrfs no_devmapper" \
        github.com/containerd/containerd/v2/cmd/containerd:containerd \
        github.com/containerd/containerd/v2/cmd/ctr:ctr \
        github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2:containerd-shim-runc-v2
    # runc needs cgo and libseccomp (Debian: libseccomp-dev) for seccomp.
    build runc github.com/opencontainers/runc "$RUNC_VERSION" "$programs/runc-$RUNC_VERSION" 1 seccomp \
        github.com/opencontainers/runc:runc
    build crictl sigs.k8s.io/cri-tools "$CRICTL_VERSION" "$programs/crictl-$CRICTL_VERSION" 0 "" \
        sigs.k8s.io/cri-tools/cmd/crictl:crictl
    cni=github.com/containernetworking/plugins/plugins
    build cni github.com/containernetworking/plugins "$CNI_PLUGINS_VERSION" \
        "$programs/cni-$CNI_PLUGINS_VERSION" 0 "" \
        $cni/ipam/host-local:host-local $cni/main/loopback:loopback $cni/main/ptp:ptp \
        $cni/meta/portmap:portmap
    echo "$programs"
    ;;
etcd)
    v=${2:?usage: go-programs.sh etcd VERSION}
    build etcd go.etcd.io/etcd/server/v3 "$v" "$programs/etcd-$v" 0 "" \
        go.etcd.io/etcd/server/v3:etcd
    echo "$programs/etcd-$v"
    ;;
coredns)
    v=${2:?usage: go-programs.sh coredns VERSION}
    build coredns github.com/coredns/coredns "$v" "$programs/coredns-$v" 0 "" \
        github.com/coredns/coredns:coredns
    echo "$programs/coredns-$v"
    ;;
*) die "usage: go-programs.sh node | etcd VERSION | coredns VERSION" ;;
esac
