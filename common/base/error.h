// SPDX-License-Identifier: Apache-2.0
/* One error idiom for the whole project.
 *
 * A function that can fail returns 0 on success and -1 on failure, and takes a
 * `struct error *err` as its last argument; on failure it fills err->msg with
 * one human-readable sentence that says what is wrong and where (file, line,
 * field, claim).  Callers add context with error_prefix() as the error travels
 * up, so the final message reads "loading config: fakehw.yaml:12:5: devices[0]: ...".
 * err may be NULL when the caller does not care about the text. */
#ifndef FAKEHW_COMMON_ERROR_H
#define FAKEHW_COMMON_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#define ERROR_MSG_MAX 1024

struct error {
    char msg[ERROR_MSG_MAX];
};

/* Sets err->msg from a printf format. Always returns -1 so callers can write
 * `return error_set(err, "...")`. */
int error_set(struct error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Like error_set, with ": <strerror(errnum)>" appended. Returns -1. */
int error_set_errno(struct error *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Like error_set, and also sets errno to errnum, for functions whose callers
 * act on errno (a FUSE handler answers with it).  errno is set last, because
 * formatting may clobber it; it is set even when err is NULL.  Returns -1. */
int error_set_and_errno(struct error *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

// error_set with a va_list, for wrappers that take their own format.
int error_setv(struct error *err, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* Prepends "<formatted>: " to the message already in err. Returns -1. */
int error_prefix(struct error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
