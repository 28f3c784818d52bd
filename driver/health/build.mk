# SPDX-License-Identifier: Apache-2.0
# driver/health/: device health (taints, claim conditions) and the claim
# device-status writer.  Built as $(HEALTH_LIB).  Programs that use it link:
#   $(HEALTH_LIB) $(CLAIMS_LIB) $(DEVICE_LIB) $(KUBE_LIB) $(COMMON_LIB) $(HEALTH_LDLIBS)
$(eval $(call static_lib,HEALTH,health,$(wildcard driver/health/*.c)))
HEALTH_CFLAGS := $(shell pkg-config --cflags jansson 2>/dev/null)
HEALTH_LDLIBS := $(shell pkg-config --libs jansson 2>/dev/null) -lpthread

$(HEALTH_OBJS): CPPFLAGS += $(HEALTH_CFLAGS)

# Unit tests: classification, taint values, health diffs, claim status JSON.
$(eval $(call unit_test,test_health,$(OBJ)/driver/health/tests/test_health.o $(HEALTH_LIB) \
  $(CLAIMS_LIB) $(DEVICE_LIB) $(COMMON_LIB),$(HEALTH_LDLIBS)))

# Unit tests: NVIDIA's ignored XIDs and the additional list.
$(eval $(call unit_test,test_xid_policy,$(OBJ)/driver/health/tests/test_xid_policy.o \
  $(HEALTH_LIB) $(COMMON_LIB),$(HEALTH_LDLIBS)))

# The bats suite runs publish-test-driver (driver/plugin.mk) against the
# API server stand-in.
ifneq ($(wildcard conformance/node/standins/apiserver/build.mk),)
BATS_SUITES += driver/health/tests
endif
