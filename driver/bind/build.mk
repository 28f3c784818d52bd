# SPDX-License-Identifier: Apache-2.0
# driver/bind/: device binding conditions (KEP-5007) for attachable fake
# GPUs: the published fields and the binder threads that attach devices
# and set the claim conditions.  Built as $(BIND_LIB); programs link it
# before $(CLAIMS_LIB) and $(KUBE_LIB).
$(eval $(call static_lib,BIND,bind,$(wildcard driver/bind/*.c)))
BIND_CFLAGS := $(shell pkg-config --cflags jansson 2>/dev/null)

$(BIND_OBJS): CPPFLAGS += $(BIND_CFLAGS)

# Unit tests: the binding-condition JSON (published fields, reported
# conditions, status merge).
$(eval $(call unit_test,test_binding_conditions,$(OBJ)/driver/bind/tests/test_binding_conditions.o \
  $(BIND_LIB) $(COMMON_LIB),$(shell pkg-config --libs jansson 2>/dev/null)))
