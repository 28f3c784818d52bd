// SPDX-License-Identifier: Apache-2.0
/* A small gRPC server on grpc core's C API, for protobuf-c messages.
 *
 * One rpc_server listens on one unix socket and owns one completion queue, a
 * poller thread that drains it, and a pool of worker threads that run the
 * handlers, so a slow handler (a prepare waiting on the API server) never
 * blocks the poller or other calls, and a long-lived stream never holds a
 * worker.  Methods are dispatched by their full path ("/pkg.Service/Method"):
 * rpc_server_start registers each with grpc core, which reads a call's
 * request message before it hands the call over, so a unary call is
 * dispatched as it arrives and its answer (initial metadata, message and
 * status) goes out in one write.  The server decodes the request with the
 * method's descriptor before the handler runs; unknown methods get
 * UNIMPLEMENTED, undecodable requests and calls without a request message
 * INVALID_ARGUMENT, without reaching a handler.
 *
 * What a handler sees of its call (struct rpc_method, the unary reply, the
 * server stream) is rpc_call.h, which this header includes.
 *
 * Lifecycle: rpc_server_new, rpc_server_add_method (any number),
 * rpc_server_start, ..., rpc_server_shutdown, rpc_server_free.  Method
 * contexts (the services) must outlive the server: free them after
 * rpc_server_free. */
#ifndef FAKEHW_DRIVER_RPC_SERVER_H
#define FAKEHW_DRIVER_RPC_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "driver/grpc/rpc_call.h"
#include "error.h"

struct rpc_server;

/* Budgets of one server, beyond which a new call is answered
 * RESOURCE_EXHAUSTED at once.  Unary calls and server streams count
 * separately, so long-lived streams (health watches) can never starve
 * unary calls (prepare, unprepare), and the other way round. */
#define RPC_MAX_UNARY_CALLS 256 /* unary calls in progress (queued or running) */
#define RPC_MAX_STREAMS     256 /* server streams open */

struct rpc_server_config {
    const char *name;        /* for log lines: "registration", "dra" */
    const char *socket_path; /* absolute path of the unix socket to listen on */
    int workers;             /* handler threads, >= 1 */
};

/* Process-wide grpc core settings; call first in main, before any thread
 * starts (it may set an environment variable).  grpc core's default poller
 * (epoll1) shares one epoll set among every thread that waits on a
 * completion queue: with two servers (registration and DRA), the
 * registration server's idle thread often read a DRA call and had to wake
 * the DRA server's thread to hand it over, which a 2-core node paid for in
 * every call's latency (docs/grpc.md).  The poll engine polls each queue's
 * own sockets.  GRPC_POLL_STRATEGY, when set, is left as it is. */
void rpc_process_setup(void);

/* Creates a server (not yet listening).  cfg's strings are copied. */
struct rpc_server *rpc_server_new(const struct rpc_server_config *cfg, struct error *err);

/* Adds a method; only before rpc_server_start, which registers it with grpc
 * core.  m is copied, its strings and ctx must outlive the server.  Fails on
 * a duplicate path or a bad entry. */
int rpc_server_add_method(struct rpc_server *srv, const struct rpc_method *m, struct error *err);

/* rpc_server_add_method for each of the n methods of m, in order, up to the
 * first that fails. */
int rpc_server_add_methods(struct rpc_server *srv, const struct rpc_method *m, size_t n,
                           struct error *err);

/* Creates the socket's parent directories (mode 0750), replaces a stale
 * socket file (refuses to remove anything that is not a socket), binds, makes
 * the socket mode 0660 and starts the threads.  On failure nothing is left
 * listening. */
int rpc_server_start(struct rpc_server *srv, struct error *err);

/* Stops serving: no new calls; open streams end with UNAVAILABLE; unary calls
 * get a short grace period, then everything still open is cancelled; waits
 * for running handlers to return (they are bounded by their own timeouts);
 * removes the socket file.  Returns within ~1 s unless a handler is stuck.
 * Idempotent; must not be called from a handler. */
void rpc_server_shutdown(struct rpc_server *srv);

/* Shuts down if still running, then frees everything.  NULL is a no-op. */
void rpc_server_free(struct rpc_server *srv);

#endif
