// SPDX-License-Identifier: Apache-2.0
/* Comma-separated lists for messages ("known: a, b, c") in a buffer of
 * fixed size: what does not fit is cut off, never overflowed.
 *
 *   struct text_list l = text_list_start(buf, size);
 *   for (...) text_list_add(&l, "%s", name); */
#ifndef FAKEHW_COMMON_TEXT_LIST_H
#define FAKEHW_COMMON_TEXT_LIST_H

#include <stddef.h>

struct text_list {
    char *buf;
    size_t size;
    size_t used;  /* what the list needs so far, cut off or not */
    size_t items; /* added so far */
};

/* An empty list in buf (size bytes; "" unless size is 0). */
struct text_list text_list_start(char *buf, size_t size);

/* Appends fmt's text, after ", " unless it is the first item. */
void text_list_add(struct text_list *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
