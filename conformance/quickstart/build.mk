# SPDX-License-Identifier: Apache-2.0
# conformance/quickstart: NVIDIA's quickstart specs as a check against the
# cluster of the current kubeconfig (docs/nvidia.md#the-quickstart-specs),
# and its self-test, which needs no cluster and runs with `make test`.
#
#   make nvidia-quickstart SPECS=<checkout>/demo/specs/quickstart

.PHONY: nvidia-quickstart
nvidia-quickstart: ## NVIDIA's quickstart specs (SPECS=demo/specs/quickstart of a dra-driver-nvidia-gpu checkout) against the kubeconfig's cluster
	@[ -n "$(SPECS)" ] || { echo "make nvidia-quickstart: SPECS=<checkout of kubernetes-sigs/dra-driver-nvidia-gpu>/demo/specs/quickstart is required" >&2; exit 2; }
	@conformance/quickstart/run.sh "$(SPECS)"

BATS_SUITES += conformance/quickstart/selftest
LINT_SHELL += conformance/quickstart/run.sh conformance/quickstart/selftest/quickstart.bats \
  conformance/quickstart/selftest/bin/kubectl
