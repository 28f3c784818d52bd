#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# scripts/ and the Dockerfile, without a cluster: shellcheck, what deploy.sh
# renders for an image and an overlay, wait-slices.sh against a kubectl
# stand-in, the image's runtime packages, and the Dockerfile shipping what
# the DaemonSet runs.

load helpers

setup() {
    cd "$REPO" || return 1
}

@test "shellcheck: every deployment script and this suite" {
    command -v shellcheck >/dev/null || fail "shellcheck not installed (make deps)"
    run shellcheck -x scripts/common.sh scripts/image.sh scripts/runtime-packages.sh scripts/deploy.sh \
        scripts/wait-slices.sh scripts/kind-up.sh scripts/kind-down.sh manifests/tests/*.bats manifests/tests/*.bash
    assert_success
}

@test "every deployment script is in the Makefile's LINT_SHELL" {
    local s lint
    # shellcheck disable=SC2016 # a make rule, not shell
    lint=$(make -s --no-print-directory -f Makefile -f - print-lint-shell <<<'print-lint-shell: ; @echo $(LINT_SHELL)')
    for s in scripts/*.sh manifests/tests/*.bats manifests/tests/*.bash; do
        [[ $s == scripts/install-deps.sh ]] && continue
        [[ " $lint " == *" $s "* ]] || fail "$s is not in LINT_SHELL: $lint"
    done
}

@test "deploy.sh render puts IMAGE into every container, in every form of reference" {
    require_kustomize
    local digest=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
    IMAGE=registry.example.com:5000/team/fakehw-dra:v1.2 run scripts/deploy.sh render
    assert_success
    run bash -c "grep 'image:' <<<\"\$0\" | sort -u" "$output"
    assert_output "        image: registry.example.com:5000/team/fakehw-dra:v1.2"

    IMAGE=registry.example.com:5000/fakehw-dra@$digest run scripts/deploy.sh render
    assert_success
    run bash -c "grep 'image:' <<<\"\$0\" | sort -u" "$output"
    assert_output "        image: registry.example.com:5000/fakehw-dra@$digest"

    IMAGE=localhost:5000/fakehw-dra run scripts/deploy.sh render
    run bash -c "grep 'image:' <<<\"\$0\" | sort -u" "$output"
    assert_output "        image: localhost:5000/fakehw-dra:latest"

    IMAGE=x/y@sha256:short run scripts/deploy.sh render
    assert_failure
    assert_output --partial "the digest must be sha256:<64 hex digits>"
}

@test "deploy.sh render stamps IMAGE_ID on the pod template only" {
    require_kustomize
    IMAGE_ID=sha256:feed run scripts/deploy.sh render
    assert_success
    run grep -c 'fakehw.example.com/image-id: sha256:feed' <<<"$output"
    assert_output 1
}

@test "deploy.sh render deploys FAKEHW_CONFIG instead of the manifests' fakehw.yaml; a missing one is refused" {
    require_kustomize
    local cm
    OVERLAY=nvidia-compat FAKEHW_CONFIG=conformance/quickstart/fakehw.yaml run scripts/deploy.sh render
    assert_success
    # One fakehw-config ConfigMap, with the file's content, and the DaemonSet mounts it.
    cm=$(python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
cms = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("fakehw-config")]
ds = [d for d in docs if d["kind"] == "DaemonSet"][0]
vols = [v["configMap"]["name"] for v in ds["spec"]["template"]["spec"]["volumes"] if "configMap" in v]
assert len(cms) == 1 and cms[0]["metadata"]["name"] in vols, (cms, vols)
sys.stdout.write(cms[0]["data"]["fakehw.yaml"])' <<<"$output")
    assert_equal "$cm" "$(cat conformance/quickstart/fakehw.yaml)"
    FAKEHW_CONFIG=$BATS_TEST_TMPDIR/none.yaml run scripts/deploy.sh render
    assert_failure
    assert_output --partial "FAKEHW_CONFIG=$BATS_TEST_TMPDIR/none.yaml: no such readable file"
}

@test "deploy.sh driver-name follows the overlay; an unknown overlay is named with those that exist" {
    require_kustomize
    run scripts/deploy.sh driver-name
    assert_success
    assert_output "$DEFAULT_DRIVER"
    OVERLAY=nvidia-compat run scripts/deploy.sh driver-name
    assert_success
    assert_output gpu.nvidia.com
    OVERLAY=../base run scripts/deploy.sh driver-name
    assert_failure
    assert_output --partial "OVERLAY=../base: no such overlay in manifests/overlays (have: nvidia-compat"
    run scripts/deploy.sh bogus
    assert_failure
    assert_output --partial "scripts/deploy.sh apply"
    # The throw-away kustomizations are gone.
    run bash -c 'ls -d build/deploy.* 2>/dev/null'
    assert_output ""
}

# A kubectl that renders with the real one but reaches no cluster, as
# kubectl does with no kubeconfig.
make_kubectl_no_cluster() {
    local real
    real=$(command -v kubectl)
    mkdir -p "$BATS_TEST_TMPDIR/bin"
    cat >"$BATS_TEST_TMPDIR/bin/kubectl" <<EOF
#!/usr/bin/env bash
[[ \$1 == kustomize ]] && exec "$real" "\$@"
echo 'The connection to the server localhost:8080 was refused - did you specify the right host or port?' >&2
exit 1
EOF
    chmod +x "$BATS_TEST_TMPDIR/bin/kubectl"
}

@test "deploy.sh apply and delete say they cannot reach the cluster when there is none" {
    require_kustomize
    make_kubectl_no_cluster
    local verb
    for verb in apply delete; do
        PATH="$BATS_TEST_TMPDIR/bin:$PATH" run scripts/deploy.sh "$verb"
        assert_failure
        assert_output --partial "deploy: error: cannot reach the cluster: The connection to the server localhost:8080 was refused"
        refute_output --partial "did not go within"
    done
}

# A kubectl whose cluster is 1.37 and starts listing resource.k8s.io only
# on the third discovery, as a cluster does right after it started.
make_kubectl_slow_discovery() {
    local t=$BATS_TEST_TMPDIR real
    real=$(command -v kubectl)
    mkdir -p "$t/bin"
    echo 0 >"$t/discoveries"
    cat >"$t/bin/kubectl" <<EOF
#!/usr/bin/env bash
[[ \$1 == kustomize ]] && exec "$real" "\$@"
case "\$*" in
*"version"*) echo '{"serverVersion": {"major": "1", "minor": "37"}}' ;;
*"api-resources"*)
    n=\$(( \$(cat "$t/discoveries") + 1 )); echo \$n >"$t/discoveries"
    ((n >= \${STUB_DISCOVERY_AFTER:-3})) && echo deviceclasses.resource.k8s.io ;;
*) echo "APPLIED \$*"; exit 0 ;;
esac
EOF
    chmod +x "$t/bin/kubectl"
}

@test "deploy.sh waits for a new cluster to list resource.k8s.io, and fails clearly when it never does" {
    require_kustomize
    make_kubectl_slow_discovery
    # Listed on the third look: deploy goes on.
    PATH="$BATS_TEST_TMPDIR/bin:$PATH" DISCOVERY_RETRIES=5 run scripts/deploy.sh apply
    refute_output --partial "does not serve resource.k8s.io"
    assert_equal "$(cat "$BATS_TEST_TMPDIR/discoveries")" 3
    # Never listed: the same clear error as before, after the retries.
    echo 0 >"$BATS_TEST_TMPDIR/discoveries"
    PATH="$BATS_TEST_TMPDIR/bin:$PATH" DISCOVERY_RETRIES=2 STUB_DISCOVERY_AFTER=99 run scripts/deploy.sh apply
    assert_failure
    assert_output --partial "deploy: error: the cluster does not serve resource.k8s.io DeviceClasses"
    assert_equal "$(cat "$BATS_TEST_TMPDIR/discoveries")" 2
}

# A kubectl stand-in for wait-slices.sh: two nodes run the plugin; slices
# appear for node-a at once and for node-b on the third look.
make_kubectl_stub() {
    local t=$BATS_TEST_TMPDIR
    mkdir -p "$t/bin"
    echo 0 >"$t/looks"
    cat >"$t/bin/kubectl" <<EOF
#!/usr/bin/env bash
args="\$*"
case \$args in
*"get daemonset"*go-template*) echo -n "app.kubernetes.io/name=fakehw-dra," ;;
*"get daemonset"*DRIVER_NAME*) echo -n "gpu.fakehw.example.com" ;;
*"get daemonset"*) ;;
*"rollout status"*) echo 'daemon set "fakehw-dra-kubelet-plugin" successfully rolled out' ;;
*"get pods"*nodeName*) printf 'node-a\nnode-b\n' ;;
*"get resourceslices"*jsonpath*)
    n=\$(( \$(cat "$t/looks") + 1 )); echo \$n >"$t/looks"
    if ((n >= 3)); then printf 'node-a\nnode-b\nnode-a\n'; else printf 'node-a\n'; fi ;;
*"get resourceslices"*) echo "SLICES \$args" ;;
*"get deviceclasses"*) echo "CLASSES" ;;
*) echo "unexpected kubectl \$args" >&2; exit 1 ;;
esac
EOF
    chmod +x "$t/bin/kubectl"
}

@test "wait-slices.sh waits until every node with a plugin pod published, showing progress, then summarizes" {
    make_kubectl_stub
    PATH="$BATS_TEST_TMPDIR/bin:$PATH" WAIT_TIMEOUT=30 run scripts/wait-slices.sh
    assert_success
    assert_output --partial "ResourceSlices published on 1/2 nodes; waiting for: node-b"
    assert_output --partial "every node published its devices"
    assert_line "SLICES get resourceslices --field-selector spec.driver=gpu.fakehw.example.com"
    assert_output --partial "CLASSES"
}

@test "wait-slices.sh times out with diagnostics when a node never publishes" {
    make_kubectl_stub
    echo -1000 >"$BATS_TEST_TMPDIR/looks"
    PATH="$BATS_TEST_TMPDIR/bin:$PATH" WAIT_TIMEOUT=3 run scripts/wait-slices.sh
    assert_failure
    assert_output --partial "not every node published ResourceSlices of gpu.fakehw.example.com within 3s"
    assert_output --partial "diagnostics: pods"
}

@test "runtime-packages.sh names the packages of a program's libraries, none for a static one" {
    run scripts/runtime-packages.sh /bin/ls
    assert_success
    assert_line libc6
    run scripts/runtime-packages.sh /bin/busybox
    assert_success
    assert_output ""
    run scripts/runtime-packages.sh /nonexistent
    assert_failure
    assert_output --partial "/nonexistent: not an executable file"
}

@test "Dockerfile: Debian 12 stages, make deps, and the programs the DaemonSet runs" {
    run grep -E '^ARG (BUILD|RUNTIME)_IMAGE=' Dockerfile
    assert_line "ARG BUILD_IMAGE=debian:12"
    assert_line "ARG RUNTIME_IMAGE=debian:12-slim"
    run grep -c 'RUN make deps' Dockerfile
    assert_output 1
    local prog progs
    progs=$(sed -n 's|.*\(/usr/local/bin/[a-z-]*\).*|\1|p' manifests/base/daemonset.yaml | sort -u)
    [[ -n $progs ]] || fail "found no /usr/local/bin programs in the DaemonSet"
    while read -r prog; do
        grep -q "build/image/bin/${prog##*/}" Dockerfile || fail "the DaemonSet runs $prog, which the Dockerfile does not install"
    done <<<"$progs"
    run grep -Ex 'build|\.git' .dockerignore
    assert_line build
    assert_line .git
}

