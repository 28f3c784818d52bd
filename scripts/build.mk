# SPDX-License-Identifier: Apache-2.0
# scripts/: the Makefile's own targets for users (help, unit, install) and
# the README's tour (demo.sh, readme-tour.sh) are tested here; the
# deployment scripts are manifests/build.mk's.
BATS_SUITES += scripts/tests
LINT_SHELL  += scripts/demo.sh scripts/readme-tour.sh scripts/install-go-tools.sh scripts/check-spdx.sh scripts/check-conformance-deps.sh $(wildcard scripts/tests/*.bats scripts/tests/*.bash)

# The cluster suite as an image and a Job (docs/conformance.md, "Running it
# as a Job or a container"): scripts/conformance-image, scripts/conformance-job.sh
# and manifests/conformance-job; tested with manifests/tests.
CONFORMANCE_KIT_IMAGE ?= fakehw-dra/conformance:dev
KUBECTL_VERSION       ?= v1.37.2
LINT_SHELL += scripts/conformance-job.sh $(wildcard scripts/conformance-image/*.sh)

.PHONY: conformance-image conformance-job
conformance-image: ## build the cluster suite's image (CONFORMANCE_KIT_IMAGE=fakehw-dra/conformance:dev): bats, jq, kubectl KUBECTL_VERSION
	CONFORMANCE_KIT_IMAGE="$(CONFORMANCE_KIT_IMAGE)" KUBECTL_VERSION="$(KUBECTL_VERSION)" BUILD="$(BUILD)" \
	  CONTAINER_TOOL="$(CONTAINER_TOOL)" scripts/conformance-image/build.sh

conformance-job: export CONFORMANCE_FILTER := $(or $(FILTER),$(CONFORMANCE_FILTER))
conformance-job: export CONFORMANCE_JOBS := $(or $(JOBS),$(CONFORMANCE_JOBS),1)
conformance-job: export CONFORMANCE_REPORT_DIR := $(CONFORMANCE_REPORT_DIR)
conformance-job: export CONFORMANCE_KIT_IMAGE := $(CONFORMANCE_KIT_IMAGE)
conformance-job: ## run the cluster suite as a Job in the kubeconfig's cluster; reports back into conformance/reports/ (FILTER, JOBS, CONFORMANCE_JOB_KIND_CLUSTER)
	@scripts/conformance-job.sh run
