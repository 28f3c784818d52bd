// SPDX-License-Identifier: Apache-2.0
/* Lookups in a sorted name index: see name_index.h. */
#include "name_index.h"

#include <string.h>

long name_index_find(const size_t *idx, size_t n, name_index_name_fn *name_of, const void *items,
                     const char *name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name_of(items, idx[mid]), name);
        if (c == 0)
            return (long)idx[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}
