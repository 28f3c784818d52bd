# SPDX-License-Identifier: Apache-2.0
# fleet/: fakehw-fleet-publisher, the ResourceSlices of many fake nodes from
# one process (docs/fleet.md): fakehw's config, inventory, flips and attach
# timer (FAKEHW_LIB) feeding the plugin's slice publisher (PUBLISH_LIB), one
# pool per node, and the plugin's binder (BIND_LIB) on one claim watch
# (CLAIMS_LIB) for every node.
FLEET_SRCS := fleet/fleet_node.c fleet/fleet_limits.c fleet/fleet_bind.c fleet/fleet_pools.c
FLEET_OBJS := $(FLEET_SRCS:%.c=$(OBJ)/%.o)
FLEET_MAIN := $(OBJ)/fleet/fleet_main.o
FLEET_LINK := $(FLEET_OBJS) $(FAKEHW_LIB) $(PUBLISH_LIB) $(HEALTH_LIB) $(PUBLISH_ATTRS) $(BIND_LIB) \
  $(CLAIMS_LIB) $(KUBE_LIB) $(COMMON_LIB)

$(FLEET_OBJS) $(FLEET_MAIN) $(OBJ)/fleet/tests/test_fleet.o: CPPFLAGS += -Ifakehw \
  $(FAKEHW_PKG_CFLAGS) $(PUBLISH_CFLAGS)
$(OBJ)/fleet/tests/test_fleet.o: CPPFLAGS += -DFLEET_TEST_CONFIGS='"$(abspath fleet/tests/configs)"'

BINS += $(BIN)/fakehw-fleet-publisher
$(BIN)/fakehw-fleet-publisher: $(FLEET_MAIN) $(FLEET_LINK)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(FAKEHW_PKG_LIBS) $(KUBE_LDLIBS) $(HEALTH_LDLIBS) -lpthread $(LDLIBS)

# Unit tests: a node's devices from its config section, flips reaching its
# listener, the API server's limits on the built slices.
$(eval $(call unit_test,test_fleet,$(OBJ)/fleet/tests/test_fleet.o $(FLEET_LINK),$(FAKEHW_PKG_LIBS) \
  $(KUBE_LDLIBS) $(HEALTH_LDLIBS) -lpthread))

BATS_SUITES += fleet/tests
LINT_SHELL  += scripts/fleet/fleet.sh bench/fleet/sched.sh bench/fleet/binding.sh
