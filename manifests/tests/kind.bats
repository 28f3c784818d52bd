#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# kind/ configs and scripts/kind-up.sh, without Docker or kind: the configs
# are checked against each release's feature gates and kind's v1alpha4
# schema, and kind-up.sh runs against stand-ins for docker, kind and
# kubectl that record how they were called.

load helpers

setup() {
    cd "$REPO" || return 1
}

# refused_edit CONFIG SED MESSAGE...: CONFIG edited by the sed expression
# SED, under its own name (the name says the release), fails the check with
# every MESSAGE in the output.
refused_edit() {
    local bad=$BATS_TEST_TMPDIR/${1##*/} message
    sed "$2" "$1" >"$bad"
    run check kind-config "$bad"
    assert_failure
    for message in "${@:3}"; do
        assert_output --partial "$message"
    done
}

@test "kind configs: one per supported minor (1.34, 1.35, 1.36, 1.37, 1.38)" {
    run bash -c 'ls kind/cluster-*.yaml'
    assert_success
    assert_output "kind/cluster-1.34.yaml
kind/cluster-1.35.yaml
kind/cluster-1.36.yaml
kind/cluster-1.37.yaml
kind/cluster-1.38.yaml"
}

@test "kind configs: gates that exist in their release, served APIs, pinned images, CDI patches" {
    run check kind-config kind/cluster-*.yaml
    assert_success
    assert_output ""
}

@test "kind config check refuses gates and APIs of another release" {
    refused_edit kind/cluster-1.34.yaml 's|^  DRAAdminAccess: true |  DRAListTypeAttributes: true |' "feature gate DRAListTypeAttributes does not exist in Kubernetes 1.34"

    refused_edit kind/cluster-1.36.yaml 's|^  DRADeviceTaints: true |  DRAAdminAccess: true |' "feature gate DRAAdminAccess is GA and locked in 1.36"

    refused_edit kind/cluster-1.36.yaml 's|resource.k8s.io/v1beta2: "true"|resource.k8s.io/v1alpha3: "true"|' "runtimeConfig resource.k8s.io/v1alpha3 is not an API version Kubernetes 1.36 can serve" "resource.k8s.io/v1beta2 (DeviceTaintRule) is not served"

    refused_edit kind/cluster-1.36.yaml 's|image: kindest/node:v1.36.1@sha256:[0-9a-f]*|image: kindest/node:v1.36.1|' "pin tag and digest"

    refused_edit kind/cluster-1.36.yaml 's|enable_cdi = true|enable_cdi = false|' "does not set io.containerd.grpc.v1.cri.enable_cdi"

    refused_edit kind/cluster-1.36.yaml 's|^featureGates:|featureGate:|' "featureGate is no field of kind's v1alpha4 Cluster"
}

@test "the default K8S_VERSION is the one cluster-1.37.yaml pins, in the Makefile and kind-up.sh" {
    run sed -n 's/^K8S_VERSION *?= *//p' manifests/build.mk
    assert_output v1.37.0
    # shellcheck disable=SC2016 # a sed pattern, not shell
    run sed -n 's/^: "\${K8S_VERSION:=\(.*\)}"$/\1/p' scripts/kind-up.sh
    assert_output v1.37.0
    # kind v0.33.0's image for 1.37.
    run grep -c 'image: kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5$' kind/cluster-1.37.yaml
    assert_output 4
}

@test "kind config 1.37: no runtimeConfig (DeviceTaintRule is v1), no locked gate named" {
    run python3 -c 'import sys, yaml; c = yaml.safe_load(open("kind/cluster-1.37.yaml")); print(sorted(c["featureGates"])); print(c.get("runtimeConfig"))'
    assert_success
    assert_line --index 0 "['DRAConsumableCapacity', 'DRADeviceTaintRules', 'DRADeviceTaints', 'DRAOptionalNodeOperations', 'ResourceHealthStatus']"
    assert_line --index 1 None
    refused_edit kind/cluster-1.37.yaml 's|^  DRADeviceTaints: true |  DRAExtendedResource: true |' "feature gate DRAExtendedResource is GA and locked in 1.37"
    refused_edit kind/cluster-1.37.yaml 's|^  DRADeviceTaints: true |  DRAResourcePoolStatusX: true |' "feature gate DRAResourcePoolStatusX does not exist in Kubernetes 1.37"
}

@test "kind config 1.38: no locked or removed gate named, no runtimeConfig, the node-image build" {
    run python3 -c 'import sys, yaml; c = yaml.safe_load(open("kind/cluster-1.38.yaml")); print(sorted(c["featureGates"])); print(c.get("runtimeConfig")); print(sorted({n["image"] for n in c["nodes"]}))'
    assert_success
    assert_line --index 0 "['DRAConsumableCapacity', 'DRAOptionalNodeOperations', 'ResourceHealthStatus']"
    assert_line --index 1 None
    assert_line --index 2 "['fakehw-dra/kind-node:v1.38.0-beta.0']"
    local gate
    # Locked in 1.38 (the first four newly): components refuse false and
    # warn on true; the configs name no locked gate.
    for gate in DRADeviceTaints DRADeviceTaintRules DRADeviceBindingConditions DRAPartitionableDevices \
        DRAExtendedResource; do
        refused_edit kind/cluster-1.38.yaml "s|^  DRAConsumableCapacity: true |  $gate: true |" "feature gate $gate is GA and locked in 1.38"
    done
    # Removed in 1.38.
    refused_edit kind/cluster-1.38.yaml 's|^  DRAConsumableCapacity: true |  DynamicResourceAllocation: true |' "feature gate DynamicResourceAllocation does not exist in Kubernetes 1.38"
    refused_edit kind/cluster-1.38.yaml 's|fakehw-dra/kind-node:v1.38.0-beta.0|fakehw-dra/kind-node:v1.37.2|' "is not Kubernetes 1.38"
}

# --- kind-up.sh with stand-ins ------------------------------------------------

# Builds $BATS_TEST_TMPDIR/repo (a copy of the files kind-up.sh reads, with
# the scripts it calls replaced by recorders) and $BATS_TEST_TMPDIR/bin
# (docker, kind and kubectl that record their arguments in calls.log).
# STUB_CLUSTERS lists the clusters "kind get clusters" reports.
make_sandbox() {
    local t=$BATS_TEST_TMPDIR
    mkdir -p "$t/repo/scripts" "$t/bin"
    cp -r kind manifests "$t/repo/"
    cp scripts/common.sh scripts/kind-up.sh "$t/repo/scripts/"
    local s
    for s in image.sh deploy.sh wait-slices.sh; do
        # shellcheck disable=SC2016 # expanded by the recorder when it runs
        printf '#!/usr/bin/env bash\necho "%s $* IMAGE=$IMAGE IMAGE_ID=${IMAGE_ID:-} KUBE_CONTEXT=${KUBE_CONTEXT:-}" >>"%s/calls.log"\n' \
            "$s" "$t" >"$t/repo/scripts/$s"
        chmod +x "$t/repo/scripts/$s"
    done
    cat >"$t/bin/docker" <<EOF
#!/usr/bin/env bash
echo "docker \$*" >>"$t/calls.log"
case "\$1 \$2" in
"image inspect") [[ " \$* " != *" \${STUB_MISSING_IMAGE:-none} "* ]] || exit 1; echo sha256:1234 ;;
"inspect -f") echo "\${STUB_RUNNING:-true}" ;;
"info -f")
    case \$3 in
    *CgroupVersion*) echo "\${STUB_CGROUP_VERSION:-2}" ;;
    *DefaultRuntime*) echo "\${STUB_RUNTIME:-runc}" ;;
    *) echo "docker stand-in: unexpected info format \$3" >&2; exit 1 ;;
    esac ;;
