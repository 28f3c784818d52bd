// SPDX-License-Identifier: Apache-2.0
/* What the stand-in was asked: an in-memory request log for tests
 * (GET /standin/requests) and an optional append-only event log file with
 * one JSON line per mutating API request, for benchmarks. */
#ifndef APISERVER_STANDIN_REQLOG_H
#define APISERVER_STANDIN_REQLOG_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define REQLOG_MAX 100000 /* entries kept; older ones are dropped and counted */

struct reqlog {
    pthread_mutex_t lock;
    json_t *entries;
    size_t dropped;
    int event_fd; /* -1: no event log */
};

int reqlog_init(struct reqlog *l, const char *event_log_path, struct error *err);
void reqlog_destroy(struct reqlog *l);

/* fault is NULL or "status", "close", "delay". */
void reqlog_add(struct reqlog *l, int64_t time_ns, const char *method, const char *path,
                const char *query, int status, const char *fault);
/* {"requests":[{"method","path","query","status","timeNs"[,"fault"]}],"dropped":N} as text. */
char *reqlog_dump(struct reqlog *l);
void reqlog_clear(struct reqlog *l);

/* Appends {"timeNs",..,"method","path","status","resource","namespace","name",
 * "object":<object_json>} to the event log (one write per line). */
void reqlog_event(struct reqlog *l, int64_t time_ns, const char *method, const char *path,
                  int status, const char *resource, const char *ns, const char *name,
                  const char *object_json);

int64_t realtime_ns(void);

#endif
