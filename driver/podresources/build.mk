# SPDX-License-Identifier: Apache-2.0
# driver/podresources/: fakehw-podresources, a client of the kubelet's
# PodResources API (v1 List and Get) that prints the pods' DRA devices.  Its
# own grpc core client code; it shares the grpc core helpers of the plugin's
# server (driver/grpc/rpc_wire.c), common/ and the generated proto.
PODRES_SRCS := driver/podresources/podresources_client.c driver/podresources/podresources_print.c \
  driver/podresources/podresources_reach.c
PODRES_OBJS := $(PODRES_SRCS:%.c=$(OBJ)/%.o)
PODRES_MAIN := $(OBJ)/driver/podresources/main.o

$(PODRES_OBJS) $(PODRES_MAIN) $(OBJ)/driver/podresources/tests/test_podresources.o: | $(PROTO_HEADERS)

BINS += $(BIN)/fakehw-podresources
$(BIN)/fakehw-podresources: $(PODRES_MAIN) $(PODRES_OBJS) $(DRIVER_GRPC_WIRE_OBJ) $(PROTO_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_GRPC) $(PKG_PROTOBUF) -ljansson -lpthread $(LDLIBS)

# Unit tests: the table and JSON output, why a socket does not answer.
$(eval $(call unit_test,test_podresources,$(OBJ)/driver/podresources/tests/test_podresources.o \
  $(OBJ)/driver/podresources/podresources_print.o $(OBJ)/driver/podresources/podresources_reach.o \
  $(PROTO_LIB) $(COMMON_LIB),$(PKG_PROTOBUF) -ljansson))

# The bats suite runs it against a fake PodResources server in Python
# (python3-grpcio, raw bytes: an independent implementation of the wire).
BATS_SUITES += driver/podresources/tests
