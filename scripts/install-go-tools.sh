#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Go programs the tests need and Debian 12 does not package:
# helm (the chart's lint and render test) and kustomize (the kustomizations
# to compare the chart with, where no kubectl is installed).  Both are built
# from source at pinned versions with `go install`, from the Go module proxy.
#
#   scripts/install-go-tools.sh          (make deps runs it)
#
# A tool already installed at its version is left alone.  The Go toolchain:
# `go` on PATH or /usr/local/go/bin/go when it is new enough, else the pinned
# toolchain fetched once from the module proxy (golang.org/toolchain) into
# $GO_TOOLCHAIN_DIR and checked against its pinned SHA-256.
#
# Environment:
#   TOOLS_BIN         where the programs go (default /usr/local/bin)
#   GO_TOOLCHAIN_DIR  where a fetched toolchain goes (default /usr/local/lib/fakehw-dra-go)
#   GOPROXY           the module proxy (default https://proxy.golang.org)
#   GO_TOOLS_CACHE    a Go build cache to reuse (default: a fresh one, removed after)
set -euo pipefail

HELM_VERSION=v3.22.0       # needs go 1.26
HELM_K8S_MINOR=37          # its k8s.io/client-go is v0.37
KUSTOMIZE_VERSION=v5.8.2   # needs go 1.26
GO_MIN_MINOR=26
GO_TOOLCHAIN=go1.26.8
GO_TOOLCHAIN_SHA256=30c2b1bf7dcc88d3eb0a1364e47ddd9128edb3110a30e8a0ef61cd5856b31de7 # linux-amd64

TOOLS_BIN=${TOOLS_BIN:-/usr/local/bin}
GO_TOOLCHAIN_DIR=${GO_TOOLCHAIN_DIR:-/usr/local/lib/fakehw-dra-go}
export GOPROXY=${GOPROXY:-https://proxy.golang.org}

say() { printf 'install-go-tools: %s\n' "$*"; }
die() {
    printf 'install-go-tools: error: %s\n' "$*" >&2
    exit 1
}

# have TOOL VERSION: the tool is installed at that version.
have() {
    local out
    case $1 in
    helm) out=$("$TOOLS_BIN/helm" version --short 2>/dev/null) || return 1 ;;
    kustomize) out=$("$TOOLS_BIN/kustomize" version 2>/dev/null) || return 1 ;;
    esac
    [[ $out == "$2"* ]]
}

# go_ok GO: GO runs and is 1.$GO_MIN_MINOR or newer.
go_ok() {
    local v
    v=$("$1" env GOVERSION 2>/dev/null) || return 1
    [[ $v =~ ^go1\.([0-9]+) ]] && ((BASH_REMATCH[1] >= GO_MIN_MINOR))
}

# find_go: prints a usable go, fetching the pinned toolchain if needed.
find_go() {
    local g
    for g in "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go "$GO_TOOLCHAIN_DIR/go/bin/go"; do
        if [[ -n $g && -x $g ]] && go_ok "$g"; then
            echo "$g"
            return 0
        fi
    done
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

need_helm=0 need_kustomize=0
have helm "$HELM_VERSION" || need_helm=1
have kustomize "$KUSTOMIZE_VERSION" || need_kustomize=1
if ((!need_helm && !need_kustomize)); then
    say "helm $HELM_VERSION and kustomize $KUSTOMIZE_VERSION already installed in $TOOLS_BIN"
    exit 0
fi
GO=$(find_go)
mkdir -p "$TOOLS_BIN" || die "cannot create $TOOLS_BIN"
build=$(mktemp -d) || die "mktemp failed"
trap 'chmod -R u+w "$build" 2>/dev/null; rm -rf "$build"' EXIT
if ((need_helm)); then
    # What helm's own Makefile stamps in: its version, and the Kubernetes
    # version of its client-go (v0.37 -> 1.37), which `helm template` and
    # `helm lint` assume for a chart's kubeVersion.
    go_install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$HELM_K8S_MINOR \
-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$HELM_K8S_MINOR"
fi
if ((need_kustomize)); then
    go_install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
fi
have helm "$HELM_VERSION" || die "helm $HELM_VERSION is not in $TOOLS_BIN after the install"
have kustomize "$KUSTOMIZE_VERSION" || die "kustomize $KUSTOMIZE_VERSION is not in $TOOLS_BIN after the install"
say "installed helm $HELM_VERSION and kustomize $KUSTOMIZE_VERSION in $TOOLS_BIN"
