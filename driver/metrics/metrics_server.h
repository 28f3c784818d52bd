// SPDX-License-Identifier: Apache-2.0
/* A small HTTP server for the metrics: GET /metrics answers the Prometheus
 * text exposition, anything else 404 (405 for other methods).  libmicrohttpd
 * with one internal thread, at most 16 connections, 10 s per connection:
 * a scraper cannot hold the plugin's resources. */
#ifndef FAKEHW_DRIVER_METRICS_SERVER_H
#define FAKEHW_DRIVER_METRICS_SERVER_H

#include <sys/socket.h>

#include "error.h"
#include "metrics.h"

/* Fills *state with the values other parts keep, for one scrape. */
typedef void (*metrics_state_fn)(void *ctx, struct metrics_state *state);

struct metrics_server;

/* Starts serving m on address.  state (may be NULL) runs on each scrape, on
 * the server's thread. */
struct metrics_server *metrics_server_start(const char *address, struct metrics *m,
                                            metrics_state_fn state, void *state_ctx,
                                            struct error *err);

/* The port it listens on. */
unsigned metrics_server_port(const struct metrics_server *s);

/* Stops the thread and closes the socket.  NULL is fine. */
void metrics_server_stop(struct metrics_server *s);

#endif
