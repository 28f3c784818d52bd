# SPDX-License-Identifier: Apache-2.0
# driver/device/: the plugin's model of a device: the shared, immutable
# device snapshot the inventory hands out, the personality that names the
# devices, and the attributes a device is published with (slices and device
# metadata).  Built as $(DEVICE_LIB), a
# provider of publish/, health/, bind/ and prepare/: link it after them.
# driver/build.mk includes this fragment first, so the others can name
# $(DEVICE_LIB) in their rules.
$(eval $(call static_lib,DEVICE,device,$(wildcard driver/device/*.c)))
DEVICE_LDLIBS := $(shell pkg-config --libs jansson 2>/dev/null)

$(DEVICE_OBJS): CPPFLAGS += $(shell pkg-config --cflags jansson 2>/dev/null)

# Unit tests: the shared device snapshot (ownership, reference counting
# across threads).
$(eval $(call unit_test,test_device_snapshot,$(OBJ)/driver/device/tests/test_device_snapshot.o \
  $(DEVICE_LIB) $(COMMON_LIB),-lpthread))

# Unit tests: the personalities (flag values, NVIDIA's device names,
# renaming a snapshot) and the nvidia personality's attributes.
$(eval $(call unit_test,test_personality,$(OBJ)/driver/device/tests/test_personality.o \
  $(DEVICE_LIB) $(COMMON_LIB),$(DEVICE_LDLIBS)))
