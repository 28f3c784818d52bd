#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The lint checks of scripts/: the conformance kit's independence from the
# driver (check-conformance-deps.sh) and the fragments the Makefile needs.

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