@test "image.sh passes the commit git describes to the build, which has no .git" {
    local t=$BATS_TEST_TMPDIR
    mkdir -p "$t/bin"
    printf '#!/usr/bin/env bash\nprintf "%%s\\n" "$@" >"%s/docker.args"\n' "$t" >"$t/bin/docker"
    chmod +x "$t/bin/docker"
    PATH="$t/bin:$PATH" IMAGE=x/fakehw-dra:t run scripts/image.sh
    assert_success
    run grep -A1 -x -- --build-arg "$t/docker.args"
    assert_line "FAKEHW_GIT_COMMIT=$(git describe --always --dirty)"
    # shellcheck disable=SC2016 # the Dockerfile's text, not an expansion
    run grep -c 'FAKEHW_GIT_COMMIT="$FAKEHW_GIT_COMMIT"' Dockerfile
    assert_output 1
}

# --- node-image: the Go toolchain of a release, refused modules -----------------

# toolchain_for VERSION GO_MOD_TEXT: GOTOOLCHAIN after use_kube_toolchain, with
# a `go` stand-in whose `go mod download -json` names a go.mod of that text
# (and fails, as the real one does when the local Go is too old) and whose Go
# is 1.26.8.
toolchain_for() {
    local t=$BATS_TEST_TMPDIR
    mkdir -p "$t/bin" "$t/cache"
    printf '%s\n' "$2" >"$t/k.mod"
    cat >"$t/bin/go" <<STUB
#!/usr/bin/env bash
case "\$1 \$2" in
"mod download") printf '{\n\t"Path": "k8s.io/kubernetes",\n\t"GoMod": "%s",\n\t"Error": "requires go >= 1.27.0"\n}\n' "$t/k.mod"; exit 1 ;;
"env GOVERSION") echo go1.26.8 ;;
*) exit 2 ;;
esac
STUB
    chmod +x "$t/bin/go"
    PATH="$t/bin:$PATH" NODE_IMAGE_CACHE=$t/cache bash -c '
        set -euo pipefail
        source scripts/node-image/lib.sh
        source scripts/node-image/versions.sh
        parse_kube_version "$1"
        use_kube_toolchain "$1"
        echo "GOTOOLCHAIN=${GOTOOLCHAIN:-unset}"' toolchain_for "$1"
}

