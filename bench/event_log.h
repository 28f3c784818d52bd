// SPDX-License-Identifier: Apache-2.0
/* Follows the API stand-in's event log (--event-log: one JSON line per
 * mutating request, with the CLOCK_REALTIME "timeNs" at which the stand-in
 * handled it), so a benchmark learns when a ResourceSlice write reached the
 * API server. */
#ifndef FAKEHW_BENCH_EVENT_LOG_H
#define FAKEHW_BENCH_EVENT_LOG_H

#include <jansson.h>

#include "cleanup.h"
#include "error.h"

struct event_log;

/* Opens the log at path (created by the stand-in) from its beginning. */
struct event_log *event_log_open(const char *path, struct error *err);

/* The next complete line, decoded: 1 with *ev (caller json_decref()s it), 0
 * when none arrived within timeout_ms (0: do not wait), -1 with err when the
 * file cannot be read or a line is not JSON. */
int event_log_next(struct event_log *l, int timeout_ms, json_t **ev, struct error *err);

void event_log_close(struct event_log *l);
CLEANUP_FUNC(struct event_log, event_log_close)
#define cleanup_event_log __attribute__((cleanup(event_log_closep)))

/* Fields of an event: its time, and whether it is a successful write
 * (2xx) of the given resource ("resourceslices"). */
int64_t event_time_ns(const json_t *ev);
int event_is_write_of(const json_t *ev, const char *resource);

#endif
