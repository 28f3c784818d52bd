# SPDX-License-Identifier: Apache-2.0
# conformance/node/standins/apiserver/: apiserver-standin, the in-memory API
# server of the node suite and the benchmarks (libmicrohttpd + jansson), and
# its protobuf media type (protobuf/, protobuf-c).
#
# The protobuf messages are generated from the upstream generated.proto files
# of k8s.io/api and k8s.io/apimachinery at K8S_API_VERSION, which
# protobuf/k8s-protos.sh takes from the Go module cache (the module proxy the
# first time); protobuf/json-fields.py reads the JSON names and tags from the
# same modules' Go types.  Both land in $(GEN)/k8sproto/ only.
K8S_API_VERSION ?= v0.37.2
K8SPROTO_DIR    := $(GEN)/k8sproto/$(K8S_API_VERSION)
K8SPROTO_PKGS   := k8s.io/api/core/v1 k8s.io/api/resource/v1 k8s.io/api/coordination/v1 \
                   k8s.io/apimachinery/pkg/api/resource k8s.io/apimachinery/pkg/apis/meta/v1 \
                   k8s.io/apimachinery/pkg/runtime k8s.io/apimachinery/pkg/runtime/schema \
                   k8s.io/apimachinery/pkg/util/intstr
K8SPROTO_GEN_C  := $(K8SPROTO_PKGS:%=$(K8SPROTO_DIR)/c/%/generated.pb-c.c) \
                   $(K8SPROTO_DIR)/c/k8s_json_fields.c
K8SPROTO_STAMP  := $(K8SPROTO_DIR)/c/.generated
K8SPROTO_OBJS   := $(K8SPROTO_GEN_C:$(GEN)/%.c=$(OBJ)/gen/%.o)

$(K8SPROTO_DIR)/src/VERSION: conformance/node/standins/apiserver/protobuf/k8s-protos.sh
	conformance/node/standins/apiserver/protobuf/k8s-protos.sh $(K8S_API_VERSION) $(K8SPROTO_DIR)/src

# One protoc-c run writes every package (they import each other), then the
# JSON field table.
$(K8SPROTO_STAMP): $(K8SPROTO_DIR)/src/VERSION conformance/node/standins/apiserver/protobuf/json-fields.py
	@mkdir -p $(K8SPROTO_DIR)/c
	cd $(K8SPROTO_DIR)/src && $(PROTOC_C) --proto_path=. --c_out=../c $(K8SPROTO_PKGS:%=%/generated.proto) 2>&1 \
	  | { grep -v 'warning: Import .* is unused' || true; }
	python3 conformance/node/standins/apiserver/protobuf/json-fields.py $(K8SPROTO_DIR)/src \
	  > $(K8SPROTO_DIR)/c/k8s_json_fields.c.tmp
	mv $(K8SPROTO_DIR)/c/k8s_json_fields.c.tmp $(K8SPROTO_DIR)/c/k8s_json_fields.c
	touch $@
$(K8SPROTO_GEN_C): $(K8SPROTO_STAMP)
	@test -f $@ || { echo "$@ was not generated" >&2; exit 1; }

$(K8SPROTO_OBJS): CPPFLAGS += -I$(K8SPROTO_DIR)/c -Iconformance/node/standins/apiserver/protobuf
$(K8SPROTO_OBJS): $(OBJ)/gen/%.o: $(GEN)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

K8SPROTO_LIB := $(BUILD)/lib/libk8sproto.a
$(K8SPROTO_LIB): $(K8SPROTO_OBJS)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
.SECONDARY: $(K8SPROTO_GEN_C)

APISERVER_SRCS   := $(wildcard conformance/node/standins/apiserver/*.c) \
                    $(wildcard conformance/node/standins/apiserver/protobuf/*.c)
APISERVER_OBJS   := $(APISERVER_SRCS:%.c=$(OBJ)/%.o)
APISERVER_LDLIBS := $(shell pkg-config --libs libmicrohttpd jansson gnutls libprotobuf-c 2>/dev/null) -lpthread

$(APISERVER_OBJS): CPPFLAGS += $(shell pkg-config --cflags libmicrohttpd jansson gnutls 2>/dev/null) \
                               -I$(K8SPROTO_DIR)/c -Iconformance/node/standins/apiserver \
                               -Iconformance/node/standins/apiserver/protobuf
$(APISERVER_OBJS): | $(K8SPROTO_STAMP)

BINS += $(BIN)/apiserver-standin
$(BIN)/apiserver-standin: $(APISERVER_OBJS) $(K8SPROTO_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(APISERVER_LDLIBS) $(LDLIBS)

BATS_SUITES += conformance/node/standins/apiserver/tests