"version -f") echo "\${STUB_SERVER_VERSION:-28.2.2}" ;;
"run --rm") [[ -z \${STUB_RUN_ERROR:-} ]] || { echo "\$STUB_RUN_ERROR" >&2; exit 125; } ;;
esac
exit 0
EOF
    cat >"$t/bin/kind" <<EOF
#!/usr/bin/env bash
echo "kind \$*" >>"$t/calls.log"
# Keep the config kind was given (kind-up removes a derived one on exit).
for ((i = 1; i < \$#; i++)); do
    [[ \${!i} == --config ]] && { j=\$((i + 1)); cp "\${!j}" "$t/kind-config"; }
done
case "\$1 \$2" in
"version ") echo "kind v\${STUB_KIND_VERSION:-0.33.0} go1.25.1 linux/amd64" ;;
"get clusters") printf '%s\n' \${STUB_CLUSTERS:-} ;;
esac
exit 0
EOF
    cat >"$t/bin/kubectl" <<EOF
#!/usr/bin/env bash
echo "kubectl \$*" >>"$t/calls.log"
[[ "\$*" == *kubeletVersion* ]] && echo "\${STUB_KUBELET_VERSION:-v1.37.0}"
exit 0
EOF
    chmod +x "$t/bin/"*
    : >"$t/calls.log"
}