@test "node-image: 1.38 asks for Go 1.27 and gets versions.sh's go1.27.3; an older release keeps the local Go" {
    unset GOTOOLCHAIN
    run toolchain_for v1.38.0-beta.0 "$(printf 'module k8s.io/kubernetes\n\ngo 1.27.0\n\ngodebug default=go1.27')"
    assert_success
    assert_line "GOTOOLCHAIN=go1.27.3"
    assert_output --partial "needs Go 1.27.0, this is Go 1.26.8"
    run toolchain_for v1.37.2 "$(printf 'module k8s.io/kubernetes\n\ngo 1.26.0')"
    assert_success
    assert_output "GOTOOLCHAIN=unset"
}

@test "node-image: a minor versions.sh does not name gets its go.mod's toolchain, else its go line" {
    unset GOTOOLCHAIN
    run toolchain_for v1.39.0 "$(printf 'module k8s.io/kubernetes\n\ngo 1.28.0\n\ntoolchain go1.28.2')"
    assert_success
    assert_line "GOTOOLCHAIN=go1.28.2"
    run toolchain_for v1.39.0 "$(printf 'module k8s.io/kubernetes\n\ngo 1.28.0')"
    assert_success
    assert_line "GOTOOLCHAIN=go1.28.0"
    # A toolchain the caller chose is kept.
    GOTOOLCHAIN=go1.28.5 run toolchain_for v1.39.0 "$(printf 'module k8s.io/kubernetes\n\ngo 1.28.0')"
    assert_success
    assert_output "GOTOOLCHAIN=go1.28.5"
}

