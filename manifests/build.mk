# SPDX-License-Identifier: Apache-2.0
# manifests/, kind/, scripts/ and the Dockerfile: the image, the cluster
# deployment and a kind cluster to run it in.  The scripts do the work; these
# targets only pass the variables on.  docs/install.md explains them.

IMAGE             ?= localhost/fakehw-dra:dev
K8S_VERSION       ?= v1.37.0
KIND_CLUSTER_NAME ?= fakehw-dra
OVERLAY           ?=
FAKEHW_CONFIG     ?=
CONTAINER_TOOL    ?= docker

DEPLOY_ENV := IMAGE="$(IMAGE)" OVERLAY="$(OVERLAY)" FAKEHW_CONFIG="$(FAKEHW_CONFIG)" CONTAINER_TOOL="$(CONTAINER_TOOL)"

DEPLOY_SCRIPTS := scripts/common.sh scripts/image.sh scripts/runtime-packages.sh scripts/deploy.sh \
  scripts/wait-slices.sh scripts/kind-up.sh scripts/kind-down.sh \
  $(wildcard scripts/node-image/*.sh) scripts/node-image/kindnet-lite/kindnet-lite \
  scripts/restricted-host/docker.sh scripts/restricted-host/runc-wrapper scripts/conformance-matrix.sh \
  scripts/upgrade-test.sh scripts/kind-upgrade.bash
LINT_SHELL  += $(DEPLOY_SCRIPTS) $(wildcard manifests/tests/*.bats manifests/tests/*.bash)
BATS_SUITES += manifests/tests

NODE_IMAGE ?= fakehw-dra/kind-node:$(K8S_VERSION)

.PHONY: image kind-up kind-down deploy undeploy lint-manifests node-image base-image conformance-matrix upgrade-test

image: ## build the container image $(IMAGE) (IMAGE=..., CONTAINER_TOOL=podman)
	$(DEPLOY_ENV) scripts/image.sh

kind-up: ## kind cluster with the driver deployed and every worker's slices published (K8S_VERSION=v1.37.0)
	$(DEPLOY_ENV) K8S_VERSION="$(K8S_VERSION)" KIND_CLUSTER_NAME="$(KIND_CLUSTER_NAME)" scripts/kind-up.sh

node-image: ## build a kind node image for K8S_VERSION with no registry: Go module proxy and Debian mirror only (NODE_IMAGE=...)
	scripts/node-image/node-image.sh "$(K8S_VERSION)" "$(NODE_IMAGE)"

base-image: ## import a debootstrapped Debian 12 as fakehw-dra/debian:12, for make image BUILD_IMAGE=... RUNTIME_IMAGE=... offline
	scripts/node-image/debian-rootfs.sh fakehw-dra/debian:12

conformance-matrix: ## the cluster suite on a fresh kind cluster of each minor; the matrix into docs/compatibility.md (MATRIX_VERSIONS, NODE_IMAGE_REPO, JOBS)
	$(DEPLOY_ENV) KIND_CLUSTER_NAME="$(KIND_CLUSTER_NAME)" scripts/conformance-matrix.sh

upgrade-test: ## a kind cluster at FROM upgraded in place to TO with held claims checked after each step (FROM=v1.36.3 TO=v1.37.2)
	$(DEPLOY_ENV) KIND_CLUSTER_NAME="$(KIND_CLUSTER_NAME)" scripts/upgrade-test.sh "$(FROM)" "$(TO)"

kind-down: ## delete the kind cluster of kind-up
	CONTAINER_TOOL="$(CONTAINER_TOOL)" KIND_CLUSTER_NAME="$(KIND_CLUSTER_NAME)" scripts/kind-down.sh

deploy: ## deploy the driver to the current kubeconfig context and wait for its slices (IMAGE=..., OVERLAY=...)
	$(DEPLOY_ENV) scripts/deploy.sh apply
	$(DEPLOY_ENV) scripts/wait-slices.sh

undeploy: ## remove the driver and its ResourceSlices from the current kubeconfig context
	$(DEPLOY_ENV) scripts/deploy.sh delete

lint-manifests: ## yamllint every manifest, shellcheck the deployment scripts, render every kustomization, helm lint the chart
	yamllint --strict -c .yamllint .yamllint manifests kind
	shellcheck -x $(DEPLOY_SCRIPTS)
	@command -v kubectl >/dev/null || { echo "lint-manifests: kubectl (1.27+, with kustomize v5) is needed to render the kustomizations" >&2; exit 1; }
	@command -v helm >/dev/null || { echo "lint-manifests: helm is needed to lint the chart (make deps)" >&2; exit 1; }
	helm lint --strict manifests/helm/fakehw-dra
	@set -e; for k in $$(find manifests -name kustomization.yaml ! -path 'manifests/components/*'); do \
	  d=$$(dirname $$k); echo "kubectl kustomize $$d"; kubectl kustomize $$d >/dev/null; done
