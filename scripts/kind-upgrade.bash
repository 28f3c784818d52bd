# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Upgrading the nodes of a kind cluster in place, the way a cluster operator
# upgrades kubeadm nodes: the new release's images are pre-pulled (imported,
# there is no registry), `kubeadm upgrade apply` on the control plane,
# `kubeadm upgrade node` on every other node, then the node's kubelet binary
# is replaced and the kubelet restarted.  No node is drained: the point is
# that running pods keep their devices while their node's kubelet restarts.
# Everything the new release brings comes from its kind node image (make
# node-image builds one), so no registry is needed.
#
# Sourced by scripts/upgrade-test.sh, after common.sh.

# upgrade_artifacts IMAGE DIR: kubeadm, kubelet and kubectl of node image
# IMAGE, its /kind/version and every image its containerd holds (images.tar)
# into DIR.  The images are exported by a containerd started in a throwaway
# container of IMAGE, the way make node-image imported them.
upgrade_artifacts() {
    local image=$1 dir=$2 id p
    mkdir -p "$dir"
    docker image inspect "$image" >/dev/null 2>&1 ||
        die "node image $image is not in the engine's store (make node-image K8S_VERSION=...; on a restricted host, then scripts/restricted-host/docker.sh load $image)"
    id=$(docker run -d --entrypoint=sleep --security-opt seccomp=unconfined "$image" infinity) ||
        die "cannot start a container from $image"
    # shellcheck disable=SC2064 # the id is known now
    trap "docker rm -f -v $id >/dev/null 2>&1 || true" RETURN
    for p in kubeadm kubelet kubectl; do
        docker cp "$id:/usr/bin/$p" "$dir/$p" >/dev/null || die "$image has no /usr/bin/$p"
    done
    docker cp "$id:/kind/version" "$dir/version" >/dev/null || die "$image has no /kind/version"
    docker exec "$id" bash -c '
        set -e
        nohup containerd >/tmp/containerd.log 2>&1 &
        for i in $(seq 1 30); do ctr version >/dev/null 2>&1 && break; sleep 1; done
        ctr --namespace=k8s.io images list -q >/tmp/images.txt
        ctr --namespace=k8s.io images export --platform linux/amd64 /tmp/images.tar $(cat /tmp/images.txt)
        pkill containerd
    ' >&2 || die "exporting the images of $image failed (see above)"
    docker cp "$id:/tmp/images.tar" "$dir/images.tar" >/dev/null || die "copying the images of $image failed"
    docker cp "$id:/tmp/images.txt" "$dir/images.txt" >/dev/null || die "copying the image list of $image failed"
}

# node_import_images NODE DIR: DIR/images.tar into NODE's containerd,
# pinned as kind pins its own (the kubelet's image GC leaves them alone).
node_import_images() {
    docker exec "$1" mkdir -p /kind/upgrade || die "docker exec $1 failed"
    docker cp "$2/images.tar" "$1:/kind/upgrade/images.tar" >/dev/null || die "copying the images into $1 failed"
    docker exec "$1" ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned \
        --platform linux/amd64 --digests /kind/upgrade/images.tar >/dev/null ||
        die "importing the images into $1's containerd failed"
    docker exec "$1" rm -f /kind/upgrade/images.tar
}

# node_put_binary NODE FILE PATH: FILE as NODE's PATH, replaced by a rename so
# a running program of that name keeps its old file.
node_put_binary() {
    docker cp "$2" "$1:$3.new" >/dev/null || die "copying $2 into $1 failed"
    docker exec "$1" bash -c "chmod 0755 '$3.new' && mv -f '$3.new' '$3'" || die "installing $3 on $1 failed"
}

# node_kubelet_version NODE: the version NODE's kubelet reports in its Node.
node_kubelet_version() {
    kubectl get node "$1" -o jsonpath='{.status.nodeInfo.kubeletVersion}'
}

# node_ready_at NODE VERSION: NODE is Ready and its kubelet reports VERSION.
node_ready_at() {
    local v ready
    v=$(node_kubelet_version "$1") || return 1
    ready=$(kubectl get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') || return 1
    [[ $v == "$2" && $ready == True ]] || {
        echo "node $1: kubelet $v, Ready=$ready"
        return 1
    }
}

# node_upgrade_kubelet NODE DIR VERSION: the kubelet of DIR on NODE,
# restarted; waits until the node is Ready with it.
node_upgrade_kubelet() {
    node_put_binary "$1" "$2/kubelet" /usr/bin/kubelet
    node_put_binary "$1" "$2/kubectl" /usr/bin/kubectl
    docker exec "$1" systemctl restart kubelet || die "restarting the kubelet on $1 failed"
    wait_until "node $1 to be Ready with kubelet $3" 300 node_ready_at "$1" "$3" ||
        die "node $1 did not come back Ready with kubelet $3 (docker exec $1 journalctl -u kubelet)"
}

# upgrade_control_plane NODE DIR VERSION: kubeadm upgrade apply on NODE
# (API server, controller manager, scheduler, etcd, kube-proxy, CoreDNS),
# then its kubelet.
upgrade_control_plane() {
    local node=$1 dir=$2 version=$3 args=(--yes --ignore-preflight-errors=all)
    [[ $version == *-* ]] && args+=(--allow-experimental-upgrades --allow-release-candidate-upgrades)
    node_put_binary "$node" "$dir/kubeadm" /usr/bin/kubeadm
    docker exec "$node" kubeadm upgrade apply "$version" "${args[@]}" >&2 ||
        die "kubeadm upgrade apply $version on $node failed (see above)"
    node_upgrade_kubelet "$node" "$dir" "$version"
    # kubeadm returns when the new static pods run; the controller manager
    # may still be taking over its lease, and until it does a new namespace
    # gets no default ServiceAccount, so no pod.  The step ends when one does.
    wait_until "the controller manager to serve (a new namespace gets its ServiceAccount)" 300 \
        controller_manager_serves || die "the controller manager did not come back after the upgrade"
}

# controller_manager_serves: a probe namespace gets its default
# ServiceAccount (the namespace is deleted again either way).
controller_manager_serves() {
    local ns=fakehw-upgrade-probe rc=1
    kubectl get namespace "$ns" >/dev/null 2>&1 || kubectl create namespace "$ns" >/dev/null || return 1
    kubectl get serviceaccount -n "$ns" default >/dev/null 2>&1 && rc=0
    if ((rc == 0)); then
        kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
    else
        echo "namespace $ns has no default ServiceAccount yet"
    fi
    return $rc
}

# upgrade_node NODE DIR VERSION: kubeadm upgrade node on NODE (its kubelet
# configuration from the upgraded cluster), then its kubelet.
upgrade_node() {
    local node=$1 dir=$2 version=$3
    node_put_binary "$node" "$dir/kubeadm" /usr/bin/kubeadm
    docker exec "$node" kubeadm upgrade node --ignore-preflight-errors=all >&2 ||
        die "kubeadm upgrade node on $node failed (see above)"
    node_upgrade_kubelet "$node" "$dir" "$version"
}
