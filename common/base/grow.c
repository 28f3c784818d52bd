// SPDX-License-Identifier: Apache-2.0
/* The growable array: see grow.h. */
#include "grow.h"

#include <stdint.h>

#include "xalloc.h"

/* The first allocation: 1 KiB, or 8 elements when they are larger, so that
 * small arrays and short texts need one realloc. */
#define GROW_MIN_BYTES 1024
#define GROW_MIN_ITEMS 8

void *grow_array(void *items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap && items != NULL)
        return items;
    size_t min = size != 0 && GROW_MIN_BYTES / size > GROW_MIN_ITEMS ? GROW_MIN_BYTES / size
                                                                     : GROW_MIN_ITEMS;
    size_t n = *cap < min ? min : *cap;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            xalloc_die();
        n *= 2;
    }
    if (size != 0 && n > SIZE_MAX / size)
        xalloc_die();
    items = xrealloc(items, n * size);
    *cap = n;
    return items;
}
