# SPDX-License-Identifier: Apache-2.0
# conformance/cluster: the DRA scenario suite that runs against the cluster of
# the current kubeconfig (`make conformance`, docs/conformance.md), and its
# self-tests, which need no cluster and run with `make test`.
#
#   make conformance                          every scenario
#   make conformance FILTER='shared|templates'   test names matching a regex
#   make conformance FILTER='tags:fake-only'     by tag (tags:a,!b;c = (a and not b) or c)
#   make conformance JOBS=4                   parallel; "serial" tests hold their node alone
#   make conformance CONFORMANCE_REPORT_DIR=out  TAP and JUnit elsewhere

CONFORMANCE_REPORT_DIR ?= conformance/reports

.PHONY: conformance
conformance: export CONFORMANCE_FILTER := $(or $(FILTER),$(CONFORMANCE_FILTER))
conformance: export CONFORMANCE_JOBS := $(or $(JOBS),$(CONFORMANCE_JOBS),1)
conformance: export CONFORMANCE_REPORT_DIR := $(CONFORMANCE_REPORT_DIR)
conformance: ## run the DRA scenarios against the kubeconfig's cluster (FILTER=regex|tags:EXPR JOBS=N); TAP + JUnit in conformance/reports/
	@conformance/cluster/run.sh

BATS_SUITES += conformance/cluster/selftest
LINT_SHELL += conformance/cluster/run.sh conformance/cluster/setup_suite.bash \
  $(wildcard conformance/cluster/lib/*.bash conformance/cluster/*.bats) \
  $(wildcard conformance/cluster/selftest/*.bash conformance/cluster/selftest/*.bats) \
  conformance/cluster/selftest/bin/kubectl
