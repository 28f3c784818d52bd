# SPDX-License-Identifier: Apache-2.0
# conformance/node/standins/apiserver/: apiserver-standin, the in-memory API
# server of the node suite and the benchmarks (libmicrohttpd + jansson).
APISERVER_SRCS   := $(wildcard conformance/node/standins/apiserver/*.c)
APISERVER_OBJS   := $(APISERVER_SRCS:%.c=$(OBJ)/%.o)
APISERVER_LDLIBS := $(shell pkg-config --libs libmicrohttpd jansson gnutls 2>/dev/null) -lpthread

$(APISERVER_OBJS): CPPFLAGS += $(shell pkg-config --cflags libmicrohttpd jansson gnutls 2>/dev/null)

BINS += $(BIN)/apiserver-standin
$(BIN)/apiserver-standin: $(APISERVER_OBJS) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(APISERVER_LDLIBS) $(LDLIBS)

BATS_SUITES += conformance/node/standins/apiserver/tests
