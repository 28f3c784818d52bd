# SPDX-License-Identifier: Apache-2.0
# fuzz/: libFuzzer targets for the inputs the programs take from outside
# (docs/reliability.md, "Fuzzing").  They need clang; `make fuzz` builds them
# in build/fuzz with SAN=fuzz (libFuzzer + ASan + UBSan) and runs each for
# FUZZ_SECONDS on a scratch copy of its seed corpus (fuzz/corpus/<target>/),
# so the tree is never written.  `make check` runs each for
# FUZZ_CHECK_SECONDS.  Findings (crash-*, leak-*, timeout-*) land in
# build/fuzz/artifacts/ and make the run fail.
FUZZ_TARGETS := config snapshot dra_request kubeconfig claim slices k8s_protobuf
FUZZ_BIN     := $(BUILD)/fuzz-bin
FUZZ_PROGS   := $(FUZZ_TARGETS:%=$(FUZZ_BIN)/fuzz_%)
FUZZ_LIBS    := $(DRIVER_GRPC_LIB) $(PROTO_LIB) $(PUBLISH_LIB) $(BIND_LIB) $(HEALTH_LIB) $(CLAIMS_LIB) \
                $(PREPARE_LIB) $(DEVICE_LIB) $(KUBE_LIB) $(FAKEHW_LIB) $(COMMON_LIB)
FUZZ_OBJS    := $(FUZZ_TARGETS:%=$(OBJ)/fuzz/fuzz_%.o) $(OBJ)/fuzz/fuzz_common.o
FUZZ_SECONDS ?= 60

$(FUZZ_OBJS): CPPFLAGS += -Ifakehw $(KUBE_CFLAGS) $(FAKEHW_PKG_CFLAGS)
$(FUZZ_OBJS): | $(PROTO_HEADERS)

# The slices target builds its pool as the publisher's unit tests do.
$(FUZZ_BIN)/fuzz_slices: $(OBJ)/driver/publish/tests/slice_fixture.o

$(FUZZ_BIN)/fuzz_%: $(OBJ)/fuzz/fuzz_%.o $(OBJ)/fuzz/fuzz_common.o $(FUZZ_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $(filter %.o,$^) $(FUZZ_LIBS) $(KUBE_LDLIBS) \
	    $(FAKEHW_PKG_LIBS) $(HEALTH_LDLIBS) $(PREPARE_LIBS) $(DRIVER_GRPC_LDLIBS) $(LDLIBS)

# The API server stand-in's protobuf codec: conformance kit code, linked
# apart from the plugin's libraries.
FUZZ_K8S_PROTOBUF_OBJS := $(filter %/k8s_codec.o %/pb_json.o %/resources.o,$(APISERVER_OBJS))
$(OBJ)/fuzz/fuzz_k8s_protobuf.o: CPPFLAGS += -I$(K8SPROTO_DIR)/c -Iconformance/node/standins/apiserver \
                                             -Iconformance/node/standins/apiserver/protobuf
$(OBJ)/fuzz/fuzz_k8s_protobuf.o: | $(K8SPROTO_STAMP)
$(FUZZ_BIN)/fuzz_k8s_protobuf: $(OBJ)/fuzz/fuzz_k8s_protobuf.o $(FUZZ_K8S_PROTOBUF_OBJS) $(K8SPROTO_LIB) \
                               $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(APISERVER_LDLIBS) $(LDLIBS)

.PHONY: fuzz-build fuzz-run
fuzz-build: $(FUZZ_PROGS)

fuzz-run: fuzz-build
	fuzz/run.sh $(FUZZ_BIN) $(BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)
