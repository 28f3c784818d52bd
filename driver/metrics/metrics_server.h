// SPDX-License-Identifier: Apache-2.0
/* A small HTTP server for the metrics: GET /metrics answers the Prometheus
 * text exposition, anything else 404 (405 for other methods).  libmicrohttpd
 * with one internal thread and at most 16 connections, so a scraper cannot
 * hold the plugin's resources, and idle connections cannot keep a scrape
 * out: past the limit a new connection takes the place of one that has had
 * no request in progress for 1 s, or is refused at once (never queued); an
 * idle connection is closed after 2 s anyway.
 *
 * Binding and serving are two steps, so the plugin can check its
 * --metrics-address (and hold the port) before it starts anything else,
 * and serve once the parts a scrape reads exist.  Connections that come in
 * between wait in the listen queue. */
#ifndef FAKEHW_DRIVER_METRICS_SERVER_H
#define FAKEHW_DRIVER_METRICS_SERVER_H

#include <sys/socket.h>

#include "error.h"
#include "metrics.h"

/* Fills *state with the values other parts keep, for one scrape. */
typedef void (*metrics_state_fn)(void *ctx, struct metrics_state *state);

struct metrics_server;

/* Parses address (HOST:PORT, metrics_test.h) and binds a listening socket
 * to it; serves nothing yet.  NULL with err when the address is malformed
 * or cannot be bound (in use, not an address of this host). */
struct metrics_server *metrics_server_bind(const char *address, struct error *err);

/* Starts serving m on the bound socket.  state (may be NULL) runs on each
 * scrape, on the server's thread.  -1 with err when the server thread
 * cannot start. */
int metrics_server_serve(struct metrics_server *s, struct metrics *m, metrics_state_fn state,
                         void *state_ctx, struct error *err);

/* The port it is bound to: the one the kernel picked when the address
 * asked for port 0. */
unsigned metrics_server_port(const struct metrics_server *s);

/* Where to scrape it, with the address and port really bound:
 * "http://127.0.0.1:41234/metrics", "http://[::1]:9400/metrics",
 * "http://0.0.0.0:9400/metrics" for every interface. */
const char *metrics_server_url(const struct metrics_server *s);

/* Stops serving and closes the socket, whether it served or not.  NULL is
 * fine. */
void metrics_server_stop(struct metrics_server *s);

#endif
