# SPDX-License-Identifier: Apache-2.0
# driver/metrics/: the kubelet plugin's Prometheus metrics (metrics.h) and
# their HTTP endpoint on libmicrohttpd (metrics_server.h), off unless
# --metrics-address is given.  Built as $(METRICS_LIB); programs link
#   $(METRICS_LIB) $(COMMON_LIB) $(METRICS_LDLIBS)
$(eval $(call static_lib,METRICS,metrics,driver/metrics/metrics.c driver/metrics/metrics_server.c))
METRICS_LDLIBS := $(shell pkg-config --libs libmicrohttpd 2>/dev/null) -lpthread

$(METRICS_OBJS) $(OBJ)/driver/metrics/tests/test_metrics.o: \
  CPPFLAGS += $(shell pkg-config --cflags libmicrohttpd 2>/dev/null)

# Unit tests: the exposition format, recording from threads, addresses, and
# the endpoint answering over a socket.
$(eval $(call unit_test,test_metrics,$(OBJ)/driver/metrics/tests/test_metrics.o $(METRICS_LIB) \
  $(COMMON_LIB),$(METRICS_LDLIBS)))
