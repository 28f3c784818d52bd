# SPDX-License-Identifier: Apache-2.0
# proto/: the kubelet plugin APIs as .proto files.  protoc-c generates the
# C code into $(GEN)/proto/ (a build output, never committed); the objects go
# into one static library that the plugin, the kubelet stand-in and the tests
# link.  Include the headers as "proto/<name>.pb-c.h".
#
# Objects that include a generated header declare it with an order-only
# prerequisite on $(PROTO_HEADERS), so a clean build generates first; after
# that the compiler's -MMD dependencies track them.
PROTO_SRCS    := proto/pluginregistration.proto proto/dra_v1.proto proto/dra_v1beta1.proto \
                 proto/dra_health_v1alpha1.proto proto/dra_health_v1.proto proto/podresources_v1.proto
PROTO_GEN_C   := $(PROTO_SRCS:proto/%.proto=$(GEN)/proto/%.pb-c.c)
PROTO_HEADERS := $(PROTO_GEN_C:.c=.h)
PROTO_OBJS    := $(PROTO_SRCS:proto/%.proto=$(OBJ)/gen/proto/%.pb-c.o)
PROTO_LIB     := $(BUILD)/lib/libkubeletproto.a
PROTOC_C      ?= protoc-c

# One protoc-c run writes both files (a grouped pattern rule).
$(GEN)/proto/%.pb-c.c $(GEN)/proto/%.pb-c.h: proto/%.proto
	@mkdir -p $(dir $@)
	$(PROTOC_C) --proto_path=proto --c_out=$(GEN)/proto $<

$(OBJ)/gen/proto/%.pb-c.o: $(GEN)/proto/%.pb-c.c | $(PROTO_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(PROTO_LIB): $(PROTO_OBJS)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

# Generated sources are intermediate for make; keep them for debugging.
.SECONDARY: $(PROTO_GEN_C) $(PROTO_HEADERS)
