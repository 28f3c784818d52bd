#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The conformance kit's stand-ins are independent witnesses only if they share
# no code with the plugin they test: fails (exit 1, one line per offence) if a
# C file under conformance/ includes anything from driver/, or a make fragment
# there names driver/ code (objects, libraries, include paths).  Of common/,
# the kit may use the generic idioms only (COMMON_OK), no domain code the
# plugin also builds on (quantities, the fakehw tree, names).  ROOT (default:
# this repository) is the tree to check.
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
# common/ headers beyond the generic idioms (a kit header of the same name,
# next to the including file, is the kit's own).
COMMON_OK=" error.h log.h flags.h xalloc.h cleanup.h atomic_file.h "
while IFS= read -r hit; do
    file=${hit%%:*}
    header=$(sed -E 's/.*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/' <<<"${hit#*:*:}")
    [[ -f common/$header && ! -f $(dirname "$file")/$header && $COMMON_OK != *" $header "* ]] || continue
    echo "check-conformance-deps: $hit: the conformance kit uses common/$header, which is not one of the generic idioms ($COMMON_OK)" >&2
    bad=1
done < <(find conformance -type f \( -name '*.c' -o -name '*.h' \) -print0 |
    xargs -0 -r grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"/]+"' || true)
exit "$bad"