# RESTRICTED_HOST=0 unless a test sets it: the machine running the tests
# may itself be restricted (CI VMs often are).
kind_up() {
    PATH="$BATS_TEST_TMPDIR/bin:$PATH" SKIP_IMAGE_BUILD=1 RESTRICTED_HOST=${RESTRICTED_HOST:-0} \
        "$BATS_TEST_TMPDIR/repo/scripts/kind-up.sh"
}

@test "kind-up.sh creates a cluster from the config of the default version, loads and deploys" {
    make_sandbox
    run kind_up
    assert_success
    run cat "$BATS_TEST_TMPDIR/calls.log"
    assert_line "kind create cluster --name fakehw-dra --config $BATS_TEST_TMPDIR/repo/kind/cluster-1.37.yaml --wait 120s"
    assert_line "kind load docker-image localhost/fakehw-dra:dev --name fakehw-dra"
    assert_line "deploy.sh apply IMAGE=localhost/fakehw-dra:dev IMAGE_ID=sha256:1234 KUBE_CONTEXT=kind-fakehw-dra"
    assert_line --partial "wait-slices.sh  IMAGE=localhost/fakehw-dra:dev"
    refute_line --partial "image.sh"
}

@test "kind-up.sh takes another patch release with --image and the minor's config" {
    make_sandbox
    K8S_VERSION=v1.35.2 run kind_up
    assert_success
    run grep '^kind create' "$BATS_TEST_TMPDIR/calls.log"
    assert_output "kind create cluster --name fakehw-dra --config $BATS_TEST_TMPDIR/repo/kind/cluster-1.35.yaml --image kindest/node:v1.35.2 --wait 120s"
}

@test "kind-up.sh takes a pre-release of 1.38 with the image make node-image builds" {
    make_sandbox
    K8S_VERSION=v1.38.0-beta.0 run kind_up
    assert_success
    run grep '^kind create' "$BATS_TEST_TMPDIR/calls.log"
    assert_output "kind create cluster --name fakehw-dra --config $BATS_TEST_TMPDIR/repo/kind/cluster-1.38.yaml --wait 120s"
    # Another 1.38 release: its own node-image build, never kindest/node.
    : >"$BATS_TEST_TMPDIR/calls.log"
    K8S_VERSION=v1.38.1 run kind_up
    assert_success
    run grep '^kind create' "$BATS_TEST_TMPDIR/calls.log"
    assert_output --partial "--image fakehw-dra/kind-node:v1.38.1 "
}

@test "kind-up.sh says how to build a 1.38 node image that is not there, before touching anything" {
    make_sandbox
    STUB_MISSING_IMAGE=fakehw-dra/kind-node:v1.38.0-beta.0 K8S_VERSION=v1.38.0-beta.0 run kind_up
    assert_failure
    assert_output --partial "make node-image K8S_VERSION=v1.38.0-beta.0"
    run grep -c '^kind create' "$BATS_TEST_TMPDIR/calls.log"
    assert_output 0
}

@test "kind-up.sh reuses a running cluster of the same name" {
    make_sandbox
    STUB_CLUSTERS="other fakehw-dra" run kind_up
    assert_success
    assert_output --partial "reusing the running kind cluster fakehw-dra"
    run grep -c '^kind create' "$BATS_TEST_TMPDIR/calls.log"
    assert_output 0
    run grep -c '^deploy.sh apply' "$BATS_TEST_TMPDIR/calls.log"
    assert_output 1
}

