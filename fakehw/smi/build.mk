# SPDX-License-Identifier: Apache-2.0
# fakehw/smi/: fakegpu-smi, the static in-container inspector.  The unit
# tests of the fakehw tree reader and watcher it shares with the driver are
# in common/build.mk.

SMI_SRCS := fakehw/smi/fakegpu_smi.c fakehw/smi/smi_fields.c fakehw/smi/smi_known_fields.c \
  fakehw/smi/smi_report.c fakehw/smi/smi_select.c

# fakegpu-smi runs inside arbitrary containers (busybox too): linked -static
# against libc and the common library only, and never with sanitizers (they
# cannot link statically), whatever SAN and CFLAGS say.  So it has its own
# objects, common ones included, under $(OBJ)/static.
SMI_OBJ         := $(OBJ)/static
SMI_CFLAGS      := -O2 -g -std=c11 $(CFLAGS_WARN) -MMD -MP -fno-strict-aliasing
SMI_OBJS        := $(SMI_SRCS:%.c=$(SMI_OBJ)/%.o)
SMI_COMMON_OBJS := $(COMMON_SRCS:%.c=$(SMI_OBJ)/%.o)
SMI_COMMON_LIB  := $(BUILD)/lib/libcommon-static.a

$(SMI_OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(SMI_CFLAGS) -c $< -o $@

$(SMI_OBJ)/common/version.o: $(FAKEHW_GIT_HEADER)

$(SMI_COMMON_LIB): $(SMI_COMMON_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

BINS += $(BIN)/fakegpu-smi
$(BIN)/fakegpu-smi: $(SMI_OBJS) $(SMI_COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) -static -o $@ $^

BATS_SUITES += fakehw/smi/tests
LINT_SHELL  += fakehw/smi/tests/fakegpu_smi.bats fakehw/smi/tests/tree_helpers.bash
