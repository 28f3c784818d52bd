#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The lint checks of scripts/: the conformance kit's independence from the
# driver and what bench/ may use (check-conformance-deps.sh), the modules
# and includes of docs/architecture.md (check_architecture.py), and the
# fragments the Makefile needs.

load helpers

setup() {
    outside_make_jobs
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

# arch_tree DIR: docs/architecture.md for setup's tree with common/, fakehw/
# and driver/kube/ added, where all but common/ may include common/.
arch_tree() {
    mkdir -p "$1/docs" "$1/common" "$1/fakehw" "$1/driver/kube/tests"
    printf '#include "error.h"\n' >"$1/common/error.c"
    touch "$1/common/error.h" "$1/fakehw/gpu.h" "$1/driver/kube/kube_client.h"
    printf '#include "gpu.h"\n#include "error.h"\n#include "proto/dra_v1.pb-c.h"\n' >"$1/fakehw/main.c"
    printf '#include "kube_client.h"\n#include "error.h"\n' >"$1/driver/kube/tests/t.c"
    cat >"$1/docs/architecture.md" <<'DOC'
# Architecture

## Where things are

| folder | what it holds |
|---|---|
| `common/` | the library |
| `fakehw/`, `driver/kube/`, `conformance/` | the rest |

## What may include what

| module | may include |
|---|---|
| `common/` | nothing of the tree |
| `fakehw/` | `common/` |
| `driver/kube/` | `common/` |
| `conformance/` | `common/` |

## Build
DOC
}

@test "check_architecture: this repository's docs/architecture.md holds" {
    run "$REPO/scripts/check_architecture.py"
    assert_success
    assert_output ''
}

@test "check_architecture: a tree that keeps to its table passes; generated headers of no proto count for none" {
    arch_tree "$TREE"
    run "$REPO/scripts/check_architecture.py" "$TREE"
    assert_success
    assert_output ''
}

@test "check_architecture: an include against the table fails, naming the file, line and arrow" {
    arch_tree "$TREE"
    printf '#include "driver/kube/kube_client.h"\n' >>"$TREE/fakehw/main.c"
    mkdir -p "$TREE/proto" && touch "$TREE/proto/dra_v1.proto"
    run "$REPO/scripts/check_architecture.py" "$TREE"
    assert_failure 1
    assert_output --partial 'fakehw/main.c:3: #include "proto/dra_v1.pb-c.h": fakehw/ may not include proto/'
    assert_output --partial 'fakehw/main.c:4: #include "driver/kube/kube_client.h": fakehw/ may not include driver/kube/'
}

@test "check_architecture: a module missing from the doc, a stale path or an unused arrow fails" {
    arch_tree "$TREE"
    mkdir -p "$TREE/driver/bind"
    printf '#include "error.h"\n' >"$TREE/driver/bind/binder.c"
    # shellcheck disable=SC2016 # Markdown backquotes, not expansions
    sed -i 's/| `fakehw\/`, `driver\/kube\/`, `conformance\/` |/| `fakehw\/`, `driver\/kube\/`, `conformance\/`, `driver\/gone\/` |/; s/^| `driver\/kube\/` | `common\/` |$/| `driver\/kube\/` | `common\/`, `fakehw\/` |/' "$TREE/docs/architecture.md"
    run "$REPO/scripts/check_architecture.py" "$TREE"
    assert_failure 1
    assert_output --partial '"Where things are" does not name the module driver/bind/'
    assert_output --partial '"Where things are" names driver/gone/, which does not exist'
    assert_output --partial '"What may include what" has no row for driver/bind/'
    assert_output --partial '"What may include what" lets driver/kube/ include fakehw/, which none of its files does'
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
