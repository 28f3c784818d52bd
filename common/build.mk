# SPDX-License-Identifier: Apache-2.0
# common/: the small C library every program links: errors, klog logging,
# flags with env fallbacks, atomic file writes, the fakehw tree contract.
COMMON_SRCS := $(wildcard common/*.c)
COMMON_OBJS := $(COMMON_SRCS:%.c=$(OBJ)/%.o)
COMMON_LIB  := $(BUILD)/lib/libcommon.a

$(COMMON_LIB): $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

UNIT_TESTS += $(BIN)/test_common
$(BIN)/test_common: $(OBJ)/common/tests/test_common.o $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS)

# The shared idiom: cleanup.h, xalloc.h, error_setv.
UNIT_TESTS += $(BIN)/test_idiom
$(BIN)/test_idiom: $(OBJ)/common/tests/test_idiom.o $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(LDLIBS)
