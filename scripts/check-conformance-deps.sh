#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The conformance kit's stand-ins are independent witnesses only if they share
# no code with the plugin they test: fails (exit 1, one line per offence) if a
# C file under conformance/ includes anything from driver/, or a make fragment
# there names driver/ code (objects, libraries, include paths).  Of common/,
# the kit may use the generic idioms only (COMMON_OK), no domain code the
# plugin also builds on (quantities, the fakehw tree, names).  Likewise
# common/base/, the generic idioms, includes no header of the tree contract
# (common/fakehw/) or of any program: only its own.
# bench/ (the benchmarks and the plugin's white-box node tests) sits on top of
# both: its C files may include their own headers, common/, the generated
# proto/ code, the plugin's gRPC server (driver/grpc/) and the kubelet
# stand-in's client (conformance/node/standins/kubelet/), and nothing else of
# driver/, conformance/ or fakehw/; no file outside bench/ includes or links
# bench/ code.  ROOT (default: this repository) is the tree to check.
set -euo pipefail
root=${1:-"$(dirname "$0")/.."}
cd "$root"
bad=0
# #include "driver/...", "../driver/...", or <driver/...>.
while IFS= read -r hit; do
    echo "check-conformance-deps: $hit: the conformance kit includes driver code" >&2
    bad=1
done < <(find conformance -type f \( -name '*.c' -o -name '*.h' \) -print0 |
    xargs -0 -r grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]([./]*/)?driver/' || true)
# A fragment naming a driver/ path or a DRIVER_ make variable (the driver's
# objects and libraries are all DRIVER_*).  Comments do not count.
while IFS= read -r hit; do
    echo "check-conformance-deps: $hit: the conformance kit links driver code" >&2
    bad=1
done < <(find conformance -type f \( -name '*.mk' -o -name Makefile \) -print0 |
    xargs -0 -r grep -HnE '^[^#]*(([^A-Za-z_]|^)driver/|\$\(DRIVER_)' || true)
# The header an include line names ("file:line:#include \"x.h\"" -> x.h).
included() { sed -E 's/.*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/' <<<"${1#*:*:}"; }
# Where common/ holds a header of that name (common/ itself or a part of it).
common_header() {
    local d
    for d in common common/*/; do
        [[ -f ${d%/}/$1 ]] && { echo "${d%/}/$1"; return 0; }
    done
    return 1
}
# Quoted includes in the C files below $1: by bare name, or any with $2=any.
quoted_includes() {
    local name='[^"/]+'
    [[ ${2:-} != any ]] || name='[^"]+'
    [[ -d $1 ]] || return 0
    find "$1" -type f \( -name '*.c' -o -name '*.h' \) -print0 |
        xargs -0 -r grep -HnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"$name\"" || true
}
# common/ headers beyond the generic idioms (a kit header of the same name,
# next to the including file, is the kit's own).
COMMON_OK=" error.h log.h flags.h xalloc.h cleanup.h atomic_file.h monotonic.h grow.h stop_signals.h "
while IFS= read -r hit; do
    file=${hit%%:*}
    header=$(included "$hit")
    [[ ! -f $(dirname "$file")/$header && $COMMON_OK != *" $header "* ]] || continue
    path=$(common_header "$header") || continue
    echo "check-conformance-deps: $hit: the conformance kit uses $path, which is not one of the generic idioms ($COMMON_OK)" >&2
    bad=1
done < <(quoted_includes conformance)
# common/base/ stands alone: every quoted include is one of its own headers.
while IFS= read -r hit; do
    header=$(included "$hit")
    [[ $header == */* || ! -f common/base/$header ]] || continue
    echo "check-conformance-deps: $hit: common/base/ includes $header, which is not one of its own headers" >&2
    bad=1
done < <(quoted_includes common/base any)

# bench/: what its C files may include.  BENCH_OK are the path prefixes of
# quoted includes with a folder; a bare name is the bench's own header (next
# to the file) or one of common/.
BENCH_OK=(bench/ proto/ driver/grpc/ conformance/node/standins/kubelet/)
while IFS= read -r hit; do
    file=${hit%%:*}
    header=$(sed -E 's/.*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/' <<<"${hit#*:*:}")
    if [[ $header == */* ]]; then
        ok=0
        for prefix in "${BENCH_OK[@]}"; do
            [[ $header != "$prefix"* ]] || ok=1
        done
        ((ok)) && continue
        echo "check-conformance-deps: $hit: bench/ may include only its own headers, common/ and ${BENCH_OK[*]:1}" >&2
    else
        if [[ -f $(dirname "$file")/$header ]] || common_header "$header" >/dev/null; then continue; fi
        echo "check-conformance-deps: $hit: $header is neither bench/'s own header nor one of common/" >&2
    fi
    bad=1
done < <([[ ! -d bench ]] || find bench -type f \( -name '*.c' -o -name '*.h' \) -print0 |
    xargs -0 -r grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' || true)
# bench/'s fragments: of the driver, the gRPC server's objects and libraries only.
while IFS= read -r hit; do
    rest=${hit#*:*:}
    rest=${rest//driver\/grpc\//}
    rest=${rest//\$(DRIVER_GRPC_/}
    grep -qE '(([^A-Za-z_]|^)driver/|\$\(DRIVER_)' <<<"$rest" || continue
    echo "check-conformance-deps: $hit: bench/ links driver code beyond driver/grpc/" >&2
    bad=1
done < <([[ ! -d bench ]] || find bench -type f \( -name '*.mk' -o -name Makefile \) -print0 |
    xargs -0 -r grep -HnE '^[^#]*(([^A-Za-z_]|^)driver/|\$\(DRIVER_)' || true)
# Nothing outside bench/ includes or links it.
while IFS= read -r hit; do
    echo "check-conformance-deps: $hit: only bench/ itself may use bench/ code" >&2
    bad=1
done < <({
    find . -path ./bench -prune -o -path ./build -prune -o -path ./.git -prune -o \
        -type f \( -name '*.c' -o -name '*.h' \) -print0 |
        xargs -0 -r grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]([./]*/)?bench/' || true
    find . -path ./bench -prune -o -path ./build -prune -o -path ./.git -prune -o \
        -type f \( -name '*.mk' -o -name Makefile \) -print0 |
        xargs -0 -r grep -HnE '^[^#]*(\$\(OBJ\)/bench/|\$\(BENCH_)' || true
    find . -path ./bench -prune -o -path ./build -prune -o -path ./.git -prune -o \
        -type f \( -name '*.bats' -o -name '*.bash' \) -print0 |
        xargs -0 -r grep -HnE '^[[:space:]]*(load|source|\.)[[:space:]].*bench/' || true
} | sed 's|^\./||')
exit "$bad"
