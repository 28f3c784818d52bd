#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A single-node Kubernetes cluster run directly on this host, without kind or
# any container image from a registry: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, containerd (CDI on) with runc, and
# a kubelet, each a host process. It is the "real node" of
# docs/benchmarks.md: the kubelet's DRA client, the scheduler and containerd
# reading the CDI root are the real ones, and nothing else runs on the node.
#
#   node.sh up [VERSION]     build what is missing (cached), start, wait Ready
#   node.sh control-plane [VERSION]
#                            etcd, kube-apiserver, kube-controller-manager and
#                            kube-scheduler only: no containerd, no kubelet
#                            (the fleet's nodes are KWOK's: docs/fleet.md)
#   node.sh down             stop everything, unmount, keep the built programs
#   node.sh env              prints `export KUBECONFIG=...`
#   node.sh gates MINOR      the feature gates and API versions it would
#                            turn on for 1.MINOR, as the flags say them
#
# Every program is built from its Go module through the module proxy by the
# node-image scripts (kube-binaries.sh, go-programs.sh); the pause and
# busybox images are built locally and imported into containerd.
#
# Settings (environment): REAL_NODE_STATE (default /var/lib/fakehw-real-node:
# certificates, etcd, containerd's root, logs), REAL_NODE_RUN (default
# /run/fakehw-real-node: sockets, pid files), NODE_NAME (default the host
# name), ETCD_VERSION (default v3.6.16), CLIENT_QPS (the scheduler's and the
# controller manager's API client rate; default theirs), CDI_TMPFS (default 1: a tmpfs on
# /var/run/cdi, as /var/run is on most nodes). The DRA feature gates and API
# versions are those of kind/cluster-1.MINOR.yaml for the version's minor.
#
# The host must be able to run containers as root (cgroup v1 or v2, overlayfs)
# and nothing else may hold ports 2379, 6443 or 10250, or /var/lib/kubelet.
# Only one such node per host. To change versions, `down`, then remove
# $REAL_NODE_STATE/etcd and /var/lib/kubelet (the state of the old one).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
NODE_IMAGE="$REPO/scripts/node-image"

# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$HERE/lib.sh"
PROG=real-node # for log and die
: "${ETCD_VERSION:=v3.6.16}"
: "${CDI_TMPFS:=1}"
: "${SANDBOX_IMAGE:=registry.k8s.io/pause:3.10.1}"
PKI=$REAL_NODE_STATE/pki
ADMIN_KUBECONFIG=$REAL_NODE_STATE/admin.kubeconfig
CONTAINERD_SOCK=$REAL_NODE_RUN/containerd.sock
SERVICE_CIDR=10.96.0.0/16
POD_CIDR=10.244.0.0/24

# ---- programs ----

# programs VERSION: builds (once) and sets KUBE_BIN, CNI_BIN, ETCD_BIN,
# CONTAINERD_BIN, RUNC_BIN.
programs() {
    local version=$1 programs
    parse_kube_version "$version"
    # shellcheck source=../node-image/versions.sh source-path=SCRIPTDIR
    source "$NODE_IMAGE/versions.sh"
    use_kube_toolchain "$version" # for pause.c's module below, as for the builds
    KUBE_BIN=$(cache_dir)/kube-$version
    "$NODE_IMAGE/kube-binaries.sh" "$version" "$KUBE_BIN" >&2
    programs=$("$NODE_IMAGE/go-programs.sh" node)
    CNI_BIN=$programs/cni-$CNI_PLUGINS_VERSION
    ETCD_BIN=$("$NODE_IMAGE/go-programs.sh" etcd "$ETCD_VERSION")
    CONTAINERD_BIN=$programs/containerd-$CONTAINERD_VERSION
    RUNC_BIN=$programs/runc-$RUNC_VERSION
}

