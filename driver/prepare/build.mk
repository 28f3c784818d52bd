# SPDX-License-Identifier: Apache-2.0
# driver/prepare/: the prepare path of the kubelet plugin (claims, opaque
# config, CDI specs, device metadata, checkpoint), independent of gRPC.
# docs/prepare.md describes what it writes.

$(eval $(call static_lib,PREPARE,prepare,$(wildcard driver/prepare/*.c)))
PREPARE_LIBS := -ljansson -pthread

PREPARE_TESTS := test_prepare_names test_prepare_config test_prepare_cdi test_prepare_flow \
                 test_prepare_checkpoint test_prepare_journal test_prepare_record \
                 test_prepare_reaper test_prepare_shared test_prepare_allocation \
                 test_nvidia_config
UNIT_TESTS += $(PREPARE_TESTS:%=$(BIN)/%)

# Every test links the shared fixture (claims, devices, temp dirs).
$(PREPARE_TESTS:%=$(BIN)/%): $(BIN)/%: $(OBJ)/driver/prepare/tests/%.o \
    $(OBJ)/driver/prepare/tests/prepare_fixture.o $(PREPARE_LIB) $(DEVICE_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(PREPARE_LIBS) $(LDLIBS)
