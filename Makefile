# SPDX-License-Identifier: Apache-2.0
# fakehw-dra: fake GPUs for Kubernetes DRA.  `make help` lists the targets.
#
# Each component adds itself through its own build.mk fragment:
#   BINS        programs built by `make all`
#   UNIT_TESTS  cmocka test programs run by `make test`
#   BATS_SUITES directories of .bats files run by `make test`
#   LINT_SHELL  shell scripts checked by `make lint`
# Objects go to $(BUILD)/obj, programs to $(BUILD)/bin, generated code to $(BUILD)/gen.

.DEFAULT_GOAL := all
SHELL := /bin/bash

BUILD ?= build
SAN   ?=
CC    ?= cc
OBJ   := $(BUILD)/obj
BIN   := $(BUILD)/bin
GEN   := $(BUILD)/gen

# -Wno-format-truncation: messages are cut on purpose; path builders check snprintf's result.
CFLAGS_WARN := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral -Wno-format-truncation
# OPT is the optimisation level (make check sets it); pass OPT, not CFLAGS,
# so the mandatory flags below stay in.
OPT      ?= -O2 -g
CFLAGS   += $(OPT) -std=c11 $(CFLAGS_WARN) -MMD -MP -fno-strict-aliasing
CPPFLAGS += -D_GNU_SOURCE -I. -Icommon -I$(GEN)
LDFLAGS  ?=
LDLIBS   ?=
ifeq ($(SAN),1)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif
# The libFuzzer build (make fuzz, clang only): coverage for libFuzzer in every
# object; the fuzz targets link -fsanitize=fuzzer themselves.
ifeq ($(SAN),fuzz)
CFLAGS  += -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
           -fno-sanitize-recover=undefined -Wno-unknown-warning-option
LDFLAGS += -fsanitize=address,undefined
endif

PKG_GRPC     := $(shell pkg-config --cflags --libs grpc 2>/dev/null)
PKG_PROTOBUF := $(shell pkg-config --libs libprotobuf-c 2>/dev/null)

BINS        :=
UNIT_TESTS  :=
BATS_SUITES :=
LINT_SHELL  :=

# Compile any source of the tree into $(OBJ), mirroring its path.
$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# The two rules every fragment writes, as functions for $(eval $(call ...)).
# static_lib,VAR,NAME,SOURCES: VAR_OBJS, the objects of SOURCES, and VAR_LIB,
# $(BUILD)/lib/libNAME.a made of them (afresh: no object of a deleted source
# lingers in it).
define static_lib
$(1)_OBJS := $$(patsubst %.c,$$(OBJ)/%.o,$(3))
$(1)_LIB  := $$(BUILD)/lib/lib$(2).a
$$($(1)_LIB): $$($(1)_OBJS)
	@mkdir -p $$(dir $$@)
	rm -f $$@
	$$(AR) rcs $$@ $$^
endef

# unit_test,NAME,INPUTS,LIBS: the cmocka program $(BIN)/NAME, linked from
# INPUTS (objects and libraries, users before providers) with LIBS;
# `make unit` runs it.
define unit_test
UNIT_TESTS += $$(BIN)/$(1)
$$(BIN)/$(1): $(2)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) -o $$@ $$^ -lcmocka $(3) $$(LDLIBS)
endef

# Plain include: a missing fragment is an error, never a silently dropped
# component.  DEPS_ONLY=1 reads none of them, for the Dockerfile's cached
# layer that runs `make deps-debian` with only this file and the installer.
ifneq ($(DEPS_ONLY),1)
include common/build.mk
include proto/build.mk
include fakehw/build.mk
include fakehw/smi/build.mk
include driver/build.mk
include fleet/build.mk
include conformance/build.mk
include conformance/node/node-conformance.mk
include bench/build.mk
include manifests/build.mk
include fuzz/build.mk
include scripts/build.mk
endif

.PHONY: all test unit bats check valgrind clean deps deps-debian deps-node-image deps-cluster deps-check help format lint fuzz install uninstall demo readme-tour

all: $(BINS) ## build every program into build/bin

# A test program's stderr (the log lines of the code under test, and cmocka's
# messages) is kept in $(BUILD)/unit-logs; of a passing program only cmocka's
# own lines ("[  PASSED  ] ...") are shown, of a failing one all of it.
UNIT_LOGS := $(BUILD)/unit-logs
unit: $(UNIT_TESTS) ## run the cmocka unit tests (their log output is shown only on failure)
	@set -e; mkdir -p $(UNIT_LOGS); for t in $(UNIT_TESTS); do echo "== $$t"; \
	  log=$(UNIT_LOGS)/$${t##*/}.stderr; \
	  if ! $$t 2>$$log; then echo "== $$t failed; its stderr:"; cat $$log; exit 1; fi; \
	  grep -E '^\[' $$log || true; done

# bats runs against the programs of this build; BATS_LIB_PATH finds bats-support etc.
BATS_FLAGS ?= --print-output-on-failure
bats: all ## run the bats integration suites (real FUSE mounts, real binaries)
	@set -e; for s in $(BATS_SUITES); do echo "== $$s"; \
	  FAKEHW_BIN=$(abspath $(BIN)) K8SPROTO_SRC=$(abspath $(K8SPROTO_DIR)/src) \
	  BATS_LIB_PATH=/usr/lib/bats bats $(BATS_FLAGS) $$s; done

test: ## unit tests, then the bats suites (what CI runs)
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory bats

check: ## the same tests built with ASan + UBSan (in build/san), then a short fuzz run
	@$(MAKE) --no-print-directory BUILD=build/san SAN=1 OPT="-O1 -g" test
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_CHECK_SECONDS)

