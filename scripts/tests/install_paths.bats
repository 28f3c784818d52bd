#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Each install path of docs/install.md against what its scripts run: the
# node-image scripts need nothing that make deps-node-image does not
# install, the kind and kubectl versions that docs, hints and make
# deps-cluster name are those kind-up and the suite ask for, and the dry run
# and the checks each path does first say what is missing.  No cluster, no
# container, no network (make deps-check asks the module proxy).

load helpers

setup() {
    in_repo
}

# The NAME column of NODE_IMAGE_NEEDS.
needs_names() {
    scripts/node-image/prereqs.sh needs | cut -d' ' -f1
}

# package_of FILE: the Debian package that installed FILE (merged /usr: the
# package may list it under /bin or /lib).
package_of() {
    local f=$1 p
    for p in "$f" "$(readlink -f "$f")" "${f#/usr}" "$(readlink -f "$f" | sed 's|^/usr||')"; do
        dpkg-query -S "$p" 2>/dev/null | sed -n '1s/:.*//p' | grep . && return 0
    done
    return 1
}

# A Debian system has every package of priority required.
everywhere() {
    [[ $(dpkg-query -W -f='${Priority}' "$1" 2>/dev/null) == required ]]
}

@test "node-image: every command its scripts run is in NODE_IMAGE_NEEDS or on every Debian system" {
    command -v shfmt >/dev/null || fail "shfmt not installed (make deps)"
    local needs name where path pkg bad=''
    needs=$(needs_names)
    while read -r name where; do
        grep -qxF -- "$name" <<<"$needs" && continue
        case $(bash --norc --noprofile -c 'type -t "$1"' _ "$name") in
        builtin | keyword) continue ;;
        file) ;;
        *)
            bad+="$name ($where): not a command on this machine, and not in NODE_IMAGE_NEEDS"$'\n'
            continue
            ;;
        esac
        path=$(type -P "$name")
        if pkg=$(package_of "$path"); then
            everywhere "$pkg" && continue
            bad+="$name ($where): from Debian package $pkg, which is not in NODE_IMAGE_NEEDS (scripts/node-image/lib.sh)"$'\n'
        else
            bad+="$name ($where): $path is from no Debian package, and not in NODE_IMAGE_NEEDS"$'\n'
        fi
    done < <(python3 scripts/tests/shell_commands.py scripts/node-image/*.sh scripts/conformance-image/kubectl.sh | sort -u -k1,1)
    [[ -z $bad ]] || fail "commands of the node-image scripts that make deps-node-image does not install:"$'\n'"$bad"
}

@test "node-image: the command finder sees through pipes, \$(...), wrappers and functions, not into sh -c or chroot" {
    cat >"$BATS_TEST_TMPDIR/s.sh" <<'EOF'
f() { debootstrap x; }
v=$(env A=1 zstd -d <in | pigz -c) || xz -V
docker exec "$id" bash -c 'pkill containerd'
chroot "$root" dpkg-query -W
"$GO" build
cat <<DOCKERFILE
FROM scratch
DOCKERFILE
EOF
    run python3 scripts/tests/shell_commands.py "$BATS_TEST_TMPDIR/s.sh"
    assert_success
    run cut -d' ' -f1 <<<"$output"
    assert_output "debootstrap
env
zstd
pigz
xz
docker
chroot
cat"
}

@test "node-image: each need comes from the package NODE_IMAGE_NEEDS names for it" {
    local name pkg file got
    while read -r name pkg; do
        [[ $pkg != - ]] || continue
        case $name in
        libseccomp) file=$(pkg-config --variable=pcfiledir libseccomp 2>/dev/null)/libseccomp.pc ;;
        libc.a) file=$(gcc -print-file-name=libc.a 2>/dev/null) ;;
        *) file=$(type -P "$name") ;;
        esac
        [[ -e $file ]] || fail "$name is not installed here (make deps runs make deps-node-image, which installs $pkg)"
        got=$(package_of "$file") || fail "$file ($name) is from no Debian package"
        [[ $got == "$pkg" ]] || fail "$name ($file) comes from Debian package $got, not $pkg as NODE_IMAGE_NEEDS says"
    done < <(scripts/node-image/prereqs.sh needs)
}

@test "make deps runs deps-node-image, which installs the packages of NODE_IMAGE_NEEDS and Go" {
    run make -n deps
    assert_success
    # shellcheck disable=SC2016 # make's recipe, as it prints it
    assert_line 'scripts/install-deps.sh $(scripts/node-image/prereqs.sh packages)'
    assert_line 'scripts/install-go-tools.sh go'
    run scripts/node-image/prereqs.sh packages
    assert_output "gcc
libc6-dev
pkgconf
libseccomp-dev
debootstrap"
    # The Go the node-image scripts accept is the one install-go-tools.sh fetches.
    run bash -c 'source scripts/node-image/lib.sh; echo "$NODE_IMAGE_GO_MIN_MINOR"'
    assert_output "$(sed -n 's/^GO_MIN_MINOR=//p' scripts/install-go-tools.sh)"
}

# A PATH with what the node-image checks need to run, less TOOLS, and a
# docker stand-in whose engine's default runtime is $STUB_RUNTIME.
stub_path() {
    local bin=$BATS_TEST_TMPDIR/bin t
    mkdir -p "$bin"
    for t in bash env dirname basename sed cut cat grep mkdir sort head tr; do
        ln -sf "$(type -P "$t")" "$bin/$t"
    done
    for t in gcc pkg-config debootstrap go; do
        [[ " $* " == *" $t "* ]] && continue
        ln -sf "$(type -P "$t")" "$bin/$t"
    done
    cat >"$bin/docker" <<'EOF'
#!/usr/bin/env bash
echo "docker $*" >>"${STUB_LOG:-/dev/null}"
case "$*" in
"info -f {{.DefaultRuntime}}") echo "${STUB_RUNTIME:-runc}" ;;
info) ;;
*) echo "docker stand-in: unexpected docker $*" >&2; exit 1 ;;
esac
EOF
    chmod +x "$bin/docker"
    echo "$bin"
}

@test "node-image: a build checks everything first and names what is missing with its deps target" {
    ((EUID == 0)) || skip "the checks want root (debootstrap)"
    local bin
    bin=$(stub_path pkg-config debootstrap)
    STUB_LOG=$BATS_TEST_TMPDIR/docker.log PATH=$bin run scripts/node-image/node-image.sh v1.37.2
    assert_failure
    assert_line "node-image: error: missing what it needs: pkg-config libseccomp debootstrap"
    assert_line --regexp '^  libseccomp +Debian package libseccomp-dev: make deps-node-image installs it$'
    assert_line --regexp '^  debootstrap +Debian package debootstrap: make deps-node-image installs it$'
    # Before any build step: the engine was not even asked.
    [[ ! -e $BATS_TEST_TMPDIR/docker.log ]] || fail "docker was called: $(cat "$BATS_TEST_TMPDIR/docker.log")"
    # make base-image needs debootstrap and an engine.
    bin=$(stub_path debootstrap)
    PATH=$bin run scripts/node-image/debian-rootfs.sh fakehw-dra/debian:12
    assert_failure
    assert_output --partial "missing what it needs: debootstrap"
}

@test "node-image: it refuses fakehw-dra's restricted engine, which reaches no mirror" {
    ((EUID == 0)) || skip "the checks want root (debootstrap)"
    command -v debootstrap >/dev/null || fail "debootstrap not installed (make deps)"
    local bin
    bin=$(stub_path)
    STUB_RUNTIME=fakehw-runc PATH=$bin run scripts/node-image/prereqs.sh check
    assert_failure
    assert_output --partial "this is fakehw-dra's restricted engine"
    assert_output --partial "then copy the image over: scripts/restricted-host/docker.sh load IMAGE"
    PATH=$bin run scripts/node-image/prereqs.sh check
    assert_success
}

@test "deps-check: what make node-image needs, checked without asking a Docker Engine" {
    ((EUID == 0)) || skip "the checks want root (debootstrap)"
    command -v debootstrap >/dev/null || fail "debootstrap not installed (make deps)"
    local bin
    # An engine that does not answer (CI has none of its own).
    bin=$(stub_path)
    printf '#!/bin/sh\necho "Cannot connect to the Docker daemon" >&2\nexit 1\n' >"$bin/docker"
    PATH=$bin run scripts/node-image/prereqs.sh check
    assert_failure
    assert_output --partial "the Docker Engine does not answer"
    PATH=$bin run scripts/node-image/prereqs.sh check-tools
    assert_success
    assert_output --partial "everything it needs but the Docker Engine is here"
}

# The kind release kind-up asks for at Kubernetes minor $1 (its case table).
kind_up_min_kind() {
    # shellcheck disable=SC2016 # a sed address, not an expansion
    minor=$1 bash -c "$(sed -n '/^case \$minor in$/,/^esac$/p' scripts/kind-up.sh)"'
        echo "$MIN_KIND_VERSION"'
}

@test "deps-cluster: kind is the release kind-up asks for at the default version, everywhere it is named" {
    local default minor want
    default=$(sed -n 's/^K8S_VERSION *?= *//p' manifests/build.mk)
    minor=$(sed -E 's/^v([0-9]+\.[0-9]+)\..*/\1/' <<<"$default")
    want=$(kind_up_min_kind "$minor")
    [[ $want =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "no MIN_KIND_VERSION for $minor in kind-up.sh: '$want'"
    # What make deps-cluster installs, and the node layout make node-image copies.
    run sed -n 's/^KIND_VERSION=//p' scripts/install-go-tools.sh
    assert_output "v$want"
    run bash -c 'source scripts/node-image/versions.sh; echo "$KIND_MODULE_VERSION"'
    assert_output "v$want"
    # What the user reads: make help, kind-up's hint, the README, docs/install.md.
    run make -s help
    assert_line --regexp "^  deps-cluster +kind v$want and kubectl "
    run bash -c 'source scripts/common.sh; install_hint kind'
    assert_output --partial "kind v$want "
    assert_output --partial "go install sigs.k8s.io/kind@v$want"
    run grep -F "| **main job**" README.md
    assert_output --partial "kind](https://kind.sigs.k8s.io/) ${want%.*}+"
    run sed -n '/^## Quick start on kind/,/^### /p' docs/install.md
    assert_output --partial "kind](https://kind.sigs.k8s.io/docs/user/quick-start/#installation)
v$want"
    assert_output --partial "make deps-cluster"
    assert_output --partial "go install sigs.k8s.io/kind@v$want"
    # The per-version table names, for the default minor, the kind release
    # that built its image.
    run grep -E '^\| kind node image \|' docs/install.md
    assert_output --partial "\`${default}\` (kind v$want)"
}

@test "deps-cluster: the kubectl it builds is one the suite accepts, and the docs say so" {
    local min
    min=$(sed -n 's/^KUBECTL_MIN_MINOR=//p' conformance/cluster/lib/checks.bash)
    [[ -n $min ]] || fail "no KUBECTL_MIN_MINOR in conformance/cluster/lib/checks.bash"
    run sed -n 's/^KUBECTL_MIN_MINOR=//p' scripts/install-go-tools.sh
    assert_output "$min"
    local built
    built=$(sed -n 's/^KUBECTL_VERSION *?= *//p' scripts/build.mk)
    [[ $built =~ ^v1\.([0-9]+)\. ]] && ((BASH_REMATCH[1] >= min)) || fail "KUBECTL_VERSION $built is older than 1.$min"
    # shellcheck disable=SC2016 # a sed pattern
    run sed -n 's/^KUBECTL_VERSION=\${KUBECTL_VERSION:-\(.*\)}$/\1/p' scripts/install-go-tools.sh
    assert_output "$built"
    run make -n deps-cluster
    assert_output "KUBECTL_VERSION=\"$built\" scripts/install-go-tools.sh kind kubectl"
    run grep -F "| **main job**" README.md
    assert_output --partial "kubectl 1.$min+"
    run bash -c 'source scripts/common.sh; install_hint kubectl'
    assert_output --partial "kubectl 1.$min or newer: make deps-cluster"
}

# A go stand-in for the dry run: its version, and a module proxy that serves
# every version but those in $STUB_REFUSED.
stub_go() {
    mkdir -p "$BATS_TEST_TMPDIR/gobin"
    cat >"$BATS_TEST_TMPDIR/gobin/go" <<'EOF'
#!/usr/bin/env bash
case "$1 $2" in
"env GOVERSION") echo go1.26.8 ;;
"list -m")
    m=${!#}
    [[ " ${STUB_REFUSED:-} " != *" $m "* ]] ||
        { echo "go: $m: reading https://proxy.golang.org/${m%@*}/@v/${m#*@}.info: 404 Not Found" >&2; exit 1; }
    echo "${m#*@}" ;;
*) echo "go stand-in: unexpected go $*" >&2; exit 1 ;;
esac
EOF
    chmod +x "$BATS_TEST_TMPDIR/gobin/go"
}