@test "kind-up.sh says so when the existing cluster runs another version" {
    make_sandbox
    STUB_CLUSTERS=fakehw-dra STUB_KUBELET_VERSION=v1.34.8 run kind_up
    assert_success
    assert_output --partial "the cluster runs v1.34.8, not v1.37.0; it is kept"
}

@test "kind-up.sh refuses a stopped cluster, saying how to recover" {
    make_sandbox
    STUB_CLUSTERS=fakehw-dra STUB_RUNNING=false run kind_up
    assert_failure
    assert_output --partial "its control plane container is not running"
    assert_output --partial "make kind-down kind-up"
    run grep -c '^deploy.sh' "$BATS_TEST_TMPDIR/calls.log"
    assert_output 0
}

@test "kind-up.sh refuses a kind older than the one that built the pinned image (v0.33.0 from 1.37, v0.32.0 before)" {
    make_sandbox
    STUB_KIND_VERSION=0.29.0 K8S_VERSION=v1.36.1 run kind_up
    assert_failure
    assert_output --partial "kind 0.29.0 is older than v0.32.0, which built the node image cluster-1.36.yaml pins"
    STUB_KIND_VERSION=0.32.0 K8S_VERSION=v1.36.1 run kind_up
    assert_success
    STUB_KIND_VERSION=0.32.0 run kind_up
    assert_failure
    assert_output --partial "kind 0.32.0 is older than v0.33.0, which built the node image cluster-1.37.yaml pins"
    STUB_KIND_VERSION=0.33.1 run kind_up
    assert_success
    STUB_KIND_VERSION=0.32.0 K8S_VERSION=v1.38.0-beta.0 run kind_up
    assert_failure
    assert_output --partial "kind 0.32.0 is older than v0.33.0"
}

@test "kind-up.sh refuses an unsupported or malformed version before touching anything" {
    make_sandbox
    K8S_VERSION=v1.33.4 run kind_up
    assert_failure
    assert_output --partial "no kind config for Kubernetes 1.33 (kind/ has: 1.34 1.35 1.36 1.37 1.38)"
    K8S_VERSION=1.36 run kind_up
    assert_failure
    assert_output --partial "expected vMAJOR.MINOR.PATCH"
    OVERLAY=nope run kind_up
    assert_failure
    assert_output --partial "OVERLAY=nope: no such overlay"
    run cat "$BATS_TEST_TMPDIR/calls.log"
    assert_output ""
}

@test "kind-up.sh names every missing tool and where to get it" {
    make_sandbox
    # A PATH with the basic tools only: no docker, kind or kubectl.
    local only=$BATS_TEST_TMPDIR/only t
    mkdir -p "$only"
    for t in bash env dirname basename sed sort wc head tr cat grep; do
        ln -s "$(command -v "$t")" "$only/$t"
    done
    PATH=$only run "$only/bash" "$BATS_TEST_TMPDIR/repo/scripts/kind-up.sh"
    assert_failure
    assert_output --partial "missing required tools: docker kind kubectl"
    assert_output --partial "https://docs.docker.com/engine/install/"
    assert_output --partial "make deps-cluster, or go install sigs.k8s.io/kind@v0.33.0"
    assert_output --partial "kubectl 1.34 or newer: make deps-cluster builds one"
    assert_output --partial "https://kubernetes.io/docs/tasks/tools/#kubectl"
}

# --- restricted hosts ------------------------------------------------------------

# The config kind was given, kept by the kind stand-in before kind-up removes it.
created_config() {
    sed -n 's/^kind create cluster .*--config \([^ ]*\).*/\1/p' "$BATS_TEST_TMPDIR/calls.log"
}

