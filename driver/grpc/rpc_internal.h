// SPDX-License-Identifier: Apache-2.0
/* Internals shared by rpc_server.c (the server: threads, completion queue,
 * lifecycle), rpc_call.c (one call: its batches, send queue, handler run,
 * and the rpc_stream / rpc_reply API of rpc_call.h) and rpc_live.c (the
 * server's calls in progress and the job queue its workers take them
 * from).  Not a contract for other modules.
 *
 * Calls come in two ways.  Every method added with rpc_server_add_method is
 * registered with grpc core, which reads the request message before it hands
 * the call over (GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER), so a registered
 * call arrives with its request.  A generic grpc_server_request_call stays
 * armed for the rest: unknown paths (UNIMPLEMENTED), and any call of a known
 * path that grpc core did not match to its registration, which is then
 * served the generic way (grpc core 1.51 matches every call that has an
 * :authority, and refuses the others).
 *
 * Per call, up to three batches are in flight, each with its own tag:
 *   first  once, right after the call arrives, before the handler runs:
 *            generic call       {SEND_INITIAL_METADATA, RECV_MESSAGE}
 *            registered stream  {SEND_INITIAL_METADATA} (the request came
 *                               with the call; metadata goes out early)
 *            registered unary   none: the request is dispatched at arrival
 *   close  {RECV_CLOSE_ON_SERVER}                 until the call is over;
 *            started once the call is dispatched (after the answer of a
 *            unary call run on the poller)
 *   send   one queued item: a message, a status, or both (unary answer)
 * Initial metadata always goes out first, because grpc core only ends a
 * call cleanly after it was sent: in the first batch, or else in the first
 * send batch.  So a registered unary call's answer is one batch and one
 * write, {SEND_INITIAL_METADATA, SEND_MESSAGE, SEND_STATUS_FROM_SERVER}, and
 * a status that comes first (unknown method, too many calls, a registered
 * unary call without a request message) carries it too.  Only one send
 * batch is in flight per call; nothing is queued for sending before the
 * request is dispatched, so a first batch never overlaps a send batch.
 *
 * A call counts "work": outstanding batches plus a queued or running handler.
 * When work drops to zero the call is over: the stream-closed callback runs,
 * the grpc_call is released, and the call leaves the server's live list.  The
 * struct itself is reference counted separately, so a service may keep a
 * stream pointer after the call is over (sends then fail cleanly).
 *
 * Lock order: a service's own lock, then rpc_server.mu, then rpc_stream.mu. */
#ifndef FAKEHW_DRIVER_RPC_INTERNAL_H
#define FAKEHW_DRIVER_RPC_INTERNAL_H

#include <grpc/grpc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/grpc/rpc_call.h"
#include "log.h"

#define STATUS_MSG_MAX 1024

enum tag_kind { TAG_NEW_CALL, TAG_FIRST, TAG_CLOSE, TAG_SEND, TAG_SERVER_SHUTDOWN };

struct tag {
    enum tag_kind kind;
    struct rpc_stream *call; /* NULL for TAG_SERVER_SHUTDOWN */
};

/* A method as grpc core knows it: its handle from grpc_server_register_method. */
struct rpc_registered {
    const struct rpc_method *method;
    void *handle;
};

/* One queued send: a message, a final status, or both. */
struct send_item {
    struct send_item *next;
    grpc_byte_buffer *msg; /* NULL: none */
    bool has_status;
    grpc_status_code code;
    char *details;
};

enum server_state { SRV_NEW, SRV_RUNNING, SRV_STOPPING, SRV_STOPPED };

struct rpc_server {
    char *name;
    char *socket_path;
    int nworkers;
    struct rpc_method *methods;
    size_t n_methods;
    struct rpc_registered *registered; /* one per method, from rpc_server_start */

    grpc_server *server;
    grpc_completion_queue *cq;
    bool grpc_inited;
    pthread_t poller;
    bool poller_running;
    pthread_t *workers;
    int n_workers_started;

