#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Go programs Debian 12 does not package, each built from
# source at a pinned version with Go, from the Go module proxy:
#   helm, kustomize  the chart's lint and render tests, the kustomizations to
#                    compare the chart with (make deps)
#   kind, kubectl    a kind cluster and the suite against it (make deps-cluster):
#                    kind with `go install`; kubectl from the k8s.io/kubernetes
#                    module (not installable with `go install`: its staging
#                    modules are replaced by local paths) by
#                    scripts/conformance-image/kubectl.sh, which make node-image
#                    shares
#   go               no program: makes sure a Go toolchain is here, for the
#                    node-image scripts (make deps-node-image)
#
#   scripts/install-go-tools.sh [--dry-run] [TOOL...]    (default: helm kustomize)
#
# A tool already installed at its version is left alone (kind: this version or
# newer; kubectl: 1.KUBECTL_MIN_MINOR or newer).  --dry-run installs nothing:
# it says what is there and what would be built, and asks the module proxy
# for each pinned module version, so a version the proxy does not serve fails
# here in a second instead of minutes into a build.  The Go toolchain: `go` on
# PATH or /usr/local/go/bin/go when it is new enough, else the pinned
# toolchain fetched once from the module proxy (golang.org/toolchain) into
# $GO_TOOLCHAIN_DIR and checked against its pinned SHA-256 (scripts/node-image
# looks there too).
#
# Environment:
#   TOOLS_BIN         where the programs go (default /usr/local/bin)
#   GO_TOOLCHAIN_DIR  where a fetched toolchain goes (default /usr/local/lib/fakehw-dra-go)
#   GOPROXY           the module proxy (default https://proxy.golang.org)
#   GO_TOOLS_CACHE    a Go build cache to reuse (default: a fresh one, removed after)
#   KUBECTL_VERSION   the kubectl to build (default v1.37.2)
#   NODE_IMAGE_CACHE  where kubectl.sh keeps its build (default ~/.cache/fakehw-dra/node-image)
set -euo pipefail

HELM_VERSION=v3.22.0       # needs go 1.26
HELM_K8S_MINOR=37          # its k8s.io/client-go is v0.37
KUSTOMIZE_VERSION=v5.8.2   # needs go 1.26
# The kind release that built the node image kind/cluster-1.37.yaml pins,
# the default Kubernetes version's (scripts/kind-up.sh asks for it from 1.37).
KIND_VERSION=v0.33.0
# The suite's oldest kubectl (conformance/cluster/lib/checks.bash); one at
# least this new is kept, else KUBECTL_VERSION is built.
KUBECTL_MIN_MINOR=34
GO_MIN_MINOR=26
GO_TOOLCHAIN=go1.26.8
GO_TOOLCHAIN_SHA256=30c2b1bf7dcc88d3eb0a1364e47ddd9128edb3110a30e8a0ef61cd5856b31de7 # linux-amd64

TOOLS_BIN=${TOOLS_BIN:-/usr/local/bin}
KUBECTL_VERSION=${KUBECTL_VERSION:-v1.37.2}
export GOPROXY=${GOPROXY:-https://proxy.golang.org}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# go_ok, local_go and GO_TOOLCHAIN_DIR.
# shellcheck source=node-image/go-toolchain.sh source-path=SCRIPTDIR
source "$HERE/node-image/go-toolchain.sh"

say() { printf 'install-go-tools: %s\n' "$*"; }
die() {
    printf 'install-go-tools: error: %s\n' "$*" >&2
    exit 1
}

# version_at_least HAVE WANT: dotted versions, without a leading v.
version_at_least() {
    [[ $(printf '%s\n%s\n' "$2" "$1" | sort -t. -k1,1n -k2,2n -k3,3n | head -n1) == "$2" ]]
}

# installed TOOL: prints the version of TOOL in $TOOLS_BIN (empty: none).
installed() {
    case $1 in
    helm) "$TOOLS_BIN/helm" version --short 2>/dev/null ;;
    kustomize) "$TOOLS_BIN/kustomize" version 2>/dev/null ;;
    # "kind v0.33.0 go1.26.8 linux/amd64"
    kind) "$TOOLS_BIN/kind" version 2>/dev/null | sed -n 's/^kind \(v[0-9.]*\).*/\1/p' ;;
    kubectl) "$TOOLS_BIN/kubectl" version --client -o json 2>/dev/null |
        sed -n 's/^ *"gitVersion": "\(v[^"]*\)",\{0,1\}$/\1/p' | head -n1 ;;
    esac
}

