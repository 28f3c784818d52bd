// SPDX-License-Identifier: Apache-2.0
#include "error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int error_set(struct error *err, const char *fmt, ...)
{
    if (err == NULL)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

int error_setv(struct error *err, const char *fmt, va_list ap)
{
    if (err != NULL)
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    return -1;
}

int error_set_errno(struct error *err, int errnum, const char *fmt, ...)
{
    if (err == NULL)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof(err->msg))
        snprintf(err->msg + n, sizeof(err->msg) - (size_t)n, ": %s", strerror(errnum));
    return -1;
}

int error_set_and_errno(struct error *err, int errnum, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
    }
    errno = errnum;
    return -1;
}

int error_prefix(struct error *err, const char *fmt, ...)
{
    if (err == NULL)
        return -1;
    char prefix[ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    char old[ERROR_MSG_MAX];
    memcpy(old, err->msg, sizeof(old));
    snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
    return -1;
}
