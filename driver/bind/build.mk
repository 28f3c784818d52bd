# SPDX-License-Identifier: Apache-2.0
# driver/bind/: device binding conditions (KEP-5007) for attachable fake
# GPUs: the published fields and the binder threads that attach devices
# and set the claim conditions.  Built as $(BIND_LIB); programs link it
# before $(CLAIMS_LIB) and $(KUBE_LIB).
BIND_SRCS   := $(wildcard driver/bind/*.c)
BIND_OBJS   := $(BIND_SRCS:%.c=$(OBJ)/%.o)
BIND_LIB    := $(BUILD)/lib/libbind.a
BIND_CFLAGS := $(shell pkg-config --cflags jansson 2>/dev/null)

$(BIND_OBJS): CPPFLAGS += $(BIND_CFLAGS)

$(BIND_LIB): $(BIND_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# Unit tests: the binding-condition JSON (published fields, reported
# conditions, status merge).
UNIT_TESTS += $(BIN)/test_binding_conditions
$(BIN)/test_binding_conditions: $(OBJ)/driver/bind/tests/test_binding_conditions.o $(BIND_LIB) \
    $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(shell pkg-config --libs jansson 2>/dev/null) $(LDLIBS)
