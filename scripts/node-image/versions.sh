# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# The versions of what a node image is made of besides Kubernetes itself.
# Those kind v0.33.0's base image uses (images/base/Dockerfile), except
# crictl: the Go module proxy does not serve cri-tools v1.36.0.
: "${CONTAINERD_VERSION:=v2.3.4}"
: "${RUNC_VERSION:=v1.4.3}"
: "${CRICTL_VERSION:=v1.37.0}"
: "${CNI_PLUGINS_VERSION:=v1.9.1}"
# The kind release whose node-image layout (entrypoint, systemd units,
# containerd config) the base image takes, from the sigs.k8s.io/kind module.
: "${KIND_MODULE_VERSION:=v0.33.0}"
# The Go toolchain that builds a Kubernetes minor whose go.mod asks for a
# newer Go than the one on this machine (use_kube_toolchain in lib.sh): the
# go command fetches it from the module proxy (GOTOOLCHAIN). A minor not
# named here gets the toolchain its go.mod names ("toolchain", else "go").
: "${KUBE_GO_TOOLCHAIN_38:=go1.27.3}"