# have TOOL: the installed TOOL is good enough.
have() {
    local v
    v=$(installed "$1") || true
    [[ -n $v ]] || return 1
    case $1 in
    helm) [[ $v == "$HELM_VERSION"* ]] ;;
    kustomize) [[ $v == "$KUSTOMIZE_VERSION"* ]] ;;
    kind) version_at_least "${v#v}" "${KIND_VERSION#v}" ;;
    kubectl) [[ $v =~ ^v1\.([0-9]+)\. ]] && ((BASH_REMATCH[1] >= KUBECTL_MIN_MINOR)) ;;
    esac
}

# wanted TOOL: what would be installed, for the messages.
wanted() {
    case $1 in
    helm) echo "helm $HELM_VERSION" ;;
    kustomize) echo "kustomize $KUSTOMIZE_VERSION" ;;
    kind) echo "kind $KIND_VERSION" ;;
    kubectl) echo "kubectl $KUBECTL_VERSION" ;;
    esac
}

# module TOOL: the module@version it is built from.
module() {
    case $1 in
    helm) echo "helm.sh/helm/v3@$HELM_VERSION" ;;
    kustomize) echo "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION" ;;
    kind) echo "sigs.k8s.io/kind@$KIND_VERSION" ;;
    kubectl) echo "k8s.io/kubernetes@$KUBECTL_VERSION" ;;
    esac
}

# find_go: prints a usable go, fetching the pinned toolchain if needed.
find_go() {
    local_go && return 0
    [[ $(uname -m) == x86_64 ]] || die "no Go 1.$GO_MIN_MINOR+ here and the pinned toolchain is linux-amd64 only; install Go 1.$GO_MIN_MINOR+"
    if ! command -v curl >/dev/null || ! command -v unzip >/dev/null; then
        die "curl and unzip are needed to fetch the Go toolchain (make deps installs them)"
    fi
    local zip url
    zip=$(mktemp) || die "mktemp failed"
    url=$GOPROXY/golang.org/toolchain/@v/v0.0.1-$GO_TOOLCHAIN.linux-amd64.zip
    say "fetching the Go toolchain $GO_TOOLCHAIN from $url" >&2
    curl -fsSL --retry 3 -o "$zip" "$url" || die "cannot download $url"
    echo "$GO_TOOLCHAIN_SHA256  $zip" | sha256sum -c --quiet - >&2 ||
        die "the toolchain download does not have the pinned SHA-256"
    rm -rf "$GO_TOOLCHAIN_DIR.tmp"
    mkdir -p "$GO_TOOLCHAIN_DIR.tmp" || die "cannot create $GO_TOOLCHAIN_DIR.tmp"
    unzip -q "$zip" -d "$GO_TOOLCHAIN_DIR.tmp" || die "cannot unpack the toolchain"
    rm -f "$zip"
    # The module zip holds golang.org/toolchain@.../{bin,pkg,src,...}.
    mv "$GO_TOOLCHAIN_DIR.tmp"/golang.org/toolchain@* "$GO_TOOLCHAIN_DIR.tmp/go" || die "unexpected toolchain layout"
    chmod -R u+w,a+rX "$GO_TOOLCHAIN_DIR.tmp"
    chmod a+x "$GO_TOOLCHAIN_DIR.tmp"/go/bin/* "$GO_TOOLCHAIN_DIR.tmp"/go/pkg/tool/*/* 2>/dev/null || true
    rm -rf "$GO_TOOLCHAIN_DIR"
    mv "$GO_TOOLCHAIN_DIR.tmp" "$GO_TOOLCHAIN_DIR" || die "cannot install $GO_TOOLCHAIN_DIR"
    go_ok "$GO_TOOLCHAIN_DIR/go/bin/go" || die "the fetched toolchain does not run"
    echo "$GO_TOOLCHAIN_DIR/go/bin/go"
}

# go_install MODULE@VERSION [LDFLAGS]: into $TOOLS_BIN.  A private module
# and build cache: nothing of the user's Go setup is used or changed.
# GOTOOLCHAIN=local: exactly this toolchain.
go_install() {
    say "go install $1 (this takes a few minutes)"
    GOBIN=$TOOLS_BIN GOPATH=$build/gopath GOCACHE=${GO_TOOLS_CACHE:-$build/cache} GOTOOLCHAIN=local \
        CGO_ENABLED=0 "$GO" install -trimpath -ldflags "${2:-}" "$1" || die "go install $1 failed"
}

