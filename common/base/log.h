// SPDX-License-Identifier: Apache-2.0
/* Logging in klog's text format on stderr, as every Kubernetes component logs:
 *
 *   I1122 05:13:00.123456   12345 file.c:42] message
 *
 * Severity letter I/W/E/F, month+day, wall time with microseconds, thread id,
 * source location.  Info lines carry a verbosity level and are printed only
 * when it is <= log_verbosity (the -v flag).  Each line is written with one
 * write(2), so lines from different threads never interleave. */
#ifndef FAKEHW_COMMON_LOG_H
#define FAKEHW_COMMON_LOG_H

#include <stdarg.h>
#include <stddef.h>

extern int log_verbosity;

void log_line(char severity, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Formats a library's message (fmt, ap) into buf (size bytes) without its
 * trailing newlines, for one of these lines; returns buf. */
const char *log_vmessage(char *buf, size_t size, const char *fmt, va_list ap);

#define LOG_V(level, ...)                                                                          \
    do {                                                                                           \
        if ((level) <= log_verbosity)                                                              \
            log_line('I', __FILE__, __LINE__, __VA_ARGS__);                                        \
    } while (0)
#define LOG_I(...) log_line('I', __FILE__, __LINE__, __VA_ARGS__)
#define LOG_W(...) log_line('W', __FILE__, __LINE__, __VA_ARGS__)
#define LOG_E(...) log_line('E', __FILE__, __LINE__, __VA_ARGS__)

#endif
