# SPDX-License-Identifier: Apache-2.0
# driver/device/: the plugin's model of a device: the shared, immutable
# device snapshot the inventory hands out, the personality that names the
# devices, and the attributes a device is published with (slices and device
# metadata).  Built as $(DEVICE_LIB), a
# provider of publish/, health/, bind/ and prepare/: link it after them.
# driver/build.mk includes this fragment first, so the others can name
# $(DEVICE_LIB) in their rules.
DEVICE_SRCS   := $(wildcard driver/device/*.c)
DEVICE_OBJS   := $(DEVICE_SRCS:%.c=$(OBJ)/%.o)
DEVICE_LIB    := $(BUILD)/lib/libdevice.a
DEVICE_LDLIBS := $(shell pkg-config --libs jansson 2>/dev/null)

$(DEVICE_OBJS): CPPFLAGS += $(shell pkg-config --cflags jansson 2>/dev/null)

$(DEVICE_LIB): $(DEVICE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# Unit tests: the shared device snapshot (ownership, reference counting
# across threads).
UNIT_TESTS += $(BIN)/test_device_snapshot
$(BIN)/test_device_snapshot: $(OBJ)/driver/device/tests/test_device_snapshot.o $(DEVICE_LIB) \
    $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka -lpthread $(LDLIBS)

# Unit tests: the personalities (flag values, NVIDIA's device names,
# renaming a snapshot) and the nvidia personality's attributes.
UNIT_TESTS += $(BIN)/test_personality
$(BIN)/test_personality: $(OBJ)/driver/device/tests/test_personality.o $(DEVICE_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(DEVICE_LDLIBS) $(LDLIBS)
