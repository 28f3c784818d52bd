# SPDX-License-Identifier: Apache-2.0
# driver/kube/: the Kubernetes API client, built as $(KUBE_LIB).
# Programs that use it link:  $(KUBE_LIB) $(COMMON_LIB) $(KUBE_LDLIBS)
$(eval $(call static_lib,KUBE,kube,$(wildcard driver/kube/*.c)))
KUBE_CFLAGS := $(shell pkg-config --cflags libcurl jansson yaml-0.1 2>/dev/null)
KUBE_LDLIBS := $(shell pkg-config --libs libcurl jansson yaml-0.1 2>/dev/null) -lpthread

$(KUBE_OBJS): CPPFLAGS += -Idriver/kube $(KUBE_CFLAGS)

# Unit tests: kubeconfig / in-cluster loading; backoff, escaping, base64, error text.
KUBE_TEST_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(wildcard driver/kube/tests/*.c))
$(KUBE_TEST_OBJS): CPPFLAGS += -Idriver/kube $(KUBE_CFLAGS)

UNIT_TESTS += $(BIN)/test_kube_config $(BIN)/test_kube_helpers $(BIN)/test_kube_client
$(BIN)/test_kube_config $(BIN)/test_kube_helpers: $(BIN)/test_kube_%: \
    $(OBJ)/driver/kube/tests/test_kube_%.o $(KUBE_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcmocka $(KUBE_LDLIBS) $(LDLIBS)

# Integration test of the client against the API server stand-in, which it
# starts from its own directory ($(BIN)/apiserver-standin).
$(BIN)/test_kube_client: $(OBJ)/driver/kube/tests/test_kube_client.o \
    $(OBJ)/driver/kube/tests/standin_proc.o $(KUBE_LIB) $(COMMON_LIB) | $(BIN)/apiserver-standin
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) -lcmocka $(KUBE_LDLIBS) $(LDLIBS)
