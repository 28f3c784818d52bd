# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Shared helpers of the node-image scripts. Sourced, never run.

PROG=$(basename "$0" .sh)
NODE_IMAGE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export NODE_IMAGE_DIR

log() {
    printf '%s: %s\n' "$PROG" "$*" >&2
}

die() {
    printf '%s: error: %s\n' "$PROG" "$*" >&2
    exit 1
}

# Where downloads, Go module builds and root filesystems are kept between runs.
cache_dir() {
    local d=${NODE_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fakehw-dra/node-image}
    mkdir -p "$d"
    echo "$d"
}

# module_field MODULE@VERSION FIELD: downloads the module through the Go
# module proxy and prints one field of `go mod download -json` (Dir, GoMod).
module_field() {
    (cd "$(cache_dir)" && GOFLAGS=-mod=mod go mod download -json "$1") |
        sed -n 's/^[[:space:]]*"'"$2"'": "\(.*\)",\{0,1\}$/\1/p'
}

# shellcheck disable=SC2034 # the callers use them
# parse_kube_version v1.37.2 sets KUBE_MINOR=37 KUBE_PATCH=2 KUBE_PRE= (or -rc.1).
parse_kube_version() {
    [[ $1 =~ ^v1\.([0-9]+)\.([0-9]+)(-(alpha|beta|rc)\.[0-9]+)?$ ]] ||
        die "Kubernetes version '$1' is not of the form v1.MINOR.PATCH[-rc.N]"
    KUBE_MINOR=${BASH_REMATCH[1]}
    KUBE_PATCH=${BASH_REMATCH[2]}
    KUBE_PRE=${BASH_REMATCH[3]}
}

# refused_modules LOG: the module@version pairs that the Go module proxy
# refused ("403 Forbidden ... not available") in LOG, the output of a go
# command, on one line. Such a module cannot be had at all, so a build that
# needs it names them rather than leaving the reader a page of import chains.
refused_modules() {
    sed -n 's#.*reading https\{0,1\}://[^/]*/\([^ ]*\)/@v/\([^ /]*\)\.\(zip\|mod\|info\): 403.*#\1@\2#p' "$1" |
        sort -u | tr '\n' ' ' | sed 's/ $//'
}

# use_kube_toolchain VERSION: exports GOTOOLCHAIN so that `go` can build
# k8s.io/kubernetes@VERSION. Nothing changes when the Go here is new enough
# for the module's go.mod, or when GOTOOLCHAIN is already set (other than
# local or auto). Otherwise the minor's KUBE_GO_TOOLCHAIN_<minor> of
# versions.sh, else the go.mod's toolchain line, else go<its go line>: 1.38
# asks for go 1.27.0 and gets go1.27.3. Needs parse_kube_version and
# versions.sh first.
use_kube_toolchain() {
    local modfile need have pinned
    case ${GOTOOLCHAIN:-local} in
    local | auto) ;;
    *) return 0 ;;
    esac
    # GoMod is reported even when the running Go is too old for the module.
    modfile=$(GOTOOLCHAIN=local module_field "k8s.io/kubernetes@$1" GoMod) || true
    [[ -f $modfile ]] || die "the Go module proxy did not serve k8s.io/kubernetes@$1"
    need=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$modfile")
    have=$(GOTOOLCHAIN=local go env GOVERSION)
    have=${have#go}
    [[ -n $need ]] || die "no go line in $modfile"
    if [[ $(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n1) == "$need" ]]; then
        return 0
    fi
    pinned=KUBE_GO_TOOLCHAIN_$KUBE_MINOR
    GOTOOLCHAIN=${!pinned:-}
    [[ -n $GOTOOLCHAIN ]] || GOTOOLCHAIN=$(sed -n 's/^toolchain \(go[0-9.]*\)$/\1/p' "$modfile")
    [[ -n $GOTOOLCHAIN ]] || GOTOOLCHAIN=go$need
    export GOTOOLCHAIN
    log "k8s.io/kubernetes@$1 needs Go $need, this is Go $have: GOTOOLCHAIN=$GOTOOLCHAIN (from the module proxy)"
}

# --- what the scripts need on this machine ----------------------------------------

