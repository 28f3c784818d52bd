// SPDX-License-Identifier: Apache-2.0
/* Lookups by name in an index: positions of an array's elements, sorted by
 * the names they hold (the live inventory's devices, the resolved config's). */
#ifndef FAKEHW_NAME_INDEX_H
#define FAKEHW_NAME_INDEX_H

#include <stddef.h>

/* The name of element i of the array at items. */
typedef const char *name_index_name_fn(const void *items, size_t i);

/* The element (an entry of idx, n of them sorted by name_of) named name,
 * found by binary search; -1 when there is none. */
long name_index_find(const size_t *idx, size_t n, name_index_name_fn *name_of, const void *items,
                     const char *name);

#endif
