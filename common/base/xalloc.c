// SPDX-License-Identifier: Apache-2.0
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void xalloc_die(void)
{
    static const char msg[] = "fatal: out of memory\n";
    // write(2), not the logger: the logger may itself need memory.
    ssize_t r = write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)r;
    _exit(70);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        xalloc_die();
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (p == NULL)
        xalloc_die();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (q == NULL)
        xalloc_die();
    return q;
}

char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (p == NULL)
        xalloc_die();
    return p;
}

char *xstrndup(const char *s, size_t n)
{
    char *p = strndup(s, n);
    if (p == NULL)
        xalloc_die();
    return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
    char *p = NULL;
    if (vasprintf(&p, fmt, ap) < 0)
        xalloc_die();
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = xvasprintf(fmt, ap);
    va_end(ap);
    return p;
}
