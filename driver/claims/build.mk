# SPDX-License-Identifier: Apache-2.0
# driver/claims/: where the plugin's ResourceClaims come from and how their
# status is written: the claim watch (which also serves prepare its claims),
# the claim work queue and the claim read and status PATCH of the
# background writers (driver/health/, driver/bind/).  Built as
# $(CLAIMS_LIB).  Programs that use it link:
#   $(CLAIMS_LIB) $(KUBE_LIB) $(COMMON_LIB) $(CLAIMS_LDLIBS)
CLAIMS_SRCS   := $(wildcard driver/claims/*.c)
CLAIMS_OBJS   := $(CLAIMS_SRCS:%.c=$(OBJ)/%.o)
CLAIMS_LIB    := $(BUILD)/lib/libclaims.a
CLAIMS_CFLAGS := $(shell pkg-config --cflags jansson 2>/dev/null)
CLAIMS_LDLIBS := $(shell pkg-config --libs jansson 2>/dev/null) -lpthread

$(CLAIMS_OBJS): CPPFLAGS += $(CLAIMS_CFLAGS)

$(CLAIMS_LIB): $(CLAIMS_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# Unit tests: the claim work queue (collapse per uid, order, settling).
UNIT_TESTS += $(BIN)/test_claim_queue
$(BIN)/test_claim_queue: $(OBJ)/driver/claims/tests/test_claim_queue.o $(CLAIMS_LIB) $(KUBE_LIB) \
    $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(CLAIMS_LDLIBS) $(LDLIBS)
