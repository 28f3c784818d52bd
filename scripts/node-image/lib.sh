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
