// SPDX-License-Identifier: Apache-2.0
/* What the metrics module exports for its unit tests only: the typed
 * recorders behind the observer adapters of metrics.h (the plugin records
 * through those) and the address parser of metrics_server_start. */
#ifndef FAKEHW_DRIVER_METRICS_TEST_H
#define FAKEHW_DRIVER_METRICS_TEST_H

#include <stdbool.h>
#include <sys/socket.h>

#include "error.h"
#include "metrics.h"

/* The kubelet's per-claim calls. */
enum metrics_op {
    METRICS_PREPARE,   /* a claim of NodePrepareResources */
    METRICS_UNPREPARE, /* a claim of NodeUnprepareResources */
    METRICS_OPS
};

/* Records one claim of op: its result and how long it took.  m may be NULL. */
void metrics_claim_op(struct metrics *m, enum metrics_op op, bool ok, long long duration_ns);

/* Records one API request (every attempt, retries included): its HTTP
 * method, or "WATCH", and the answer's status, 0 when none came.  m may be
 * NULL. */
void metrics_api_request(struct metrics *m, const char *verb, long status);

/* Parses "HOST:PORT" ("[::1]:8080", ":8080" for every interface; HOST an IP
 * address or "localhost") into a socket address.  The port may be 0: the
 * kernel picks one (metrics_server_port says which). */
int metrics_parse_address(const char *address, struct sockaddr_storage *addr, socklen_t *len,
                          struct error *err);

struct metrics_server;

/* Changes the connection limit (16) and how long a connection without a
 * request in progress is kept when a new one needs its place (1000 ms);
 * before metrics_server_serve. */
void metrics_server_test_limits(struct metrics_server *s, unsigned max_connections,
                                long idle_evict_ms);

#endif