@test "kind-up.sh on a host without CAP_SYS_RESOURCE: containerd restrict_oom_score_adj in both config versions" {
    make_sandbox
    # CapBnd without bit 24 (CAP_SYS_RESOURCE), as on the VMs this was measured on.
    printf 'CapBnd:\t000001fffeffffff\n' >"$BATS_TEST_TMPDIR/status"
    PROC_SELF_STATUS=$BATS_TEST_TMPDIR/status RESTRICTED_HOST=auto run kind_up
    assert_success
    assert_output --partial "restricted host (no CAP_SYS_RESOURCE"
    run cat "$BATS_TEST_TMPDIR/kind-config"
    assert_line "    version = 2"
    assert_line "    [plugins.\"io.containerd.grpc.v1.cri\"]"
    assert_line "    [plugins.\"io.containerd.cri.v1.runtime\"]"
    assert_equal "$(grep -c 'restrict_oom_score_adj = true' "$BATS_TEST_TMPDIR/kind-config")" 2
    refute_line --partial "failCgroupV1"
    # Still the 1.37 config otherwise, and valid for kind's schema check.
    mkdir -p "$BATS_TEST_TMPDIR/derived"
    cp "$BATS_TEST_TMPDIR/kind-config" "$BATS_TEST_TMPDIR/derived/cluster-1.37.yaml"
    run check kind-config "$BATS_TEST_TMPDIR/derived/cluster-1.37.yaml"
    assert_success
}

@test "kind-up.sh on a cgroup v1 engine: failCgroupV1 false from 1.35, nothing for 1.34" {
    make_sandbox
    printf 'CapBnd:\t000001ffffffffff\n' >"$BATS_TEST_TMPDIR/status"
    STUB_CGROUP_VERSION=1 PROC_SELF_STATUS=$BATS_TEST_TMPDIR/status RESTRICTED_HOST=auto K8S_VERSION=v1.35.2 run kind_up
    assert_success
    run cat "$BATS_TEST_TMPDIR/kind-config"
    assert_line --partial "kind: KubeletConfiguration"
    assert_line "    failCgroupV1: false"
    refute_line --partial "restrict_oom_score_adj"
    : >"$BATS_TEST_TMPDIR/calls.log"
    STUB_CGROUP_VERSION=1 PROC_SELF_STATUS=$BATS_TEST_TMPDIR/status RESTRICTED_HOST=auto K8S_VERSION=v1.34.3 run kind_up
    assert_success
    run grep '^kind create' "$BATS_TEST_TMPDIR/calls.log"
    assert_output --partial "--config $BATS_TEST_TMPDIR/repo/kind/cluster-1.34.yaml"
}

@test "kind-up.sh on a normal host changes nothing; RESTRICTED_HOST=0 turns detection off" {
    make_sandbox
    printf 'CapBnd:\t000001ffffffffff\n' >"$BATS_TEST_TMPDIR/status"
    STUB_CGROUP_VERSION=2 PROC_SELF_STATUS=$BATS_TEST_TMPDIR/status RESTRICTED_HOST=auto run kind_up
    assert_success
    refute_output --partial "restricted host"
    run grep '^kind create' "$BATS_TEST_TMPDIR/calls.log"
    assert_output --partial "--config $BATS_TEST_TMPDIR/repo/kind/cluster-1.37.yaml"
    : >"$BATS_TEST_TMPDIR/calls.log"
    printf 'CapBnd:\t000001fffeffffff\n' >"$BATS_TEST_TMPDIR/status"
    STUB_CGROUP_VERSION=1 PROC_SELF_STATUS=$BATS_TEST_TMPDIR/status RESTRICTED_HOST=0 run kind_up
    assert_success
    run grep '^kind create' "$BATS_TEST_TMPDIR/calls.log"
    assert_output --partial "--config $BATS_TEST_TMPDIR/repo/kind/cluster-1.37.yaml"
}

@test "kind-up.sh says how to get a working engine when Docker refuses privileged containers" {
    make_sandbox
    printf 'CapBnd:\t000001fffeffffff\n' >"$BATS_TEST_TMPDIR/status"
    STUB_RUN_ERROR="docker: Error response from daemon: OCI runtime create failed: unable to apply caps: operation not permitted" \
        PROC_SELF_STATUS=$BATS_TEST_TMPDIR/status RESTRICTED_HOST=auto run kind_up
    assert_failure
    assert_output --partial "scripts/restricted-host/docker.sh start"
    run grep -c '^kind create' "$BATS_TEST_TMPDIR/calls.log"
    assert_output 0
}

