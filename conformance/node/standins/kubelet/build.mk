# SPDX-License-Identifier: Apache-2.0
# conformance/node/standins/kubelet/: kubelet-standin, a C program on grpc
# core that registers and calls a DRA kubelet plugin exactly as the kubelet
# does (registration, NodePrepare/UnprepareResources, the health stream).
# Its grpc core helpers (grpc_wire.c) are its own: a stand-in shares no code
# with the plugin it tests (scripts/check-conformance-deps.sh checks).
KUBELET_STANDIN_SRCS := $(wildcard conformance/node/standins/kubelet/*.c)
KUBELET_STANDIN_OBJS := $(KUBELET_STANDIN_SRCS:%.c=$(OBJ)/%.o)

$(KUBELET_STANDIN_OBJS): | $(PROTO_HEADERS)

BINS += $(BIN)/kubelet-standin
$(BIN)/kubelet-standin: $(KUBELET_STANDIN_OBJS) $(PROTO_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_GRPC) $(PKG_PROTOBUF) -ljansson -lpthread $(LDLIBS)
