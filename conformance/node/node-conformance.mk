# SPDX-License-Identifier: Apache-2.0
# `make node-conformance`: the node-level conformance suite of a DRA kubelet
# plugin (conformance/node/tests), no cluster needed, with TAP on stdout and
# in $(NODE_CONFORMANCE_OUT)/results.tap, and a JUnit report in
# $(NODE_CONFORMANCE_OUT)/report.xml.  Runs as root (FUSE, device nodes, podman).
#
# Against another driver's plugin (docs/node-conformance.md):
#   make node-conformance NODE_DRIVER_NAME=gpu.example.com \
#     NODE_PLUGIN_CMD='/path/to/plugin --node-name {node} --kubeconfig {kubeconfig} ...'
# NODE_PLUGIN_CMD, NODE_DRIVER_NAME, NODE_FAKE_DRIVER, NODE_SKIP_TAGS,
# NODE_WAIT_SCALE, NODE_STOP_SECONDS and FAKEHW_REQUIRE_RUNTIME reach the suite
# from the environment or the make command line (make exports both); they are
# not given defaults here, because "unset" means something to the suite.

# The plugin's command line is shell text: a "$" in it ("$0", "$@",
# "$HOME") reaches the suite as written, not as a make reference.
ifdef NODE_PLUGIN_CMD
override NODE_PLUGIN_CMD := $(value NODE_PLUGIN_CMD)
export NODE_PLUGIN_CMD
endif

NODE_CONFORMANCE_OUT   ?= $(BUILD)/node-conformance
NODE_CONFORMANCE_TESTS ?= conformance/node/tests
# Parallel bats jobs (GNU parallel); every test has its own directories and ports.
NODE_CONFORMANCE_JOBS  ?= 1
# A bats --filter regex, e.g. NODE_CONFORMANCE_FILTER='^prepare'.
NODE_CONFORMANCE_FILTER ?=

.PHONY: node-conformance
node-conformance: all ## node-level conformance of a DRA kubelet plugin: TAP + JUnit (docs/node-conformance.md)
	@rm -rf $(NODE_CONFORMANCE_OUT) && mkdir -p $(NODE_CONFORMANCE_OUT)
	@set -o pipefail; FAKEHW_BIN=$(abspath $(BIN)) BATS_LIB_PATH=/usr/lib/bats \
	  bats --formatter tap --report-formatter junit --output $(NODE_CONFORMANCE_OUT) \
	  $(if $(filter-out 1,$(NODE_CONFORMANCE_JOBS)),--jobs $(NODE_CONFORMANCE_JOBS)) \
	  $(if $(NODE_CONFORMANCE_FILTER),--filter '$(NODE_CONFORMANCE_FILTER)') \
	  $(NODE_CONFORMANCE_TESTS) | tee $(NODE_CONFORMANCE_OUT)/results.tap
