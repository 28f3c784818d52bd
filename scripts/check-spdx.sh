#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Lists the tracked source files whose first three lines carry no
# "SPDX-License-Identifier: Apache-2.0" (C, headers, protos, shell, bats,
# make fragments, Python, and the YAML of manifests/ and kind/); exits 1 if
# there is one.  Data files (JSON, fixtures, fuzz corpora) carry none.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=0
while IFS= read -r f; do
    case $f in
    fuzz/corpus/* | conformance/cluster/selftest/fixtures/*) continue ;;
    esac
    [[ -f $f && ! -L $f ]] || continue
    if ! head -n 3 "$f" | grep -q 'SPDX-License-Identifier: Apache-2.0'; then
        echo "check-spdx: $f: no SPDX-License-Identifier: Apache-2.0 in its first 3 lines" >&2
        missing=1
    fi
done < <(git ls-files '*.c' '*.h' '*.proto' '*.sh' '*.bash' '*.bats' '*.mk' '*.py' \
    Makefile Dockerfile .ci/run conformance/cluster/selftest/bin/kubectl conformance/quickstart/selftest/bin/kubectl \
    'manifests/*.yaml' 'manifests/*.tpl' 'kind/*.yaml')
exit "$missing"
