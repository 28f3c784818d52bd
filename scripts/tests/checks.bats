#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The lint checks of scripts/: the conformance kit's independence from the
# driver and what bench/ may use (check-conformance-deps.sh), and the
# fragments the Makefile needs.

bats_load_library bats-support
bats_load_library bats-assert

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

setup() {
    unset MAKEFLAGS MFLAGS MAKELEVEL
    TREE=$BATS_TEST_TMPDIR/tree
    mkdir -p "$TREE/conformance/standin"
    printf '#include "error.h"\n' >"$TREE/conformance/standin/a.c"
    # shellcheck disable=SC2016 # literal make references
    printf '# uses driver/grpc in a comment only\nX := $(OBJ)/conformance/a.o\n' >"$TREE/conformance/standin/build.mk"
}

@test "check-conformance-deps: this repository's kit shares no code with driver/" {
    run "$REPO/scripts/check-conformance-deps.sh"
    assert_success
    assert_output ''
}

@test "check-conformance-deps: a clean kit passes; comments may name driver/" {
    run "$REPO/scripts/check-conformance-deps.sh" "$TREE"
    assert_success
}

@test "check-conformance-deps: an include of driver/ code fails, naming the file and line" {
    printf '#include <stdio.h>\n#include "driver/grpc/rpc_wire.h"\n' >"$TREE/conformance/standin/b.h"
    run "$REPO/scripts/check-conformance-deps.sh" "$TREE"
    assert_failure 1
    assert_output --partial 'conformance/standin/b.h:2:'
    assert_output --partial 'includes driver code'
}

@test "check-conformance-deps: a fragment linking driver objects or a DRIVER_ library fails" {
    # shellcheck disable=SC2016 # literal make references
    printf 'Y := $(OBJ)/driver/grpc/rpc_wire.o\nZ: $(DRIVER_GRPC_LIB)\n' >>"$TREE/conformance/standin/build.mk"
    run "$REPO/scripts/check-conformance-deps.sh" "$TREE"
    assert_failure 1
    assert_output --partial 'build.mk:3:'
    assert_output --partial 'build.mk:4:'
    assert_output --partial 'links driver code'
}

@test "check-conformance-deps: common/'s generic idioms pass, its domain code fails" {
    mkdir -p "$TREE/common"
    touch "$TREE/common/error.h" "$TREE/common/quantity.h" "$TREE/conformance/standin/status.h"
    printf '#include "error.h"\n#include "status.h"\n' >"$TREE/conformance/standin/c.c"
    run "$REPO/scripts/check-conformance-deps.sh" "$TREE"
    assert_success
    printf '#include "quantity.h"\n' >>"$TREE/conformance/standin/c.c"
    run "$REPO/scripts/check-conformance-deps.sh" "$TREE"
    assert_failure 1
    assert_output --partial 'conformance/standin/c.c:3:'
    assert_output --partial 'uses common/quantity.h'
}

@test "check-conformance-deps: bench/ may use common/, proto/, the gRPC server and the kubelet client" {
    mkdir -p "$TREE/bench" "$TREE/common"
    touch "$TREE/common/error.h" "$TREE/bench/stats.h"
    printf '#include <stdio.h>\n#include "error.h"\n#include "stats.h"\n#include "bench/stats.h"\n#include "proto/dra_v1.pb-c.h"\n#include "driver/grpc/rpc_server.h"\n#include "conformance/node/standins/kubelet/grpc_client.h"\n' >"$TREE/bench/a.c"
    # shellcheck disable=SC2016 # literal make references
    printf '# not driver/prepare: a comment\nB: $(OBJ)/conformance/node/standins/kubelet/grpc_client.o $(DRIVER_GRPC_LIBS) $(OBJ)/driver/grpc/rpc_wire.o\n' >"$TREE/bench/build.mk"
    run "$REPO/scripts/check-conformance-deps.sh" "$TREE"
    assert_success
    assert_output ''
}

@test "check-conformance-deps: bench/ including other driver/ or kit code, or linking it, fails" {
    mkdir -p "$TREE/bench"
    printf '#include "driver/prepare/prepare.h"\n#include "conformance/node/standins/apiserver/store.h"\n#include "inventory.h"\n' >"$TREE/bench/a.c"
    # shellcheck disable=SC2016 # literal make references
    printf 'B: $(OBJ)/driver/prepare/prepare.o $(DRIVER_KUBE_LIB)\n' >"$TREE/bench/build.mk"
    run "$REPO/scripts/check-conformance-deps.sh" "$TREE"
    assert_failure 1
    assert_output --partial 'bench/a.c:1:#include "driver/prepare/prepare.h": bench/ may include only'
    assert_output --partial 'bench/a.c:2:'
    assert_output --partial 'bench/a.c:3:#include "inventory.h": inventory.h is neither'
    assert_output --partial 'bench/build.mk:1:'
    assert_output --partial 'links driver code beyond driver/grpc/'
}

@test "check-conformance-deps: code outside bench/ that includes, links or loads it fails" {
    mkdir -p "$TREE/bench/node" "$TREE/driver"
    printf '#include "bench/stats.h"\n' >"$TREE/driver/a.c"
    # shellcheck disable=SC2016 # literal make references
    printf 'Y := $(OBJ)/bench/stats.o\n' >>"$TREE/conformance/standin/build.mk"
    printf 'load ../../bench/node/helpers\n' >"$TREE/conformance/standin/t.bats"
    run "$REPO/scripts/check-conformance-deps.sh" "$TREE"
    assert_failure 1
    assert_output --partial 'driver/a.c:1:'
    assert_output --partial 'conformance/standin/build.mk:3:'
    assert_output --partial 'conformance/standin/t.bats:1:'
    assert_output --partial 'only bench/ itself may use bench/ code'
}

@test "the Makefile fails on a missing build fragment instead of dropping it" {
    mkdir -p "$BATS_TEST_TMPDIR/copy"
    cp "$REPO/Makefile" "$BATS_TEST_TMPDIR/copy/"
    run make -C "$BATS_TEST_TMPDIR/copy" -n all
    assert_failure
    assert_output --partial 'build.mk: No such file or directory'
    # The Dockerfile's deps layer reads none of them.
    run make -C "$BATS_TEST_TMPDIR/copy" -n DEPS_ONLY=1 deps-debian
    assert_success
    assert_output --partial 'scripts/install-deps.sh'
}
