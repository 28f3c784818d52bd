#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds a kind node image for one Kubernetes release with no container
# registry: everything comes from the Go module proxy and the Debian mirror.
#
#   node-image.sh VERSION [IMAGE]     e.g. node-image.sh v1.37.2
#                                     (default IMAGE fakehw-dra/kind-node:VERSION)
#
# What `kind build node-image` does, minus its pulls: a build container from
# the kind base image (kind-base.sh) gets kubeadm, kubelet and kubectl
# (kube-binaries.sh), /kind/version, the CNI and storage manifests, and every
# image the node runs, imported into its containerd content store the way
# kind imports them (pinned, not unpacked); then it is committed. The images
# are built here from their Go modules: the control plane and kube-proxy,
# etcd and CoreDNS at the versions this kubeadm asks for, pause from the
# k8s.io/kubernetes module's C source, and kindnet-lite (the pod network).
set -euo pipefail
# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=versions.sh source-path=SCRIPTDIR
source "$NODE_IMAGE_DIR/versions.sh"

version=${1:?usage: node-image.sh VERSION [IMAGE]}
parse_kube_version "$version"
image=${2:-fakehw-dra/kind-node:$version}
base_image=fakehw-dra/kind-base:kind-$KIND_MODULE_VERSION-containerd-$CONTAINERD_VERSION
rootfs_image=fakehw-dra/kind-rootfs:bookworm
kindnet_image=docker.io/fakehw-dra/kindnet-lite:v1

# Everything it needs, before the first build step (minutes into a build is
# a poor time to learn that libseccomp-dev is missing).
# shellcheck disable=SC2046 # one word a name
check_prereqs $(cut -d' ' -f1 <<<"$NODE_IMAGE_NEEDS")

# The Kubernetes programs first: the longest step, and the one that fails
# (in seconds) when the module proxy lacks a module the release needs.
kube=$(cache_dir)/kubernetes-$version
"$NODE_IMAGE_DIR/kube-binaries.sh" "$version" "$kube"
"$NODE_IMAGE_DIR/kind-base.sh" "$base_image"
# From here on Go builds and reads the k8s.io/kubernetes module (etcd,
# CoreDNS, pause.c): with the Go toolchain that release needs.
use_kube_toolchain "$version"

