# SPDX-License-Identifier: Apache-2.0
# fakehw-kubelet-plugin: driver/main.c, the inventory and the signal thread,
# linked with every driver part.  Order matters for static libraries: users
# before providers.
PLUGIN_OBJS := $(OBJ)/driver/main.o $(OBJ)/driver/inventory.o $(OBJ)/driver/shutdown.o
PLUGIN_LIBS := $(DRIVER_GRPC_LIB) $(PROTO_LIB) $(PUBLISH_LIB) $(BIND_LIB) $(HEALTH_LIB) $(CLAIMS_LIB) \
               $(PREPARE_LIB) $(DEVICE_LIB) $(KUBE_LIB) $(METRICS_LIB) $(COMMON_LIB)

# main.c includes the gRPC services, whose headers include generated code.
$(PLUGIN_OBJS): | $(PROTO_HEADERS)

BINS += $(BIN)/fakehw-kubelet-plugin
$(BIN)/fakehw-kubelet-plugin: $(PLUGIN_OBJS) $(PLUGIN_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(PLUGIN_OBJS) $(PLUGIN_LIBS) $(KUBE_LDLIBS) $(HEALTH_LDLIBS) \
	    $(PREPARE_LIBS) $(DRIVER_GRPC_LDLIBS) $(METRICS_LDLIBS) $(LDLIBS)

# Unit test of the inventory on a plain tree (shared, immutable snapshots).
# Its source is driver/tests/test_inventory.c.
$(eval $(call unit_test,test_inventory,$(OBJ)/driver/tests/test_inventory.o $(OBJ)/driver/inventory.o \
  $(DEVICE_LIB) $(COMMON_LIB),$(HEALTH_LDLIBS)))

# The integration test program of driver/publish and driver/health: the
# publisher, the claim status writer and the inventory, no gRPC (source
# driver/tests/publish_test_driver.c).  Lives in $(BUILD)/test-bin (not a
# shipped program); their bats suites run it against the API server stand-in.
PUBLISH_TEST_DRIVER := $(BUILD)/test-bin/publish-test-driver
$(PUBLISH_TEST_DRIVER): $(OBJ)/driver/tests/publish_test_driver.o $(OBJ)/driver/inventory.o \
    $(PUBLISH_LIB) $(HEALTH_LIB) $(PUBLISH_ATTRS) $(CLAIMS_LIB) $(KUBE_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(KUBE_LDLIBS) $(HEALTH_LDLIBS) $(LDLIBS)
ifneq ($(wildcard conformance/node/standins/apiserver/build.mk),)
bats: $(PUBLISH_TEST_DRIVER)
endif
