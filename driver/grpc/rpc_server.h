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
 * Lifecycle: rpc_server_new, rpc_server_add_method (any number),
 * rpc_server_start, ..., rpc_server_shutdown, rpc_server_free.  Method
 * contexts (the services) must outlive the server: free them after
 * rpc_server_free. */
#ifndef FAKEHW_DRIVER_RPC_SERVER_H
#define FAKEHW_DRIVER_RPC_SERVER_H

#include <grpc/status.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"

struct rpc_server;
struct rpc_reply;
struct rpc_stream;

/* Unary handler, run on a worker thread.  req is the decoded request, owned
 * by the server and valid until the handler returns.  The handler answers
 * with rpc_reply_message() or rpc_reply_error(); answering neither sends
 * INTERNAL. */
typedef void (*rpc_unary_fn)(void *ctx, const ProtobufCMessage *req, struct rpc_reply *reply);
/* Run on the poller once a unary call's reply is written to the socket (or
 * once the call is over, when it never was): where work that follows the
 * answer is started, so that waking its threads delays neither the write
 * nor, more than it must, the client reading it. */
typedef void (*rpc_after_reply_fn)(void *ctx);

/* Server-streaming open handler, run on a worker thread.  The stream stays
 * open after the handler returns, until the client goes away or the server
 * shuts down.  To send later, from any thread, take a reference with
 * rpc_stream_ref(). */
typedef void (*rpc_stream_open_fn)(void *ctx, const ProtobufCMessage *req, struct rpc_stream *s);

/* Called once per opened stream when it is over (client cancel, finish,
 * shutdown), after the open handler returned.  Drop your reference here.
 * Runs on the poller or a worker thread: do not block. */
typedef void (*rpc_stream_closed_fn)(void *ctx, struct rpc_stream *s);

struct rpc_method {
    const char *path; /* "/v1alpha1.DRAResourceHealth/NodeWatchResources" */
    const ProtobufCMessageDescriptor *request; /* decoder for the request message */
    rpc_unary_fn unary;                        /* set exactly one of unary and stream_open */
    rpc_stream_open_fn stream_open;
    rpc_stream_closed_fn stream_closed; /* optional, streams only */
    rpc_after_reply_fn after_reply;     /* optional, unary only */
    /* Unary only: run the handler on the poller thread, which got the call
     * with its request and writes the reply without a hand-off to a worker,
     * when no other unary call is in progress (else on a worker, so that
     * calls that come together run in parallel).  Only for handlers that
     * never wait on the network and take well under a millisecond (the
     * poller serves every other call meanwhile). */
    bool on_poller;
    void *ctx;
};

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

/* --- answering unary calls --- */

/* Packs msg as the answer (a copy: msg may be freed right after). */
void rpc_reply_message(struct rpc_reply *r, const ProtobufCMessage *msg);

/* Answers with an already packed message (copied). */
void rpc_reply_packed(struct rpc_reply *r, const void *data, size_t len);

/* Answers with a non-OK status and a message (printf format). */
void rpc_reply_error(struct rpc_reply *r, grpc_status_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* --- server streams; every function is safe from any thread --- */

void rpc_stream_ref(struct rpc_stream *s);
void rpc_stream_unref(struct rpc_stream *s);

/* Queues one packed message (copied, so one packing can go to many
 * streams), first dropping the queued messages that were not started yet:
 * every message is a full snapshot, so a slow reader gets the newest state
 * instead of a backlog.  At most one send is in flight per call.  Returns -1
 * with err when the stream is closed, or when RPC_STREAM_MAX_QUEUED messages
 * already wait (the client stopped reading: the stream is then cancelled). */
#define RPC_STREAM_MAX_QUEUED 64
int rpc_stream_send_latest(struct rpc_stream *s, const void *data, size_t len, struct error *err);

#endif
