#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages given as arguments, non-interactively.
# Idempotent: packages already installed are left alone; any apt failure is fatal.
set -euo pipefail

if [ "$#" -eq 0 ]; then
    echo "usage: $0 PACKAGE..." >&2
    exit 2
fi

missing=()
for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps: all ${#} packages already installed"
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q || { echo "install-deps: apt-get update failed" >&2; exit 1; }
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" ||
    { echo "install-deps: apt-get install failed for: ${missing[*]}" >&2; exit 1; }