@test "deps-cluster: the dry run builds nothing, says what it would, and fails on a version the proxy refuses" {
    stub_go
    local tools=$BATS_TEST_TMPDIR/tools
    mkdir -p "$tools"
    PATH=$BATS_TEST_TMPDIR/gobin:$PATH TOOLS_BIN=$tools GO_TOOLCHAIN_DIR=/nonexistent \
        run scripts/install-go-tools.sh --dry-run kind kubectl
    assert_success
    assert_line "install-go-tools: would build kind v0.33.0 into $tools from sigs.k8s.io/kind@v0.33.0 (served by https://proxy.golang.org)"
    assert_line --partial "install-go-tools: would build kubectl v1.37.2 into $tools from k8s.io/kubernetes@v1.37.2"
    run ls -A "$tools"
    assert_output ""
    # A kubectl the suite accepts is kept; a kind at least as new too.
    printf '#!/bin/sh\necho "kind v0.33.1 go1.26.8 linux/amd64"\n' >"$tools/kind"
    printf '#!/bin/sh\nprintf "{\\n  \\"clientVersion\\": {\\n    \\"gitVersion\\": \\"v1.34.3\\",\\n"\n' >"$tools/kubectl"
    chmod +x "$tools/kind" "$tools/kubectl"
    PATH=$BATS_TEST_TMPDIR/gobin:$PATH TOOLS_BIN=$tools run scripts/install-go-tools.sh --dry-run kind kubectl
    assert_success
    assert_line "install-go-tools: kind v0.33.1 already installed in $tools"
    assert_line "install-go-tools: kubectl v1.34.3 already installed in $tools"
    STUB_REFUSED=sigs.k8s.io/kind@v0.33.0 PATH=$BATS_TEST_TMPDIR/gobin:$PATH TOOLS_BIN=$tools \
        run scripts/install-go-tools.sh --dry-run kind
    assert_failure
    assert_output --partial "does not serve sigs.k8s.io/kind@v0.33.0: go: sigs.k8s.io/kind@v0.33.0: reading"
    KUBECTL_VERSION=v1.33.0 run scripts/install-go-tools.sh --dry-run kubectl
    assert_failure
    assert_output --partial "KUBECTL_VERSION=v1.33.0: the suite needs kubectl 1.34 or newer"
}

@test "docs/install.md names the deps target of each path before its first command" {
    run sed -n '/^### Without a registry/,/^### Restricted hosts/p' docs/install.md
    assert_output --partial "make deps-node-image"
    # The node image is built with the system engine and loaded into the
    # restricted one, never built inside it.
    run sed -n '/^### Restricted hosts/,/^## Deploying on an existing cluster/p' docs/install.md
    assert_output --partial "scripts/restricted-host/docker.sh load"
    refute_output --partial "docker.sh exec make node-image"
    # The suite's image where no registry serves busybox.
    assert_output --partial "kind load docker-image fakehw-dra/busybox"
}
