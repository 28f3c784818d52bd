// SPDX-License-Identifier: Apache-2.0
/* Comma-separated lists in a fixed buffer: see text_list.h. */
#include "text_list.h"

#include <stdarg.h>
#include <stdio.h>

struct text_list text_list_start(char *buf, size_t size)
{
    if (size > 0)
        buf[0] = '\0';
    return (struct text_list){.buf = buf, .size = size};
}

void text_list_add(struct text_list *l, const char *fmt, ...)
{
    if (l->used >= l->size)
        return; /* full: the rest is cut off */
    int n = snprintf(l->buf + l->used, l->size - l->used, "%s", l->items++ ? ", " : "");
    if (n < 0)
        return;
    l->used += (size_t)n;
    if (l->used >= l->size)
        return;
    va_list ap;
    va_start(ap, fmt);
    n = vsnprintf(l->buf + l->used, l->size - l->used, fmt, ap);
    va_end(ap);
    if (n > 0)
        l->used += (size_t)n;
}
