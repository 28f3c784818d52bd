// SPDX-License-Identifier: Apache-2.0
/* The one growable array: GROW(items, cap, need) makes room for at least
 * need elements in items (a typed pointer, NULL at first) whose allocated
 * length is cap, doubling so that appending n elements costs O(n).  The
 * element size comes from the pointer's type, so no caller multiplies by
 * hand.  Out of memory, or a size that overflows, is fatal (xalloc.h). */
#ifndef FAKEHW_COMMON_GROW_H
#define FAKEHW_COMMON_GROW_H

#include <stddef.h>

/* The untyped step of GROW: returns items, reallocated to at least need
 * elements of size bytes when *cap is smaller, and updates *cap. */
void *grow_array(void *items, size_t *cap, size_t need, size_t size);

#define GROW(items, cap, need) ((items) = grow_array((items), &(cap), (need), sizeof(*(items))))

#endif
