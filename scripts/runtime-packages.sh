#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prints, one per line and sorted, the Debian packages that own the shared
# libraries the given programs load, so the image's runtime stage installs
# exactly what the build stage linked against.  Fails if a library belongs
# to no package (a library built in the tree would be missing at run time).
#
#   scripts/runtime-packages.sh PROGRAM...
set -euo pipefail

if (($# == 0)); then
    echo "usage: $0 PROGRAM..." >&2
    exit 2
fi

# dpkg knows a library by the path its package installed, which with the
# merged /usr of Debian 12 may be the /lib or the /usr/lib spelling of what
# the loader resolved; try the path as given, the other spelling, then the
# symlink's target.
owner() {
    local lib=$1 alt real candidate
    case $lib in
    /usr/lib/*) alt=${lib#/usr} ;;
    /lib/* | /lib64/*) alt=/usr$lib ;;
    *) alt=$lib ;;
    esac
    real=$(readlink -f -- "$lib")
    for candidate in "$lib" "$alt" "$real" "/usr${real#/usr}" "${real#/usr}"; do
        if dpkg-query -S -- "$candidate" 2>/dev/null | head -n1 | cut -d: -f1 | cut -d, -f1; then
            return 0
        fi
    done
    return 1
}

libs=()
for prog in "$@"; do
    [[ -f $prog && -x $prog ]] || { echo "$0: $prog: not an executable file" >&2; exit 1; }
    # "libx.so.1 => /path/libx.so.1 (0x...)" lines, plus the loader's own.
    mapfile -t -O "${#libs[@]}" libs < <(ldd "$prog" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
done

packages=()
missing=0
for lib in $(printf '%s\n' "${libs[@]}" | sort -u); do
    if pkg=$(owner "$lib"); then
        packages+=("$pkg")
    else
        echo "$0: $lib belongs to no Debian package" >&2
        missing=1
    fi
done
((missing == 0)) || exit 1
# A static program needs no package at all.
((${#packages[@]} == 0)) || printf '%s\n' "${packages[@]}" | sort -u
