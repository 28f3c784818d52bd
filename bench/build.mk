# SPDX-License-Identifier: Apache-2.0
# bench/: the project's own harnesses around the plugin, built on the
# conformance kit (never the other way round: scripts/check-conformance-deps.sh).
# `make bench`, the benchmarks (docs/benchmarks.md): fakehw-bench starts the
# API stand-in, fakehw and the plugin on loopback, plays the kubelet itself
# (the kubelet stand-in's gRPC client), measures, and writes
# $(BENCH_OUT)/results.md and results.json.  Not part of `make test`: only
# the statistics helpers have a unit test there.  node/: the plugin's
# white-box node tests, which `make test` runs.
BENCH_SRCS    := $(wildcard bench/*.c)
BENCH_OBJS    := $(BENCH_SRCS:%.c=$(OBJ)/%.o)
BENCH_PROGRAM := $(BUILD)/test-bin/fakehw-bench
BENCH_OUT     ?= $(BUILD)/bench
BENCH_RUNS    ?= 5
BENCH_FLAGS   ?=

$(BENCH_OBJS): | $(PROTO_HEADERS)

# The kubelet stand-in's gRPC client (the bench may use the kit; the kit never
# uses the driver).
BENCH_CLIENT_OBJS := $(OBJ)/conformance/node/standins/kubelet/grpc_client.o \
                     $(OBJ)/conformance/node/standins/kubelet/grpc_wire.o

$(BENCH_PROGRAM): $(BENCH_OBJS) $(BENCH_CLIENT_OBJS) $(DRIVER_GRPC_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(DRIVER_GRPC_LDLIBS) -lcurl -ljansson -lm $(LDLIBS)

.PHONY: bench
bench: all $(BENCH_PROGRAM) ## benchmarks on loopback (latency, start-up, RSS, flips, idle CPU); table in build/bench/results.md
	BENCH_COMMIT="$$(git describe --always --dirty 2>/dev/null || echo unknown)" \
	  $(BENCH_PROGRAM) run --bin $(BIN) --out $(BENCH_OUT) --runs $(BENCH_RUNS) $(BENCH_FLAGS)

# bench/ takes common/'s headers by bare name; test_main.h is common/tests/'s.
$(OBJ)/bench/tests/test_bench_stats.o: CPPFLAGS += -Icommon/tests
$(eval $(call unit_test,test_bench_stats,$(OBJ)/bench/tests/test_bench_stats.o $(OBJ)/bench/stats.o,-lm))

# White-box tests of the plugin in the conformance kit's node environment:
# they read the plugin's own log (the kit's tests never do).
BATS_SUITES += bench/node
