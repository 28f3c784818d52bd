// SPDX-License-Identifier: Apache-2.0
/* One call of the gRPC server (rpc_server.h) as its handler sees it: the
 * method table entry that routes a call to a handler, the answer of a unary
 * call and the server stream a stream handler keeps.  Implemented by
 * rpc_call.c, which drives the call's batches (rpc_internal.h). */
#ifndef FAKEHW_DRIVER_RPC_CALL_H
#define FAKEHW_DRIVER_RPC_CALL_H

#include <grpc/status.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"

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