# pause_image VERSION: the sandbox image, from the pause.c of the
# k8s.io/kubernetes module, imported into containerd as $SANDBOX_IMAGE.
pause_image() {
    local dir src ctx
    dir=$(module_field "k8s.io/kubernetes@$1" Dir)
    src=$dir/build/pause/linux/pause.c
    [[ -f $src ]] || die "no build/pause/linux/pause.c in k8s.io/kubernetes@$1"
    ctx=$(cache_dir)/pause-context
    rm -rf "$ctx" && mkdir -p "$ctx"
    gcc -Os -static -Wall -DVERSION="\"fakehw-real-node\"" -o "$ctx/pause" "$src" ||
        die "building pause failed"
    docker build -q -t "$SANDBOX_IMAGE" "$ctx" -f - >/dev/null <<'DOCKERFILE' || die "building the pause image failed"
FROM scratch
COPY pause /pause
USER 65535:65535
ENTRYPOINT ["/pause"]
DOCKERFILE
}

# import_image IMAGE: from Docker into containerd's k8s.io namespace.
import_image() {
    docker save "$1" | "$CONTAINERD_BIN/ctr" -a "$CONTAINERD_SOCK" -n k8s.io images import - >/dev/null ||
        die "importing $1 into containerd failed"
    log "imported $1"
}

# ---- configuration ----

# kind_config MINOR: dies unless kind/cluster-1.MINOR.yaml exists, the one
# place that says which DRA gates that minor needs.
kind_config() {
    [[ -f $REPO/kind/cluster-1.$1.yaml ]] ||
        die "no kind/cluster-1.$1.yaml: which DRA feature gates does Kubernetes 1.$1 need?"
}

# feature_gates MINOR: "A=true,B=true" from kind/cluster-1.MINOR.yaml.
feature_gates() {
    local f=$REPO/kind/cluster-1.$1.yaml
    awk '/^featureGates:/ {on=1; next} /^[^ #]/ {on=0}
         on && /^  [A-Za-z]+: *(true|false)/ {gsub(":", "", $1); printf "%s%s=%s", sep, $1, $2; sep=","}' "$f"
}