    pthread_mutex_t mu; /* state, live list, shutdown_done */
    pthread_cond_t cond;
    enum server_state state;
    struct rpc_stream *live; /* doubly linked list of calls in progress */
    size_t n_live;           /* every call in the live list */
    size_t n_live_streams;   /* of which server streams (their own budget) */
    struct tag shutdown_tag;
    bool shutdown_done;

    pthread_mutex_t jobs_mu;
    pthread_cond_t jobs_cond;
    struct rpc_stream *jobs_head, *jobs_tail;
    bool workers_stop;
};

/* A call.  Named rpc_stream because that is what services see of it. */
struct rpc_stream {
    struct rpc_server *srv;
    struct tag t_new, t_first, t_close, t_send;
    grpc_call *call;
    grpc_call_details details; /* generic calls only */
    gpr_timespec deadline;     /* registered calls only */
    grpc_metadata_array request_md;
    char *path;
    const struct rpc_method *method;         /* NULL: unknown method */
    const struct rpc_registered *registered; /* requested as this method; NULL: generic */
    grpc_byte_buffer *recv_buf;              /* the request; a registered call's comes with it */
    int cancelled;

    pthread_mutex_t mu;
    int work;       /* batches in flight + queued/running handler */
    int refs;       /* memory: 1 while work > 0, plus rpc_stream_ref() */
    bool accepting; /* sends allowed: no final status queued, client still there */
    bool opened;    /* the stream_open handler returned */
    bool initial_md_sent;
    bool after_reply_due; /* a unary reply's after_reply has not run yet */
    bool send_in_flight;
    struct send_item *q_head, *q_tail;
    size_t q_len;
    struct send_item *in_flight;
    grpc_slice status_slice; /* details of the status in flight */

    struct rpc_stream *next_job;
    struct rpc_stream *live_prev, *live_next;

    /* Where a unary call's time goes, for the debug log (-v 3): when it
     * arrived, its request was read (at arrival for a registered call, whose
     * request came with it), a worker took it, the reply was queued
     * (CLOCK_MONOTONIC ns; 0 when the log is quieter). */
    long long t_arrived, t_read, t_taken, t_replied;
};

struct rpc_reply {
    bool set;
    grpc_status_code code;
    char details[STATUS_MSG_MAX];
    grpc_byte_buffer *msg;
};

/* rpc_call.c: the life of one call, driven by the poller and the workers. */
/* For grpc_server_request_call (reg NULL) or grpc_server_request_registered_call. */
struct rpc_stream *call_new(struct rpc_server *srv, const struct rpc_registered *reg);
void call_discard(struct rpc_stream *c); /* a request that never got a call */
/* The call arrived, method looked up; over_budget: NULL, or why the server
 * refuses it (RESOURCE_EXHAUSTED: too many calls of its kind). */
void call_start(struct rpc_stream *c, const char *over_budget);
static inline bool call_is_stream(const struct rpc_stream *c)
{
    return c->method != NULL && c->method->stream_open != NULL;
}
/* The first batch completed: the request is in hand, initial metadata sent. */
void call_on_first(struct rpc_stream *c, bool ok);
void call_on_close(struct rpc_stream *c);
void call_on_send(struct rpc_stream *c, bool ok);
void call_run(struct rpc_stream *c, bool stopping); /* on a worker: decode, run the handler */
/* Ends an opened stream with UNAVAILABLE after its queued messages; calls
 * whose handler has not run yet are left to call_run (stopping). */
void call_shutdown_stream(struct rpc_stream *c);

/* rpc_live.c: the calls in progress (the live list) and the job queue. */
/* Joins the live list; returns the live calls of its kind (unary or
 * stream), this one included, for the server's budget of that kind. */
size_t server_call_arrived(struct rpc_server *srv, struct rpc_stream *c);
void server_call_over(struct rpc_server *srv, struct rpc_stream *c); /* leaves the live list */
size_t server_unary_calls(struct rpc_server *srv); /* unary calls in progress, this one too */
bool server_stopping(struct rpc_server *srv);      /* shutdown has begun */
void server_push_job(struct rpc_server *srv, struct rpc_stream *c);
/* The next job for a worker; waits for one.  NULL once the workers are
 * told to stop and none is left. */
struct rpc_stream *server_pop_job(struct rpc_server *srv);

#endif
