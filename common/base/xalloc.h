// SPDX-License-Identifier: Apache-2.0
// The one out-of-memory policy: allocation failure is fatal. Every program
// here is a small daemon or tool with bounded memory; a failed malloc means
// the node is out of memory, where logging "out of memory" and exiting (the
// kubelet or DaemonSet restarts us) beats a hundred half-tested error paths.
#ifndef FAKEHW_COMMON_XALLOC_H
#define FAKEHW_COMMON_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t n) __attribute__((malloc, returns_nonnull));
void *xcalloc(size_t count, size_t size) __attribute__((malloc, returns_nonnull));
void *xrealloc(void *p, size_t n) __attribute__((returns_nonnull));
char *xstrdup(const char *s) __attribute__((malloc, returns_nonnull));
char *xstrndup(const char *s, size_t n) __attribute__((malloc, returns_nonnull));
char *xasprintf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), malloc, returns_nonnull));
char *xvasprintf(const char *fmt, va_list ap)
    __attribute__((format(printf, 1, 0), malloc, returns_nonnull));

// Logs and exits with status 70 (EX_SOFTWARE is 70; a distinct code, not a
// signal, so a crash-loop report tells the two apart).
void xalloc_die(void) __attribute__((noreturn));

#endif
