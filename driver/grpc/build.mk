# SPDX-License-Identifier: Apache-2.0
# driver/grpc/: the gRPC layer of the kubelet plugin on grpc core: the generic
# server (rpc_server), the registration, DRA (v1 + v1beta1) and health
# services, and their message codecs.  Everything lands in one static library;
# the plugin links it with the prepare module that implements prepare.h:
#   $(DRIVER_GRPC_LIB) $(PROTO_LIB) $(COMMON_LIB) $(PKG_GRPC) $(PKG_PROTOBUF) -lpthread
DRIVER_GRPC_SRCS := driver/grpc/rpc_server.c driver/grpc/rpc_call.c driver/grpc/rpc_live.c \
                    driver/grpc/rpc_wire.c \
                    driver/grpc/registration_service.c \
                    driver/grpc/dra_service.c driver/grpc/dra_codec.c \
                    driver/grpc/health_service.c driver/grpc/health_codec.c \
                    driver/grpc/wire_strings.c driver/grpc/socket_names.c
$(eval $(call static_lib,DRIVER_GRPC,drivergrpc,$(DRIVER_GRPC_SRCS)))
DRIVER_GRPC_LIBS := $(DRIVER_GRPC_LIB) $(PROTO_LIB) $(COMMON_LIB)
DRIVER_GRPC_LDLIBS := $(PKG_GRPC) $(PKG_PROTOBUF) -lpthread
# The grpc core helpers fakehw-podresources' client shares with the server.
DRIVER_GRPC_WIRE_OBJ := $(OBJ)/driver/grpc/rpc_wire.o

$(DRIVER_GRPC_OBJS): | $(PROTO_HEADERS)

# Test-only programs (never installed): a server made of this module and a
# fake prepare implementation (answers are freed by the real
# prepared_claim_free of driver/prepare), driven by the bats suite with the kubelet
# stand-in and a Python grpcio client.
DRIVER_GRPC_TEST_BIN := $(BUILD)/test-bin
DRIVER_GRPC_TEST_OBJS := $(OBJ)/driver/grpc/tests/grpc_test_server.o \
                         $(OBJ)/driver/grpc/tests/fake_prepare.o \
                         $(OBJ)/driver/prepare/prepared_claim.o
$(DRIVER_GRPC_TEST_OBJS) $(OBJ)/driver/grpc/tests/test_grpc_codec.o: | $(PROTO_HEADERS)

$(DRIVER_GRPC_TEST_BIN)/grpc-test-server: $(DRIVER_GRPC_TEST_OBJS) $(DRIVER_GRPC_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(DRIVER_GRPC_LDLIBS) -ljansson $(LDLIBS)

$(eval $(call unit_test,test_grpc_codec,$(OBJ)/driver/grpc/tests/test_grpc_codec.o \
  $(DRIVER_GRPC_LIBS),$(DRIVER_GRPC_LDLIBS)))
$(eval $(call unit_test,test_socket_names,$(OBJ)/driver/grpc/tests/test_socket_names.o \
  $(DRIVER_GRPC_LIB) $(COMMON_LIB),))

BATS_SUITES += driver/grpc/tests
# The bats target builds `all`; the suite also needs the test server.
bats: $(DRIVER_GRPC_TEST_BIN)/grpc-test-server
