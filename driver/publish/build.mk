# SPDX-License-Identifier: Apache-2.0
# driver/publish/: ResourceSlice building, the pool sync plan, the slice
# publisher threads, and the slice watch and sync gate that many publishers
# share (the fleet's).  Built as $(PUBLISH_LIB).  It uses device_attributes_json
# from driver/device/ (one definition of the attributes for slices and device
# metadata), so programs that use it link:
#   $(PUBLISH_LIB) $(HEALTH_LIB) $(DEVICE_LIB) $(KUBE_LIB) $(COMMON_LIB)
#   $(HEALTH_LDLIBS) $(KUBE_LDLIBS)
$(eval $(call static_lib,PUBLISH,publish,$(wildcard driver/publish/*.c)))
# What slices take from bind/ (binding conditions) and device/ (attributes).
PUBLISH_ATTRS  := $(OBJ)/driver/bind/binding_conditions.o $(DEVICE_LIB)
# driver/build.mk includes health/ after publish/: name its library directly.
PUBLISH_HEALTH := $(BUILD)/lib/libhealth.a
PUBLISH_CFLAGS := $(shell pkg-config --cflags jansson 2>/dev/null)

$(PUBLISH_OBJS): CPPFLAGS += $(PUBLISH_CFLAGS)

# The unit tests below, each with what they share (tests/slice_fixture.c):
#   test_publish      API name rules, slice building and splitting, the sync plan
#   test_slice_kinds  virtual GPUs (their own slices, skipNodeOperations) and
#                     attachable GPUs (binding conditions) in the slices
#   test_sync_run     the slice-by-slice sync (one desired slice at a time, call
#                     order, sharing without changing the LIST answer, the comparison)
#   test_sync_gate    the gate many publishers share (slots, order, giving up)
PUBLISH_TESTS := test_publish test_slice_kinds test_sync_run test_sync_gate
UNIT_TESTS += $(PUBLISH_TESTS:%=$(BIN)/%)
$(PUBLISH_TESTS:%=$(BIN)/%): $(BIN)/%: $(OBJ)/driver/publish/tests/%.o \
    $(OBJ)/driver/publish/tests/slice_fixture.o $(PUBLISH_LIB) $(PUBLISH_HEALTH) $(PUBLISH_ATTRS) \
    $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(HEALTH_LDLIBS) $(LDLIBS)

# The bats suite runs publish-test-driver (driver/plugin.mk) against the
# API server stand-in.
ifneq ($(wildcard conformance/node/standins/apiserver/build.mk),)
BATS_SUITES += driver/publish/tests
endif