# The images this kubeadm pulls, e.g. registry.k8s.io/etcd:3.7.0-0.
mapfile -t wanted < <("$kube/kubeadm" config images list --kubernetes-version "$version" 2>/dev/null)
((${#wanted[@]} >= 6)) || die "kubeadm $version listed ${#wanted[@]} images, expected at least 6"
tag_of() {
    local want
    for want in "${wanted[@]}"; do
        [[ $want == *"/$1:"* ]] && { echo "${want##*:}"; return 0; }
    done
    die "kubeadm $version does not list an image named $1"
}
# served_version MODULE WANT: WANT if the Go module proxy serves it, else the
# first served version after it (else the newest), said on stderr. kubeadm
# may ask for a patch release (etcd 3.6.6, CoreDNS v1.12.1) that the proxy
# does not serve; the image is built from the nearest one and tagged as
# kubeadm asks, so the cluster starts with what it has.
served_version() {
    local module=$1 want=$2 list pick
    list=$(cd "$(cache_dir)" && GOFLAGS=-mod=mod go list -m -versions "$module" 2>/dev/null | cut -d' ' -f2-)
    [[ -n $list ]] || die "the Go module proxy lists no versions of $module"
    if [[ " $list " == *" $want "* ]]; then
        echo "$want"
        return
    fi
    # Releases only (no "-rc.0"), in version order, with WANT among them.
    pick=$({ tr ' ' '\n' <<<"$list"; echo "$want"; } | grep -v -- '-' | sort -V |
        sed -n "/^${want//./\\.}\$/{n;p;q}")
    [[ -n $pick ]] || pick=$(tr ' ' '\n' <<<"$list" | grep -v -- '-' | sort -V | tail -n1)
    log "$module $want is not served by the Go module proxy; building $pick (tagged as kubeadm's $want)"
    echo "$pick"
}

# The kind containerd config's sandbox image; kubeadm's own pause tag too.
sandbox=$(docker run --rm --entrypoint cat "$base_image" /etc/containerd/config.toml |
    sed -n 's/^\s*sandbox_image = "\(.*\)"$/\1/p')
[[ -n $sandbox ]] || die "no sandbox_image in $base_image's /etc/containerd/config.toml"

ctx=$(cache_dir)/node-$version
rm -rf "$ctx"
mkdir -p "$ctx/images"

# build_image TAG... < Dockerfile: builds from $ctx/img and saves to images/.
build_image() {
    local first=$1 t args=()
    for t in "$@"; do args+=(-t "$t"); done
    docker build "${args[@]}" -f - "$ctx/img" >&2 || die "building $first failed (see above)"
    docker save "$@" -o "$ctx/images/$(echo "$first" | tr '/:' '__').tar" || die "docker save $first failed"
    rm -rf "$ctx/img"
}

for p in kube-apiserver kube-controller-manager kube-scheduler; do
    log "image registry.k8s.io/$p:$version"
    mkdir -p "$ctx/img" && cp "$kube/$p" "$ctx/img/"
    build_image "registry.k8s.io/$p:$version" <<DOCKERFILE
FROM scratch
COPY $p /usr/local/bin/$p
DOCKERFILE
done

log "image registry.k8s.io/kube-proxy:$version (iptables and nftables from Debian)"
mkdir -p "$ctx/img" && cp "$kube/kube-proxy" "$ctx/img/"
build_image "registry.k8s.io/kube-proxy:$version" <<DOCKERFILE
FROM $rootfs_image
COPY kube-proxy /usr/local/bin/kube-proxy
DOCKERFILE

etcd_tag=$(tag_of etcd)
etcd_version=$(served_version go.etcd.io/etcd/server/v3 "v${etcd_tag%-*}")
etcd_dir=$("$NODE_IMAGE_DIR/go-programs.sh" etcd "$etcd_version")
log "image registry.k8s.io/etcd:$etcd_tag (etcd $etcd_version)"
mkdir -p "$ctx/img" && cp "$etcd_dir/etcd" "$ctx/img/"
build_image "registry.k8s.io/etcd:$etcd_tag" <<DOCKERFILE
FROM scratch
COPY etcd /usr/local/bin/etcd
DOCKERFILE

coredns_tag=$(tag_of coredns)
coredns_version=$(served_version github.com/coredns/coredns "$coredns_tag")
coredns_dir=$("$NODE_IMAGE_DIR/go-programs.sh" coredns "$coredns_version")
log "image registry.k8s.io/coredns/coredns:$coredns_tag (CoreDNS $coredns_version)"
mkdir -p "$ctx/img" && cp "$coredns_dir/coredns" "$ctx/img/"
build_image "registry.k8s.io/coredns/coredns:$coredns_tag" <<DOCKERFILE
FROM scratch
COPY coredns /coredns
ENTRYPOINT ["/coredns"]
DOCKERFILE

pause_tag=$(tag_of pause)
kdir=$(module_field "k8s.io/kubernetes@$version" Dir)
log "image registry.k8s.io/pause:$pause_tag and $sandbox (from $kdir/build/pause)"
mkdir -p "$ctx/img"
gcc -Os -static -Wall -Werror -DVERSION="$pause_tag" -o "$ctx/img/pause" "$kdir/build/pause/linux/pause.c" ||
    die "compiling pause failed"
build_image "registry.k8s.io/pause:$pause_tag" "$sandbox" <<DOCKERFILE
FROM scratch
COPY pause /pause
USER 65535:65535
ENTRYPOINT ["/pause"]
DOCKERFILE

log "image $kindnet_image"
mkdir -p "$ctx/img" && cp "$NODE_IMAGE_DIR/kindnet-lite/kindnet-lite" "$ctx/img/"
build_image "$kindnet_image" <"$NODE_IMAGE_DIR/kindnet-lite/Dockerfile"
sed "s#KINDNET_LITE_IMAGE#$kindnet_image#" "$NODE_IMAGE_DIR/kindnet-lite/default-cni.yaml" >"$ctx/default-cni.yaml"

# --- assemble -------------------------------------------------------------------
id=$(docker run -d --entrypoint=sleep --security-opt seccomp=unconfined "$base_image" infinity) ||
    die "cannot start a build container from $base_image"
trap 'docker rm -f -v "$id" >/dev/null 2>&1 || true' EXIT
for p in kubeadm kubelet kubectl; do
    docker cp "$kube/$p" "$id:/usr/bin/$p" || die "docker cp $p failed"
done
docker exec "$id" mkdir -p /kind/manifests /kind/import || die "docker exec in the build container failed"
printf '%s' "$version" >"$ctx/version"
docker cp "$ctx/version" "$id:/kind/version"
docker cp "$ctx/default-cni.yaml" "$id:/kind/manifests/default-cni.yaml"
docker cp "$NODE_IMAGE_DIR/default-storage.yaml" "$id:/kind/manifests/default-storage.yaml"
docker cp "$ctx/images/." "$id:/kind/import/"
log "importing $(find "$ctx/images" -name '*.tar' | wc -l) images into the node's containerd"
docker exec "$id" bash -c '
    set -e
    nohup containerd >/tmp/containerd.log 2>&1 &
    for i in $(seq 1 30); do [ -S /run/containerd/containerd.sock ] && ctr version >/dev/null 2>&1 && break; sleep 1; done
    for t in /kind/import/*.tar; do
        ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned \
            --all-platforms --no-unpack --digests "$t" >/dev/null
    done
    ctr --namespace=k8s.io images list -q
    pkill containerd
    for i in $(seq 1 30); do pgrep -x containerd >/dev/null || break; sleep 1; done
    rm -rf /kind/import /tmp/containerd.log
' >&2 || die "importing the images into the node's containerd failed (see above)"
# The build container ran sleep: put the base image's entrypoint back. Its
# STOPSIGNAL (SIGRTMIN+3, for systemd) carries over from the container.
docker commit \
    --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' --change 'CMD []' \
    "$id" "$image" >/dev/null || die "docker commit $image failed"
log "built $image ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}'))"
