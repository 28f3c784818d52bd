# SPDX-License-Identifier: Apache-2.0
# fakehw/: the FUSE fake-GPU daemon (build/bin/fakehw), its unit tests and
# its bats suite.  fakehw/smi/ has its own fragment.
FAKEHW_PKG_CFLAGS := $(shell pkg-config --cflags fuse3 yaml-0.1 2>/dev/null)
FAKEHW_PKG_LIBS   := $(shell pkg-config --libs fuse3 yaml-0.1 2>/dev/null)

# Everything but the FUSE layer and the commands: what the unit tests link.
FAKEHW_CORE_SRCS := catalogue.c config.c config_mig.c config_parse.c config_resolve.c config_sharing.c config_yaml.c \
  attach.c attacher.c devnodes.c fuse_access.c mig_profiles.c duration.c flips.c inventory.c mountpoint.c \
  name_index.c takeover.c uuid.c
FAKEHW_CMD_SRCS  := main.c daemon.c fuse_tree.c flip_cli.c attach_cli.c xid_cli.c cli_tree.c check_cli.c node_name.c
FAKEHW_CORE_OBJS := $(FAKEHW_CORE_SRCS:%.c=$(OBJ)/fakehw/%.o)
FAKEHW_CMD_OBJS  := $(FAKEHW_CMD_SRCS:%.c=$(OBJ)/fakehw/%.o)
FAKEHW_LIB       := $(BUILD)/lib/libfakehw.a

FAKEHW_TESTS := test_fakehw_attach test_fakehw_catalogue test_fakehw_config test_fakehw_duration \
  test_fakehw_flips test_fakehw_fuse_access test_fakehw_inventory test_fakehw_mig test_fakehw_uuid \
  test_quantity
FAKEHW_TEST_OBJS := $(FAKEHW_TESTS:%=$(OBJ)/fakehw/tests/%.o)

$(FAKEHW_CORE_OBJS) $(FAKEHW_CMD_OBJS) $(FAKEHW_TEST_OBJS): CPPFLAGS += -Ifakehw $(FAKEHW_PKG_CFLAGS)
# The config tests read the sample configs of fakehw/tests/configs.
$(OBJ)/fakehw/tests/test_fakehw_config.o: CPPFLAGS += \
  -DFAKEHW_TEST_CONFIGS='"$(abspath fakehw/tests/configs)"'

$(FAKEHW_LIB): $(FAKEHW_CORE_OBJS)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

BINS += $(BIN)/fakehw
$(BIN)/fakehw: $(FAKEHW_CMD_OBJS) $(FAKEHW_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(FAKEHW_PKG_LIBS) -lpthread $(LDLIBS)

UNIT_TESTS += $(FAKEHW_TESTS:%=$(BIN)/%)
$(FAKEHW_TESTS:%=$(BIN)/%): $(BIN)/%: $(OBJ)/fakehw/tests/%.o $(FAKEHW_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(FAKEHW_PKG_LIBS) -lpthread $(LDLIBS)

BATS_SUITES += fakehw/tests
LINT_SHELL  += fakehw/tests/helpers.bash

# fakehw-tree-dump: the bats suite's view of what fakehw_tree_list reads.
FAKEHW_TREE_DUMP := $(BUILD)/test-bin/fakehw-tree-dump
$(FAKEHW_TREE_DUMP): $(OBJ)/fakehw/tests/tree_dump.o $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
bats: $(FAKEHW_TREE_DUMP)
