# SPDX-License-Identifier: Apache-2.0
# conformance/node: the node suite, which needs no cluster.  Its bats files in
# tests/ run with `make test`; lib/runtime.bash runs containers with podman so
# that the tests can check what a CDI spec injects (skips with the reason on
# machines without rootful podman, runc and busybox-static).
BATS_SUITES += conformance/node/tests
LINT_SHELL += conformance/node/lib/runtime.bash
LINT_SHELL += conformance/node/lib/node_env.bash

# `make soak`: the node suite's crash loop (tests/plugin_crash_loop.bats) for
# SOAK_CYCLES kills instead of the 15 of `make test`; its figures (cycles,
# kills, lost claims, orphan files, wall time) land in $(SOAK_REPORT).
SOAK_CYCLES ?= 300
SOAK_REPORT ?= $(BUILD)/soak.txt
.PHONY: soak
soak: all ## crash loop: SIGKILL the plugin SOAK_CYCLES (300) times during prepare/unprepare
	@mkdir -p $(dir $(SOAK_REPORT))
	FAKEHW_BIN=$(abspath $(BIN)) BATS_LIB_PATH=/usr/lib/bats CRASH_CYCLES=$(SOAK_CYCLES) \
	  CRASH_REPORT=$(abspath $(SOAK_REPORT)) bats $(BATS_FLAGS) conformance/node/tests/plugin_crash_loop.bats
	@cat $(SOAK_REPORT)