# libFuzzer needs clang; the fuzz build lives in build/fuzz (fuzz/build.mk).
FUZZ_CC            ?= clang
FUZZ_CHECK_SECONDS ?= 30
fuzz: ## build the libFuzzer targets (clang, ASan + UBSan) and run each FUZZ_SECONDS (60)
	@$(MAKE) --no-print-directory BUILD=build/fuzz SAN=fuzz CC=$(FUZZ_CC) OPT="-O1 -g" fuzz-run

valgrind: $(UNIT_TESTS) ## run the unit tests under valgrind (leaks and errors fail)
	@set -e; for t in $(UNIT_TESTS); do echo "== $$t"; \
	  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite $$t 2>&1; done

DEBIAN_PACKAGES := build-essential pkg-config clang-format valgrind \
  libgrpc-dev protobuf-compiler-grpc libprotobuf-c-dev protobuf-c-compiler \
  libfuse3-dev fuse3 libyaml-dev libcmocka-dev libcurl4-openssl-dev libjansson-dev \
  libmicrohttpd-dev bats bats-support bats-assert bats-file parallel shellcheck yamllint \
  busybox-static runc podman jq curl python3-grpcio python3-yaml openssl libgnutls28-dev help2man unzip shfmt \
  clang libclang-rt-dev
deps: deps-debian deps-node-image ## install every Debian package the build, the tests and make node-image need, then helm and kustomize (root)
	scripts/install-go-tools.sh

# The other install paths (docs/install.md).  make deps runs deps-node-image
# (a few Debian packages, and Go when there is none); deps-cluster builds
# kubectl from the k8s.io/kubernetes module, minutes of CPU that CI, which
# runs no cluster, does without: make deps-check proves it by a dry run.
deps-node-image: ## what make node-image and make base-image need: debootstrap, libseccomp-dev, gcc, ... (scripts/node-image/prereqs.sh) and Go 1.26 (root)
	scripts/install-deps.sh $$(scripts/node-image/prereqs.sh packages)
	scripts/install-go-tools.sh go

deps-cluster: ## kind v0.33.0 and kubectl KUBECTL_VERSION=$(KUBECTL_VERSION), for make kind-up and make conformance, built with Go from the module proxy (root)
	KUBECTL_VERSION="$(KUBECTL_VERSION)" scripts/install-go-tools.sh kind kubectl

deps-check: ## every install path without a cluster: the pinned modules of make deps and deps-cluster resolve on the module proxy, make node-image has what it needs (but a Docker Engine)
	KUBECTL_VERSION="$(KUBECTL_VERSION)" scripts/install-go-tools.sh --dry-run helm kustomize kind kubectl
	scripts/node-image/prereqs.sh check-tools

# The Debian packages alone: what building the programs needs (the image).
deps-debian:
	scripts/install-deps.sh $(DEBIAN_PACKAGES)

demo: all ## run the README's tour on this machine, no cluster needed (root; scripts/demo.sh)
	FAKEHW_BIN=$(abspath $(BIN)) scripts/demo.sh

readme-tour: all ## regenerate the README's tour from scripts/demo.sh (make test checks it)
	FAKEHW_BIN=$(abspath $(BIN)) scripts/readme-tour.sh update