@test "node-image: refused_modules names the module versions the proxy answered 403 for" {
    local log=$BATS_TEST_TMPDIR/go-get.log
    cat >"$log" <<'LOG'
go: downloading k8s.io/api v0.38.0-beta.0
	k8s.io/apiextensions-api/pkg/apis/apiextensions/v1: k8s.io/apiextensions-api@v0.38.0-beta.0: reading https://proxy.golang.org/k8s.io/apiextensions-api/@v/v0.38.0-beta.0.zip: 403 Forbidden
	server response: This module version is not available.
	sigs.k8s.io/structured-merge-diff/v7/value: sigs.k8s.io/structured-merge-diff/v7@v7.0.1: reading https://proxy.golang.org/sigs.k8s.io/structured-merge-diff/v7/@v/v7.0.1.zip: 403 Forbidden
	k8s.io/apiextensions-api/pkg/client/clientset/clientset: k8s.io/apiextensions-api@v0.38.0-beta.0: reading https://proxy.golang.org/k8s.io/apiextensions-api/@v/v0.38.0-beta.0.zip: 403 Forbidden
	example.com/other@v1.0.0: reading https://proxy.golang.org/example.com/other/@v/v1.0.0.zip: 404 Not Found
LOG
    run bash -c 'source scripts/node-image/lib.sh; refused_modules "$1"' x "$log"
    assert_success
    assert_output "k8s.io/apiextensions-api@v0.38.0-beta.0 sigs.k8s.io/structured-merge-diff/v7@v7.0.1"
}

@test "upgrade-test.sh checks its versions and the FROM node image before touching a cluster" {
    run scripts/upgrade-test.sh
    assert_failure
    assert_output --partial "usage: upgrade-test.sh FROM TO"
    run scripts/upgrade-test.sh 1.36.3 v1.37.2
    assert_failure
    assert_output --partial "FROM=1.36.3: expected v1.MINOR.PATCH"
    run scripts/upgrade-test.sh v1.36.3 v1.38.0-beta.0
    assert_failure
    assert_output --partial "kubeadm upgrades one minor at a time (TO must be 1.36 or 1.37)"
    run scripts/upgrade-test.sh v1.37.2 v1.36.3
    assert_failure
    assert_output --partial "one minor at a time"
    # A stand-in docker that knows no image.
    mkdir -p "$BATS_TEST_TMPDIR/bin"
    printf '#!/bin/sh\nexit 1\n' >"$BATS_TEST_TMPDIR/bin/docker"
    printf '#!/bin/sh\nexit 0\n' >"$BATS_TEST_TMPDIR/bin/kind"
    chmod +x "$BATS_TEST_TMPDIR/bin/docker" "$BATS_TEST_TMPDIR/bin/kind"
    PATH=$BATS_TEST_TMPDIR/bin:$PATH run scripts/upgrade-test.sh v1.36.3 v1.37.2
    assert_failure
    assert_output --partial "node image fakehw-dra/kind-node:v1.36.3 is not in the engine's store: make node-image K8S_VERSION=v1.36.3"
}