# What the node-image scripts run or build with, besides Debian's essential
# tools (coreutils, tar, sed, grep, mount, findutils, ...): one "NAME PACKAGE"
# a line. NAME is a command, or libseccomp (pkg-config finds it for runc's
# seccomp support), or libc.a (gcc -static, for the pause image). PACKAGE is
# the Debian package that brings it, "-" for docker (a Docker Engine:
# docs/install.md) and go (Go 1.$NODE_IMAGE_GO_MIN_MINOR or newer). make
# deps-node-image installs the packages and Go (prereqs.sh packages); every
# build checks the list first (check_prereqs); scripts/tests/install_paths.bats
# fails when a script runs a command that is not here.
NODE_IMAGE_NEEDS="docker -
go -
gcc gcc
libc.a libc6-dev
pkg-config pkgconf
libseccomp libseccomp-dev
debootstrap debootstrap"
# As scripts/install-go-tools.sh's GO_MIN_MINOR: the Go it fetches will do.
NODE_IMAGE_GO_MIN_MINOR=26
GO_MIN_MINOR=$NODE_IMAGE_GO_MIN_MINOR
# go_ok and local_go, as install-go-tools.sh looks for a Go.
# shellcheck source=go-toolchain.sh source-path=SCRIPTDIR
source "$NODE_IMAGE_DIR/go-toolchain.sh"

# use_local_go: when the go on PATH is missing or too old, puts the first
# new enough one of /usr/local/go and the toolchain install-go-tools.sh
# fetches (GO_TOOLCHAIN_DIR) first on PATH.
use_local_go() {
    local g
    g=$(local_go) || return 1
    if [[ $g != "$(command -v go 2>/dev/null)" ]]; then
        PATH=$(dirname "$g"):$PATH
        export PATH
    fi
}

# need_packages NAME...: the Debian packages of those NAMEs of NODE_IMAGE_NEEDS.
# shellcheck disable=SC2120 # prereqs.sh calls it with no arguments: every package
need_packages() {
    local name pkg
    while read -r name pkg; do
        [[ $pkg != - ]] || continue
        (($# == 0)) || [[ " $* " == *" $name "* ]] || continue
        echo "$pkg"
    done <<<"$NODE_IMAGE_NEEDS"
}

# have_need NAME: NAME of NODE_IMAGE_NEEDS is here.
have_need() {
    case $1 in
    go) use_local_go ;;
    libc.a) [[ $(gcc -print-file-name=libc.a 2>/dev/null) == /* ]] ;;
    libseccomp) pkg-config --exists libseccomp 2>/dev/null ;;
    *) command -v "$1" >/dev/null 2>&1 ;;
    esac
}

# check_prereqs NAME...: fails naming every missing NAME and how to get it,
# then that this is root (debootstrap, chroot) and that the Docker Engine
# answers and is not fakehw-dra's restricted one, whose network namespace
# cannot reach the Debian mirror or the module proxy.
check_prereqs() {
    local name absent=() pkg
    for name in "$@"; do
        have_need "$name" || absent+=("$name")
    done
    if ((${#absent[@]} > 0)); then
        {
            printf '%s: error: missing what it needs: %s\n' "$PROG" "${absent[*]}"
            for name in "${absent[@]}"; do
                case $name in
                docker) printf '  %-12s a Docker Engine: https://docs.docker.com/engine/install/\n' "$name" ;;
                go) printf '  %-12s Go 1.%s or newer: make deps-node-image fetches it from the module proxy\n' "$name" "$NODE_IMAGE_GO_MIN_MINOR" ;;
                *)
                    pkg=$(need_packages "$name")
                    printf '  %-12s Debian package %s: make deps-node-image installs it\n' "$name" "$pkg"
                    ;;
                esac
            done
        } >&2
        exit 1
    fi
    ((EUID == 0)) || die "debootstrap and chroot need root"
    if [[ " $* " == *" docker "* ]]; then
        docker info >/dev/null 2>&1 || die "the Docker Engine does not answer (DOCKER_HOST=${DOCKER_HOST:-unset})"
        [[ $(docker info -f '{{.DefaultRuntime}}' 2>/dev/null) != fakehw-runc ]] ||
            die "this is fakehw-dra's restricted engine (scripts/restricted-host/docker.sh), whose network" \
                "namespace cannot reach the Debian mirror or the Go module proxy: build with the system engine" \
                "(outside docker.sh exec), then copy the image over: scripts/restricted-host/docker.sh load IMAGE"
    fi
}