# runtime_config MINOR: "group/version=true,..." from the same file.
runtime_config() {
    awk '/^runtimeConfig:/ {on=1; next} /^[^ #]/ {on=0}
         on && /^  [^#]/ {gsub(/[":]/, "", $1); gsub(/"/, "", $2); printf "%s%s=%s", sep, $1, $2; sep=","}' \
        "$REPO/kind/cluster-1.$1.yaml"
}

node_ip() {
    local ip
    ip=$(ip -4 -o route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
    [[ -n $ip ]] || ip=$(hostname -I | awk '{print $1}')
    [[ -n $ip ]] || die "cannot tell this host's address"
    echo "$ip"
}

# cert NAME SUBJECT [EXT]: a key and a certificate signed by the cluster CA.
cert() {
    local name=$1 subj=$2 ext=${3:-}
    [[ -f $PKI/$name.crt ]] && return 0
    openssl req -new -newkey rsa:2048 -nodes -keyout "$PKI/$name.key" -subj "$subj" \
        -out "$PKI/$name.csr" 2>/dev/null
    if [[ -n $ext ]]; then
        openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" \
            -CAcreateserial -days 365 -out "$PKI/$name.crt" -extfile <(printf '%s\n' "$ext") 2>/dev/null
    else
        openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" \
            -CAcreateserial -days 365 -out "$PKI/$name.crt" 2>/dev/null
    fi
}

kubeconfig() { # kubeconfig FILE CERTNAME
    cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: real-node
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: "$PKI/ca.crt"}
users:
- name: u
  user: {client-certificate: "$PKI/$2.crt", client-key: "$PKI/$2.key"}
contexts:
- name: real-node
  context: {cluster: real-node, user: u}
current-context: real-node
EOF
}

pki() {
    mkdir -p "$PKI"
    if [[ ! -f $PKI/ca.crt ]]; then
        openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -days 365 \
            -subj "/CN=fakehw-real-node-ca" -out "$PKI/ca.crt" 2>/dev/null
    fi
    cert apiserver "/CN=kube-apiserver" \
        "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,IP:$(node_ip),DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
    cert admin "/O=system:masters/CN=kubernetes-admin"
    cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
    cert controller-manager "/CN=system:kube-controller-manager"
    cert scheduler "/CN=system:kube-scheduler"
    cert kubelet "/O=system:nodes/CN=system:node:$NODE_NAME"
    [[ -f $PKI/sa.key ]] || openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
    openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
    kubeconfig "$ADMIN_KUBECONFIG" admin
    kubeconfig "$REAL_NODE_STATE/controller-manager.kubeconfig" controller-manager
    kubeconfig "$REAL_NODE_STATE/scheduler.kubeconfig" scheduler
    kubeconfig "$REAL_NODE_STATE/kubelet.kubeconfig" kubelet
}

containerd_config() {
    mkdir -p "$REAL_NODE_STATE/cni/net.d"
    cat >"$REAL_NODE_STATE/cni/net.d/10-ptp.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "real-node", "plugins": [
  {"type": "ptp", "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]],
            "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$REAL_NODE_STATE/cni/ipam"}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
    # restrict_oom_score_adj: where nobody may lower oom_score_adj (no
    # CAP_SYS_RESOURCE), containerd must not try.
    cat >"$REAL_NODE_STATE/containerd.toml" <<EOF
version = 3
root = "$REAL_NODE_STATE/containerd"
state = "$REAL_NODE_RUN/containerd"
[grpc]
  address = "$CONTAINERD_SOCK"
[plugins."io.containerd.cri.v1.runtime"]
  enable_cdi = true
  cdi_spec_dirs = ["/etc/cdi", "/var/run/cdi"]
  restrict_oom_score_adj = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "$RUNC_BIN/runc"
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["$CNI_BIN"]
    conf_dir = "$REAL_NODE_STATE/cni/net.d"
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "$SANDBOX_IMAGE"
EOF
}

kubelet_config() {
    local minor=$1 cgroup_driver=cgroupfs fail_v1=""
    # Kubelets from 1.35 refuse cgroup v1 unless told otherwise.
    [[ $(stat -fc %T /sys/fs/cgroup) == cgroup2fs ]] || fail_v1="failCgroupV1: false"
    local gates
    gates=$(feature_gates "$minor" | tr ',' '\n' | sed 's/^\(.*\)=\(.*\)$/  \1: \2/')
    cat >"$REAL_NODE_STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$PKI/ca.crt"}
authorization: {mode: Webhook}
cgroupDriver: $cgroup_driver
$fail_v1
containerRuntimeEndpoint: "unix://$CONTAINERD_SOCK"
failSwapOn: false
resolvConf: /etc/resolv.conf
podCIDR: "$POD_CIDR"
serializeImagePulls: false
imageGCHighThresholdPercent: 100
evictionHard: {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%"}
featureGates:
$gates
EOF
}

# ---- processes ----

start() { start_in "$REAL_NODE_RUN" "$@"; } # start NAME COMMAND...

wait_for() { # wait_for WHAT SECONDS COMMAND...
    local what=$1 secs=$2
    shift 2
    local i
    for ((i = 0; i < secs * 5; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    die "$what not ready after ${secs}s (logs in $LOGS)"
}

kctl() { "$KUBE_BIN/kubectl" --kubeconfig "$ADMIN_KUBECONFIG" "$@"; }

# scheduler_config: the scheduler's client at CLIENT_QPS (default 50 and
# burst 100, the scheduler's own), so a fleet is not measured at the
# client's pace.
scheduler_config() {
    cat >"$REAL_NODE_STATE/scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: "$REAL_NODE_STATE/scheduler.kubeconfig"
  qps: ${CLIENT_QPS:-50}
  burst: ${CLIENT_QPS:-100}
leaderElection: {leaderElect: false}
EOF
}

# start_control_plane VERSION MINOR: etcd, kube-apiserver,
# kube-controller-manager and kube-scheduler, waited for until the API
# server answers /readyz.
start_control_plane() {
    local version=$1 minor=$2 gates rc
    mkdir -p "$REAL_NODE_STATE"
    ln -sfn "$KUBE_BIN" "$REAL_NODE_STATE/bin" # for drivers.sh and for you
    echo "$version" >"$REAL_NODE_STATE/version"
    pki
    scheduler_config
    gates=$(feature_gates "$minor")
    rc=$(runtime_config "$minor")
    start etcd "$ETCD_BIN/etcd" --data-dir "$REAL_NODE_STATE/etcd" \
        --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
        --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
        --initial-cluster default=http://127.0.0.1:2380
    # The node's name resolves to 127.0.0.1 on many hosts, which the node
    # proxy refuses: the API server reaches the kubelet by its InternalIP.
    start kube-apiserver "$KUBE_BIN/kube-apiserver" --etcd-servers http://127.0.0.1:2379 \
        --bind-address 0.0.0.0 --secure-port 6443 --advertise-address "$(node_ip)" \
        --client-ca-file "$PKI/ca.crt" --tls-cert-file "$PKI/apiserver.crt" \
        --tls-private-key-file "$PKI/apiserver.key" \
        --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" \
        --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
        --kubelet-preferred-address-types InternalIP \
        --service-account-issuer https://kubernetes.default.svc \
        --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
        --service-cluster-ip-range "$SERVICE_CIDR" --authorization-mode Node,RBAC \
        --allow-privileged=true --feature-gates "$gates" ${rc:+--runtime-config "$rc"}
    wait_for kube-apiserver 120 kctl get --raw /readyz
    start kube-controller-manager "$KUBE_BIN/kube-controller-manager" \
        --kubeconfig "$REAL_NODE_STATE/controller-manager.kubeconfig" \
        --authentication-kubeconfig "$REAL_NODE_STATE/controller-manager.kubeconfig" \
        --authorization-kubeconfig "$REAL_NODE_STATE/controller-manager.kubeconfig" \
        --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
        --use-service-account-credentials --leader-elect=false --feature-gates "$gates" \
        --kube-api-qps "${CLIENT_QPS:-20}" --kube-api-burst "${CLIENT_QPS:-30}"
    start kube-scheduler "$KUBE_BIN/kube-scheduler" --config "$REAL_NODE_STATE/scheduler.yaml" \
        --authentication-kubeconfig "$REAL_NODE_STATE/scheduler.kubeconfig" \
        --authorization-kubeconfig "$REAL_NODE_STATE/scheduler.kubeconfig" \
        --feature-gates "$gates"
    kctl create namespace fakehw-dra >/dev/null 2>&1 || true
}

# check_version VERSION: sets MINOR; dies unless root and the minor known.
check_version() {
    [[ $1 =~ ^v1\.([0-9]+)\. ]] || die "version '$1' is not v1.MINOR.PATCH"
    MINOR=${BASH_REMATCH[1]}
    [[ $(id -u) -eq 0 ]] || die "must run as root"
    kind_config "$MINOR"
    [[ -f $REAL_NODE_RUN/kube-apiserver.pid ]] && die "a node is already up (node.sh down first)"
    return 0
}

# control_plane [VERSION]: the control plane alone, no container runtime
# and no kubelet, for nodes that something else plays (KWOK: docs/fleet.md).
control_plane() {
    local version=${1:-v1.35.4}
    check_version "$version"
    parse_kube_version "$version"
    # shellcheck source=../node-image/versions.sh source-path=SCRIPTDIR
    source "$NODE_IMAGE/versions.sh"
    use_kube_toolchain "$version"
    KUBE_BIN=$(cache_dir)/kube-$version
    # Only what runs here (and kubectl): no kubelet, kube-proxy or kubeadm
    # to build on a fresh machine.
    KUBE_PROGRAMS="kube-apiserver kube-controller-manager kube-scheduler kubectl" \
        "$NODE_IMAGE/kube-binaries.sh" "$version" "$KUBE_BIN" >&2
    ETCD_BIN=$("$NODE_IMAGE/go-programs.sh" etcd "$ETCD_VERSION")
    start_control_plane "$version" "$MINOR"
    log "control plane up (Kubernetes $version, no kubelet); export KUBECONFIG=$ADMIN_KUBECONFIG"
}

up() {
    local version=${1:-v1.35.4}
    check_version "$version"
    programs "$version"
    containerd_config
    kubelet_config "$MINOR"
    mkdir -p /var/run/cdi /etc/cdi
    if [[ $CDI_TMPFS == 1 ]] && ! mountpoint -q /var/run/cdi; then
        mount -t tmpfs -o mode=0755 tmpfs /var/run/cdi
    fi
    start containerd env PATH="$CONTAINERD_BIN:$RUNC_BIN:$PATH" \
        "$CONTAINERD_BIN/containerd" --config "$REAL_NODE_STATE/containerd.toml"
    start_control_plane "$version" "$MINOR"
    wait_for containerd 60 "$CONTAINERD_BIN/ctr" -a "$CONTAINERD_SOCK" version
    pause_image "$version"
    import_image "$SANDBOX_IMAGE"
    if [[ -n ${NODE_IMAGES:-} ]]; then
        local img
        for img in $NODE_IMAGES; do import_image "$img"; done
    fi
    start kubelet "$KUBE_BIN/kubelet" --config "$REAL_NODE_STATE/kubelet.yaml" \
        --kubeconfig "$REAL_NODE_STATE/kubelet.kubeconfig" --hostname-override "$NODE_NAME" \
        --node-ip "$(node_ip)"
    wait_for "node $NODE_NAME" 120 kctl wait --for=condition=Ready "node/$NODE_NAME" --timeout=1s
    # No CoreDNS and no kube-proxy: the pods this node is for need neither.
    log "node $NODE_NAME is Ready (Kubernetes $version); export KUBECONFIG=$ADMIN_KUBECONFIG"
}

stop_one() {
    local f=$REAL_NODE_RUN/$1.pid pid
    [[ -f $f ]] || return 0
    pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
        local i
        for ((i = 0; i < 50; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
        kill -KILL -- "-$pid" 2>/dev/null || true
    fi
    rm -f "$f"
}

down() {
    local p
    for p in kubelet kube-scheduler kube-controller-manager kube-apiserver; do stop_one "$p"; done
    # Pods' shims outlive containerd; their containers go with them.
    pkill -f "containerd-shim-runc-v2 -namespace k8s.io -address $CONTAINERD_SOCK" 2>/dev/null || true
    stop_one containerd
    stop_one etcd
    { grep -o "$REAL_NODE_RUN/[^ ]*\|/var/lib/kubelet/[^ ]*" /proc/mounts || true; } | sort -r |
        while read -r m; do umount -l "$m" 2>/dev/null || true; done
    if [[ $CDI_TMPFS == 1 ]] && mountpoint -q /var/run/cdi; then umount /var/run/cdi; fi
    log "stopped; state kept in $REAL_NODE_STATE (rm -rf it and /var/lib/kubelet for a clean start)"
}

case ${1:-} in
up) up "${2:-}" ;;
control-plane) control_plane "${2:-}" ;;
down) down ;;
env) echo "export KUBECONFIG=$ADMIN_KUBECONFIG" ;;
gates)
    [[ ${2:-} =~ ^[0-9]+$ ]] || die "usage: node.sh gates MINOR (e.g. 35)"
    kind_config "$2"
    echo "--feature-gates=$(feature_gates "$2")"
    echo "--runtime-config=$(runtime_config "$2")"
    ;;
*) die "usage: node.sh up [VERSION] | control-plane [VERSION] | down | env | gates MINOR" ;;
esac
