# SPDX-License-Identifier: Apache-2.0
# conformance/node/standins/kubelet/: kubelet-standin, a C program on grpc
# core that registers and calls a DRA kubelet plugin exactly as the kubelet
# does (registration, NodePrepare/UnprepareResources, the health stream).
# It shares driver/grpc/rpc_wire.c (status names, byte buffers) with the plugin.
KUBELET_STANDIN_SRCS := $(wildcard conformance/node/standins/kubelet/*.c)
KUBELET_STANDIN_OBJS := $(KUBELET_STANDIN_SRCS:%.c=$(OBJ)/%.o)

$(KUBELET_STANDIN_OBJS): | $(PROTO_HEADERS)

BINS += $(BIN)/kubelet-standin
$(BIN)/kubelet-standin: $(KUBELET_STANDIN_OBJS) $(DRIVER_GRPC_WIRE_OBJ) $(PROTO_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_GRPC) $(PKG_PROTOBUF) -ljansson -lpthread $(LDLIBS)
