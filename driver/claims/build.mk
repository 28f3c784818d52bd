# SPDX-License-Identifier: Apache-2.0
# driver/claims/: where the plugin's ResourceClaims come from and how their
# status is written: the claim watch (which also serves prepare its claims),
# the claim work queue and the claim read and status PATCH of the
# background writers (driver/health/, driver/bind/).  Built as
# $(CLAIMS_LIB).  Programs that use it link:
#   $(CLAIMS_LIB) $(KUBE_LIB) $(COMMON_LIB) $(CLAIMS_LDLIBS)
$(eval $(call static_lib,CLAIMS,claims,$(wildcard driver/claims/*.c)))
CLAIMS_CFLAGS := $(shell pkg-config --cflags jansson 2>/dev/null)
CLAIMS_LDLIBS := $(shell pkg-config --libs jansson 2>/dev/null) -lpthread

$(CLAIMS_OBJS): CPPFLAGS += $(CLAIMS_CFLAGS)

# Unit tests: the claim work queue (collapse per uid, order, settling).
$(eval $(call unit_test,test_claim_queue,$(OBJ)/driver/claims/tests/test_claim_queue.o \
  $(CLAIMS_LIB) $(KUBE_LIB) $(COMMON_LIB),$(CLAIMS_LDLIBS)))