# resolve MODULE@VERSION: the module proxy serves exactly that version.
resolve() {
    local got
    got=$(cd "$build" && GOPATH=$build/gopath GOFLAGS=-mod=mod GOTOOLCHAIN=local \
        "$GO" list -m -f '{{.Version}}' "$1" 2>&1) ||
        die "the module proxy ($GOPROXY) does not serve $1: ${got##*$'\n'}"
    [[ $got == "${1##*@}" ]] || die "the module proxy resolves $1 to $got"
}

install_tool() {
    case $1 in
    helm)
        # What helm's own Makefile stamps in: its version, and the Kubernetes
        # version of its client-go (v0.37 -> 1.37), which `helm template` and
        # `helm lint` assume for a chart's kubeVersion.
        go_install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$HELM_K8S_MINOR \
-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$HELM_K8S_MINOR"
        ;;
    kustomize) go_install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION" ;;
    kind) go_install "sigs.k8s.io/kind@$KIND_VERSION" ;;
    kubectl)
        say "building kubectl $KUBECTL_VERSION from k8s.io/kubernetes (scripts/conformance-image/kubectl.sh; minutes)"
        PATH=$(dirname "$GO"):$PATH "$HERE/conformance-image/kubectl.sh" "$KUBECTL_VERSION" "$TOOLS_BIN/kubectl" ||
            die "building kubectl $KUBECTL_VERSION failed (see above)"
        ;;
    esac
}

dry_run=0
if [[ ${1:-} == --dry-run ]]; then
    dry_run=1
    shift
fi
(($# > 0)) || set -- helm kustomize
for t in "$@"; do
    case $t in
    helm | kustomize | kind | kubectl | go) ;;
    *) die "unknown tool $t (helm, kustomize, kind, kubectl, go)" ;;
    esac
done
[[ $KUBECTL_VERSION =~ ^v1\.([0-9]+)\.[0-9]+(-(alpha|beta|rc)\.[0-9]+)?$ ]] ||
    die "KUBECTL_VERSION=$KUBECTL_VERSION: expected v1.MINOR.PATCH"
((BASH_REMATCH[1] >= KUBECTL_MIN_MINOR)) ||
    die "KUBECTL_VERSION=$KUBECTL_VERSION: the suite needs kubectl 1.$KUBECTL_MIN_MINOR or newer"

need=()
for t in "$@"; do
    [[ $t == go ]] && continue
    if have "$t"; then
        say "$t $(installed "$t") already installed in $TOOLS_BIN"
    else
        need+=("$t")
    fi
done

if ((dry_run)); then
    GO=$(local_go) || die "no Go 1.$GO_MIN_MINOR+ here to ask the module proxy with (without --dry-run, the pinned $GO_TOOLCHAIN is fetched)"
    say "Go: $GO ($("$GO" env GOVERSION))"
    build=$(mktemp -d) || die "mktemp failed"
    trap 'chmod -R u+w "$build" 2>/dev/null; rm -rf "$build"' EXIT
    for t in "$@"; do
        [[ $t == go ]] && continue
        resolve "$(module "$t")"
        if [[ " ${need[*]} " == *" $t "* ]]; then
            say "would build $(wanted "$t") into $TOOLS_BIN from $(module "$t") (served by $GOPROXY)"
        else
            say "$(module "$t") is served by $GOPROXY"
        fi
    done
    exit 0
fi

if [[ " $* " == *" go "* ]] || ((${#need[@]} > 0)); then
    GO=$(find_go)
fi
if [[ " $* " == *" go "* ]]; then
    say "Go: $GO ($("$GO" env GOVERSION))"
fi
((${#need[@]} > 0)) || exit 0
mkdir -p "$TOOLS_BIN" || die "cannot create $TOOLS_BIN"
build=$(mktemp -d) || die "mktemp failed"
trap 'chmod -R u+w "$build" 2>/dev/null; rm -rf "$build"' EXIT
for t in "${need[@]}"; do
    install_tool "$t"
    have "$t" || die "$(wanted "$t") is not in $TOOLS_BIN after the install (found: $(installed "$t" || true))"
done
say "installed ${need[*]} in $TOOLS_BIN"
# The one on PATH is the one the scripts run.
for t in "${need[@]}"; do
    if [[ $(command -v "$t" 2>/dev/null) != "$TOOLS_BIN/$t" ]]; then
        say "note: $t on PATH is $(command -v "$t" 2>/dev/null || echo none), not $TOOLS_BIN/$t: put $TOOLS_BIN first on PATH"
    fi
done
