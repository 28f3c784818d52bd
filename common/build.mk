# SPDX-License-Identifier: Apache-2.0
# common/: the small C library every program links, in two parts.
#   base/    the generic idioms: errors, klog logging, flags with env
#            fallbacks, cleanup, allocation, retries and clocks, atomic file
#            writes, text and quantity rules.  It includes nothing outside
#            base/ (scripts/check-conformance-deps.sh, in make lint).
#   fakehw/  the fakehw tree contract: its layout, reader, watcher and
#            attach requests, built on base/.
# version.{c,h} (the release and commit) stay at the top: scripts read the
# release from common/version.h.  Headers are included by bare name.
CPPFLAGS    += -Icommon/base -Icommon/fakehw
COMMON_SRCS := $(wildcard common/*.c common/base/*.c common/fakehw/*.c)
$(eval $(call static_lib,COMMON,common,$(COMMON_SRCS)))

$(eval $(call unit_test,test_common,$(OBJ)/common/tests/test_common.o $(COMMON_LIB),))

# The shared idiom: cleanup.h, xalloc.h, error_setv.
$(eval $(call unit_test,test_idiom,$(OBJ)/common/base/tests/test_idiom.o $(COMMON_LIB),))

# SHA-1 and SHA-256 over their shared block framing (md_block.h).
$(eval $(call unit_test,test_sha,$(OBJ)/common/base/tests/test_sha.o $(COMMON_LIB),))

# What the programs' mains share: flags_main, flags_usage_error, stop_signals.h.
$(eval $(call unit_test,test_main_helpers,$(OBJ)/common/base/tests/test_main_helpers.o \
  $(COMMON_LIB),-pthread))

# Backoff, the signal-proof sleep, the monotonic clock and its waits.
$(eval $(call unit_test,test_retry,$(OBJ)/common/base/tests/test_retry.o $(COMMON_LIB),-pthread))

# The tree reader and watcher that fakegpu-smi and the plugin share.
$(eval $(call unit_test,test_fakehw_tree,$(OBJ)/common/fakehw/tests/test_fakehw_tree.o \
  $(COMMON_LIB),))

# The watcher test runs a tiny FUSE server (libfuse3) to test FUSE poll.
$(OBJ)/common/fakehw/tests/test_fakehw_watch.o: CPPFLAGS += $(shell pkg-config --cflags fuse3)
$(eval $(call unit_test,test_fakehw_watch,$(OBJ)/common/fakehw/tests/test_fakehw_watch.o \
  $(COMMON_LIB),$(shell pkg-config --libs fuse3) -pthread))

# The commit the programs report (common/version.h): FAKEHW_GIT_COMMIT when
# given (the image build, whose context has no .git), else git describe.
# The header is rewritten only when the text changes, so an unchanged commit
# rebuilds nothing.  Characters other than [A-Za-z0-9._+-] are dropped: it
# becomes a C string and a Prometheus label value.
FAKEHW_GIT_COMMIT ?= $(shell git describe --always --dirty 2>/dev/null)
FAKEHW_GIT_HEADER := $(GEN)/fakehw_git.h
.PHONY: FORCE
$(FAKEHW_GIT_HEADER): FORCE
	@mkdir -p $(dir $@)
	@c=$$(printf '%s' '$(subst ',,$(FAKEHW_GIT_COMMIT))' | tr -cd 'A-Za-z0-9._+-' | cut -c1-40); \
	  printf '#define FAKEHW_GIT_COMMIT "%s"\n' "$${c:-unknown}" >$@.tmp; \
	  if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(OBJ)/common/version.o: $(FAKEHW_GIT_HEADER)