# make install: the programs into $(DESTDIR)$(PREFIX)/bin, a man page each,
# made from its --help and --version by help2man, into share/man/man1, and
# the documents the --help texts and man pages name into share/doc/fakehw-dra.
PREFIX  ?= /usr/local
DESTDIR ?=
INSTALL_PROGRAMS := fakehw fakehw-kubelet-plugin fakegpu-smi fakehw-podresources
INSTALL_DOCS     := fakehw.md driver.md fakegpu-smi.md podresources.md metrics.md prepare.md troubleshooting.md
DOC_DIR          := $(PREFIX)/share/doc/fakehw-dra
MAN_NAME_fakehw                := fake GPUs served as a FUSE filesystem
MAN_NAME_fakehw-kubelet-plugin := DRA kubelet plugin for fakehw's fake GPUs
MAN_NAME_fakegpu-smi           := show the fake GPUs a container was given
MAN_NAME_fakehw-podresources   := list the DRA devices of a node's pods from the kubelet's PodResources API
# The document of each program, named in its man page's SEE ALSO.
MAN_DOC_fakehw                := fakehw.md
MAN_DOC_fakehw-kubelet-plugin := driver.md
MAN_DOC_fakegpu-smi           := fakegpu-smi.md
MAN_DOC_fakehw-podresources   := podresources.md
install: $(INSTALL_PROGRAMS:%=$(BIN)/%) ## install the programs, their man pages and documents (PREFIX=$(PREFIX) DESTDIR=)
	@command -v help2man >/dev/null || { echo "install: help2man is needed for the man pages (make deps)" >&2; exit 1; }
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/man/man1" "$(DESTDIR)$(DOC_DIR)"
	install -m 0755 $^ "$(DESTDIR)$(PREFIX)/bin/"
	install -m 0644 $(INSTALL_DOCS:%=docs/%) "$(DESTDIR)$(DOC_DIR)/"
	@set -e; seealso=$$(mktemp); trap 'rm -f "$$seealso"' EXIT; \
	for p in $(INSTALL_PROGRAMS); do \
	  echo "help2man $$p > $(DESTDIR)$(PREFIX)/share/man/man1/$$p.1"; \
	  case $$p in \
	  fakehw) n="$(MAN_NAME_fakehw)"; d=$(MAN_DOC_fakehw) ;; \
	  fakehw-kubelet-plugin) n="$(MAN_NAME_fakehw-kubelet-plugin)"; d=$(MAN_DOC_fakehw-kubelet-plugin) ;; \
	  fakegpu-smi) n="$(MAN_NAME_fakegpu-smi)"; d=$(MAN_DOC_fakegpu-smi) ;; \
	  fakehw-podresources) n="$(MAN_NAME_fakehw-podresources)"; d=$(MAN_DOC_fakehw-podresources) ;; \
	  esac; \
	  { echo "[SEE ALSO]"; \
	    for o in $(INSTALL_PROGRAMS); do [ $$o = $$p ] || echo ".BR $$o (1)"; done | sed '$$!s/$$/,/'; \
	    echo ".PP"; echo "The full reference: $(DOC_DIR)/$$d; the other documents of fakehw-dra are next to it."; \
	  } >"$$seealso"; \
	  v=$$("$(BIN)/$$p" --version); v=$${v#* }; v=$${v%% (*}; \
	  help2man -N --no-discard-stderr --version-string="$$v" --name="$$n" --include="$$seealso" \
	    --output="$(DESTDIR)$(PREFIX)/share/man/man1/$$p.1" "$(BIN)/$$p"; done

uninstall: ## remove what make install installed (same PREFIX and DESTDIR)
	rm -f $(INSTALL_PROGRAMS:%="$(DESTDIR)$(PREFIX)/bin/%") $(INSTALL_PROGRAMS:%="$(DESTDIR)$(PREFIX)/share/man/man1/%.1") \
	  $(INSTALL_DOCS:%="$(DESTDIR)$(DOC_DIR)/%")
	rmdir "$(DESTDIR)$(DOC_DIR)" 2>/dev/null || true

# Every tracked shell file, plus extensionless scripts the fragments name.
SHELL_FILES = $(sort $(LINT_SHELL) .ci/run $(shell git ls-files '*.sh' '*.bash' '*.bats' 2>/dev/null))
lint: ## shellcheck every script, check C formatting, the SPDX license lines, that conformance/ uses no driver/ code, bench/ only what it may and common/base/ no other code, and the modules and includes of docs/architecture.md
	shellcheck -x $(SHELL_FILES)
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')
	scripts/check-spdx.sh
	scripts/check-conformance-deps.sh
	scripts/check_architecture.py

format: ## reformat every C file with the repository's .clang-format
	clang-format -i $$(git ls-files '*.c' '*.h')

clean: ## remove build/
	rm -rf build

# $(VAR) in a target's text shows the variable's value.
HELP_VARS := IMAGE K8S_VERSION KUBECTL_VERSION PREFIX BUILD
help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | sort | \
	  sed $(foreach v,$(HELP_VARS),-e 's|$$($(v))|$($(v))|g') | \
	  awk 'BEGIN{FS=":.*## "} {printf "  %-18s %s\n", $$1, $$2}'

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)

# A fleet of KWOK nodes with fake GPUs on this host (docs/fleet.md).
NODES ?= 100
FLEET_CONFIG ?= bench/fleet/fleet-8gpu.yaml
.PHONY: fleet fleet-down
fleet: all ## a control plane without a kubelet, NODES (100) KWOK nodes and fakehw-fleet-publisher with FLEET_CONFIG (root; docs/fleet.md)
	FAKEHW_BIN=$(abspath $(BIN)) scripts/fleet/fleet.sh up "$(NODES)" "$(FLEET_CONFIG)"

fleet-down: ## delete every slice of the fleet and stop every process make fleet started
	FAKEHW_BIN=$(abspath $(BIN)) scripts/fleet/fleet.sh down

.PHONY: fleet-scenarios
fleet-scenarios: all ## the scale scenarios on the fleet make fleet brought up with NODES (docs/fleet.md)
	FAKEHW_BIN=$(abspath $(BIN)) FLEET_CONFIG=$(abspath $(FLEET_CONFIG)) bench/fleet/scenarios.sh "$(NODES)"