@test "kind-up.sh on a restricted host says what to do when the node image is not here, from Docker's version" {
    make_sandbox
    printf 'CapBnd:\t000001fffeffffff\n' >"$BATS_TEST_TMPDIR/status"
    local pinned
    pinned=$(sed -n 's/^ *image: //p' kind/cluster-1.37.yaml | sort -u)
    # Debian 12's docker.io: no test container to run, the version tells.
    STUB_MISSING_IMAGE=$pinned STUB_SERVER_VERSION=20.10.24+dfsg1 PROC_SELF_STATUS=$BATS_TEST_TMPDIR/status \
        RESTRICTED_HOST=auto run kind_up
    assert_failure
    assert_output --partial "Docker Engine 20.10.24+dfsg1 cannot start privileged containers on a host without CAP_SYS_RESOURCE"
    assert_output --partial "scripts/restricted-host/docker.sh start;"
    assert_output --partial "scripts/restricted-host/docker.sh load localhost/fakehw-dra:dev $pinned;"
    run grep -cE '^(kind create|docker run)' "$BATS_TEST_TMPDIR/calls.log"
    assert_output 0
    # Docker 23 and newer grant only what the host has: kind goes ahead.
    : >"$BATS_TEST_TMPDIR/calls.log"
    STUB_MISSING_IMAGE=$pinned STUB_SERVER_VERSION=28.2.2 PROC_SELF_STATUS=$BATS_TEST_TMPDIR/status \
        RESTRICTED_HOST=auto run kind_up
    assert_success
    run grep -c '^kind create' "$BATS_TEST_TMPDIR/calls.log"
    assert_output 1
    # A normal host is not asked.
    : >"$BATS_TEST_TMPDIR/calls.log"
    printf 'CapBnd:\t000001ffffffffff\n' >"$BATS_TEST_TMPDIR/status"
    STUB_MISSING_IMAGE=$pinned STUB_SERVER_VERSION=20.10.24 PROC_SELF_STATUS=$BATS_TEST_TMPDIR/status \
        RESTRICTED_HOST=auto run kind_up
    assert_success
    run grep -c '^docker version' "$BATS_TEST_TMPDIR/calls.log"
    assert_output 0
}

@test "kind-up.sh in fakehw-dra's own engine: no probe, and images come from the system engine" {
    make_sandbox
    printf 'CapBnd:\t000001fffeffffff\n' >"$BATS_TEST_TMPDIR/status"
    STUB_RUNTIME=fakehw-runc STUB_SERVER_VERSION=20.10.24 PROC_SELF_STATUS=$BATS_TEST_TMPDIR/status \
        RESTRICTED_HOST=auto K8S_VERSION=v1.37.2 KIND_NODE_IMAGE=fakehw-dra/kind-node:v1.37.2 run kind_up
    assert_success
    run grep -cE '^docker (run|version)' "$BATS_TEST_TMPDIR/calls.log"
    assert_output 0
    # A node image that is not there: the engine pulls from nowhere.
    STUB_MISSING_IMAGE=fakehw-dra/kind-node:v1.37.2 STUB_RUNTIME=fakehw-runc PROC_SELF_STATUS=$BATS_TEST_TMPDIR/status \
        RESTRICTED_HOST=auto K8S_VERSION=v1.37.2 KIND_NODE_IMAGE=fakehw-dra/kind-node:v1.37.2 run kind_up
    assert_failure
    assert_output --partial "then scripts/restricted-host/docker.sh load fakehw-dra/kind-node:v1.37.2"
    # Its builds reach no Debian mirror: the driver image is loaded, not built.
    STUB_RUNTIME=fakehw-runc PROC_SELF_STATUS=$BATS_TEST_TMPDIR/status RESTRICTED_HOST=auto \
        KIND_NODE_IMAGE=fakehw-dra/kind-node:v1.37.2 PATH="$BATS_TEST_TMPDIR/bin:$PATH" SKIP_IMAGE_BUILD=0 \
        run "$BATS_TEST_TMPDIR/repo/scripts/kind-up.sh"
    assert_failure
    assert_output --partial "(scripts/restricted-host/docker.sh load localhost/fakehw-dra:dev) and pass SKIP_IMAGE_BUILD=1"
}

@test "kind-up.sh refuses a RESTRICTED_HOST it does not know" {
    make_sandbox
    RESTRICTED_HOST=maybe run kind_up
    assert_failure
    assert_output --partial "RESTRICTED_HOST=maybe: expected auto, 1 or 0"
}
