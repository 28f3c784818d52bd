// SPDX-License-Identifier: Apache-2.0
/* One call on the server: its batches, the send queue (one send in flight),
 * the handler run on a worker, and the API services see: rpc_reply for unary
 * answers, rpc_stream for server streams.  See rpc_internal.h for the
 * batches and the work counting. */
#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/slice.h>
#include <stdarg.h>
#include <time.h>

#include "driver/grpc/rpc_internal.h"
#include "driver/grpc/wire_strings.h"
#include "driver/grpc/rpc_wire.h"
#include "monotonic.h"
#include "xalloc.h"

static void call_work_done(struct rpc_stream *c);
static void run_after_reply(struct rpc_stream *c);

/* The verbosity at which a unary call's timeline is logged. */
#define RPC_TRACE_VERBOSITY 3

static long long trace_now(void)
{
    if (log_verbosity < RPC_TRACE_VERBOSITY)
        return 0;
    return monotonic_ns();
}

/* ---------- helpers ---------- */

/* Packs a protobuf-c message into a byte buffer. */
static grpc_byte_buffer *pack_message(const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = xmalloc(len);
    protobuf_c_message_pack(msg, buf);
    grpc_slice slice = grpc_slice_new(buf, len, free);
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&slice, 1);
    grpc_slice_unref(slice);
    return bb;
}

static void send_item_free(struct send_item *it)
{
    if (it == NULL)
        return;
    if (it->msg)
        grpc_byte_buffer_destroy(it->msg);
    free(it->details);
    free(it);
}

static struct send_item *send_item_new(grpc_byte_buffer *msg, bool has_status,
                                       grpc_status_code code, const char *details)
{
    struct send_item *it = xcalloc(1, sizeof(*it));
    it->msg = msg;
    it->has_status = has_status;
    it->code = code;
    it->details = has_status ? xstrdup(details ? details : "") : NULL;
    return it;
}

static void drop_queue_locked(struct rpc_stream *c)
{
    while (c->q_head) {
        struct send_item *it = c->q_head;
        c->q_head = it->next;
        send_item_free(it);
    }
    c->q_tail = NULL;
    c->q_len = 0;
}

/* ---------- sending ---------- */

/* Starts the next queued item if nothing is in flight.  Caller holds c->mu. */
static void start_next_send_locked(struct rpc_stream *c)
{
    if (c->send_in_flight || c->q_head == NULL)
        return;
    struct send_item *it = c->q_head;
    c->q_head = it->next;
    if (c->q_head == NULL)
        c->q_tail = NULL;
    c->q_len--;

    grpc_op ops[3];
    size_t n = 0;
    memset(ops, 0, sizeof(ops));
    if (!c->initial_md_sent) {
        ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
        n++;
        c->initial_md_sent = true;
    }
    if (it->msg) {
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n].data.send_message.send_message = it->msg;
        n++;
    }
    if (it->has_status) {
        c->status_slice = grpc_slice_from_copied_string(it->details);
        ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
        ops[n].data.send_status_from_server.status = it->code;
        ops[n].data.send_status_from_server.status_details = &c->status_slice;
        n++;
    }
    grpc_call_error rc = grpc_call_start_batch(c->call, ops, n, &c->t_send, NULL);
    if (rc != GRPC_CALL_OK) {
        LOG_E("rpc %s: starting a send failed (grpc_call_error %d); cancelling the call", c->path,
              (int)rc);
        if (it->has_status)
            grpc_slice_unref(c->status_slice);
        send_item_free(it);
        c->accepting = false;
        drop_queue_locked(c);
        grpc_call_cancel(c->call, NULL);
        return;
    }
    c->in_flight = it;
    c->send_in_flight = true;
    c->work++;
}

static void enqueue_locked(struct rpc_stream *c, struct send_item *it)
{
    if (c->q_tail)
        c->q_tail->next = it;
    else
        c->q_head = it;
    c->q_tail = it;
    c->q_len++;
    start_next_send_locked(c);
}

/* Ends a call with a status (no message).  Used for early errors. */
static void finish_with_status(struct rpc_stream *c, grpc_status_code code, const char *details)
{
    pthread_mutex_lock(&c->mu);
    if (c->accepting) {
        c->accepting = false;
        enqueue_locked(c, send_item_new(NULL, true, code, details));
    }
    pthread_mutex_unlock(&c->mu);
    LOG_V(2, "rpc %s on %s: %s: %s", c->path, c->srv->name, rpc_status_name(code), details);
}

/* ---------- call lifecycle ---------- */

static void stream_free(struct rpc_stream *c)
{
    pthread_mutex_destroy(&c->mu);
    free(c->path);
    free(c);
}

struct rpc_stream *call_new(struct rpc_server *srv, const struct rpc_registered *reg)
{
    struct rpc_stream *c = xcalloc(1, sizeof(*c));
    c->srv = srv;
    c->registered = reg;
    c->method = reg ? reg->method : NULL; /* a generic call's is looked up at arrival */
    c->t_new = (struct tag){TAG_NEW_CALL, c};
    c->t_first = (struct tag){TAG_FIRST, c};
    c->t_close = (struct tag){TAG_CLOSE, c};
    c->t_send = (struct tag){TAG_SEND, c};
    grpc_call_details_init(&c->details);
    grpc_metadata_array_init(&c->request_md);
    pthread_mutex_init(&c->mu, NULL);
    c->refs = 1;
    return c;
}

/* Releases what a pending (never arrived) call holds. */
void call_discard(struct rpc_stream *c)
{
    if (c->recv_buf)
        grpc_byte_buffer_destroy(c->recv_buf);
    grpc_call_details_destroy(&c->details);
    grpc_metadata_array_destroy(&c->request_md);
    stream_free(c);
}

/* The call is over: notify, release grpc state, leave the live list. */
static void call_finalize(struct rpc_stream *c)
{
    struct rpc_server *srv = c->srv;
    run_after_reply(c); /* a reply that was never sent */
    if (c->method && c->method->stream_open && c->opened && c->method->stream_closed)
        c->method->stream_closed(c->method->ctx, c);

    pthread_mutex_lock(&c->mu);
    drop_queue_locked(c);
    c->accepting = false;
    pthread_mutex_unlock(&c->mu);
    if (c->recv_buf) {
        grpc_byte_buffer_destroy(c->recv_buf);
        c->recv_buf = NULL;
    }
    grpc_call_unref(c->call);
    c->call = NULL;
    grpc_call_details_destroy(&c->details);
    grpc_metadata_array_destroy(&c->request_md);

    server_call_over(srv, c);
    rpc_stream_unref(c);
}

static void call_work_done(struct rpc_stream *c)
{
    pthread_mutex_lock(&c->mu);
    int left = --c->work;
    if (left == 0)
        c->accepting = false; /* nothing may start a batch on a call being released */
    pthread_mutex_unlock(&c->mu);
    if (left == 0)
        call_finalize(c);
}

/* The request is in hand (poller thread): refuse a missing one, else run the
 * handler here (on_poller) or hand it to a worker.  Takes over one work
 * reference, which the handler's run gives back. */
static void dispatch(struct rpc_stream *c)
{
    if (c->recv_buf == NULL) {
        finish_with_status(c, GRPC_STATUS_INVALID_ARGUMENT,
                           "the client half-closed without sending a request message");
        call_work_done(c);
        return;
    }
    c->t_read = trace_now();
    /* On the poller only while it is the one unary call: calls that come
     * together (a node deleting many pods) go to the workers, in parallel,
     * instead of queueing behind each other on the poller. */
    if (c->method->unary != NULL && c->method->on_poller && server_unary_calls(c->srv) <= 1) {
        call_run(c, server_stopping(c->srv));
        return;
    }
    server_push_job(c->srv, c);
}

/* Starts the first batch (see rpc_internal.h) with the ops given; its
 * completion dispatches the request.  Caller holds c->mu. */
static void start_first_locked(struct rpc_stream *c, grpc_op *ops, size_t n)
{
    c->initial_md_sent = true;
    if (grpc_call_start_batch(c->call, ops, n, &c->t_first, NULL) == GRPC_CALL_OK) {
        c->work++;
    } else {
        LOG_E("rpc %s on %s: cannot start the call's first batch; cancelling", c->path,
              c->srv->name);
        c->accepting = false;
        grpc_call_cancel(c->call, NULL);
    }
}

static void watch_close(struct rpc_stream *c)
{
    grpc_op close_op;
    memset(&close_op, 0, sizeof(close_op));
    close_op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    close_op.data.recv_close_on_server.cancelled = &c->cancelled;
    pthread_mutex_lock(&c->mu);
    if (grpc_call_start_batch(c->call, &close_op, 1, &c->t_close, NULL) == GRPC_CALL_OK)
        c->work++;
    else
        LOG_E("rpc %s on %s: cannot watch for the call's end", c->path, c->srv->name);
    pthread_mutex_unlock(&c->mu);
}

/* The call arrived (poller thread): watch for its end, then either answer
 * at once (unknown method, too many calls), or dispatch the request that
 * came with a registered unary call, or send the initial metadata and, for
 * a generic call, read the request. */
void call_start(struct rpc_stream *c, const char *over_budget)
{
    struct rpc_server *srv = c->srv;
    c->t_arrived = trace_now();
    LOG_V(4, "rpc %s on %s: new call", c->path, srv->name);

    pthread_mutex_lock(&c->mu);
    c->accepting = true;
    c->work = 1; /* held by this function until the end */
    pthread_mutex_unlock(&c->mu);

    char msg[STATUS_MSG_MAX];
    if (c->method == NULL) {
        snprintf(msg, sizeof(msg), "unknown method %s", c->path);
        finish_with_status(c, GRPC_STATUS_UNIMPLEMENTED, msg);
    } else if (over_budget != NULL) {
        finish_with_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, over_budget);
    } else if (c->registered != NULL && !call_is_stream(c)) {
        /* The request came with the call: no batch before the answer, whose
         * send batch carries the initial metadata too (one write). */
        pthread_mutex_lock(&c->mu);
        c->work++; /* the handler's run, as the first batch's would be */
        pthread_mutex_unlock(&c->mu);
        dispatch(c);
    } else if (c->registered != NULL) {
        /* A stream: its initial metadata goes out before the handler runs. */
        grpc_op op;
        memset(&op, 0, sizeof(op));
        op.op = GRPC_OP_SEND_INITIAL_METADATA;
        pthread_mutex_lock(&c->mu);
        start_first_locked(c, &op, 1);
        pthread_mutex_unlock(&c->mu);
    } else {
        grpc_op ops[2];
        memset(ops, 0, sizeof(ops));
        ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
        ops[1].op = GRPC_OP_RECV_MESSAGE;
        ops[1].data.recv_message.recv_message = &c->recv_buf;
        pthread_mutex_lock(&c->mu);
        start_first_locked(c, ops, 2);
        pthread_mutex_unlock(&c->mu);
    }
    /* The close batch tells us when the client goes away and holds one work
     * reference until the very end.  Started last, so that a unary call run
     * on the poller is answered first; this function's own reference keeps
     * the call alive until then. */
    watch_close(c);
    call_work_done(c);
}

void call_on_first(struct rpc_stream *c, bool ok)
{
    if (!ok) { /* the call broke before the request came; the close batch ends it */
        call_work_done(c);
        return;
    }
    dispatch(c); /* the first batch's work reference passes to the handler's run */
}

void call_on_close(struct rpc_stream *c)
{
    pthread_mutex_lock(&c->mu);
    c->accepting = false;
    drop_queue_locked(c);
    pthread_mutex_unlock(&c->mu);
    if (c->cancelled)
        LOG_V(3, "rpc %s on %s: ended by the client or cancelled", c->path, c->srv->name);
    call_work_done(c);
}

/* Runs a unary method's after_reply once: its threads are woken when the
 * reply is in the socket already, so they do not compete with the write,
 * nor with the client reading it, more than they must. */
static void run_after_reply(struct rpc_stream *c)
{
    pthread_mutex_lock(&c->mu);
    bool due = c->after_reply_due;
    c->after_reply_due = false;
    pthread_mutex_unlock(&c->mu);
    if (due)
        c->method->after_reply(c->method->ctx);
}

void call_on_send(struct rpc_stream *c, bool ok)
{
    pthread_mutex_lock(&c->mu);
    struct send_item *it = c->in_flight;
    c->in_flight = NULL;
    c->send_in_flight = false;
    if (it && it->has_status) {
        grpc_slice_unref(c->status_slice);
        if (c->t_replied != 0 && c->t_arrived != 0 && ok) {
            long long now = trace_now();
            LOG_V(RPC_TRACE_VERBOSITY,
                  "rpc %s on %s: %.3f ms from arrival to sent: request read %.3f, to a worker "
                  "%.3f, handler %.3f, reply sent %.3f",
                  c->path, c->srv->name, (double)(now - c->t_arrived) / 1e6,
                  (double)(c->t_read - c->t_arrived) / 1e6, (double)(c->t_taken - c->t_read) / 1e6,
                  (double)(c->t_replied - c->t_taken) / 1e6, (double)(now - c->t_replied) / 1e6);
        }
    }
    if (!ok) { /* the client is gone: nothing more will get through */
        c->accepting = false;
        drop_queue_locked(c);
    } else {
        start_next_send_locked(c);
    }
    bool final = it != NULL && it->has_status;
    pthread_mutex_unlock(&c->mu);
    send_item_free(it);
    if (final)
        run_after_reply(c);
    call_work_done(c);
}

/* ---------- handlers ---------- */

/* Reads the whole request into a decoded message; NULL = undecodable, or
 * refused with the reason in err (a string holding a NUL byte, which the
 * decoded `char *` would cut silently). */
static ProtobufCMessage *decode_request(struct rpc_stream *c, size_t *len, struct error *err)
{
    uint8_t *bytes = rpc_buffer_to_bytes(c->recv_buf, len);
    ProtobufCMessage *m =
        bytes ? protobuf_c_message_unpack(c->method->request, NULL, *len, bytes) : NULL;
    if (m == NULL) {
        error_set(err, "cannot decode the request as %s (%zu bytes)", c->method->request->name,
                  *len);
    } else if (wire_strings_check(c->method->request, bytes, *len, err) < 0) {
        protobuf_c_message_free_unpacked(m, NULL);
        m = NULL;
    }
    free(bytes);
    grpc_byte_buffer_destroy(c->recv_buf);
    c->recv_buf = NULL;
    return m;
}

/* Runs on a worker: decodes the request and runs the handler. */
void call_run(struct rpc_stream *c, bool stopping)
{
    struct rpc_server *srv = c->srv;
    if (stopping) {
        finish_with_status(c, GRPC_STATUS_UNAVAILABLE, "the server is shutting down");
        call_work_done(c);
        return;
    }
    size_t len;
    struct error err;
    ProtobufCMessage *req = decode_request(c, &len, &err);
    if (req == NULL) {
        LOG_W("rpc %s on %s: refused: %s", c->path, srv->name, err.msg);
        finish_with_status(c, GRPC_STATUS_INVALID_ARGUMENT, err.msg);
        call_work_done(c);
        return;
    }

    if (c->method->unary) {
        c->t_taken = trace_now();
        struct rpc_reply r = {.set = false};
        c->method->unary(c->method->ctx, req, &r);
        if (!r.set) {
            r.code = GRPC_STATUS_INTERNAL;
            snprintf(r.details, sizeof(r.details), "the %s handler gave no answer", c->path);
        }
        pthread_mutex_lock(&c->mu);
        c->t_replied = trace_now();
        /* after_reply runs once the reply is written (call_on_send), or
         * when the call is over without it (call_finalize). */
        c->after_reply_due = c->method->after_reply != NULL;
        if (c->accepting) {
            c->accepting = false;
            enqueue_locked(c, send_item_new(r.msg, true, r.code, r.details));
            r.msg = NULL;
        }
        pthread_mutex_unlock(&c->mu);
        /* Logged once the reply is on its way, not before. */
        LOG_V(2, "rpc %s on %s: %s%s%s", c->path, srv->name, rpc_status_name(r.code),
              r.code ? ": " : "", r.code ? r.details : "");
        if (r.msg)
            grpc_byte_buffer_destroy(r.msg);
    } else {
        LOG_V(2, "rpc %s on %s: stream opened", c->path, srv->name);
        c->method->stream_open(c->method->ctx, req, c);
        pthread_mutex_lock(&c->mu);
        c->opened = true;
        pthread_mutex_unlock(&c->mu);
    }
    protobuf_c_message_free_unpacked(req, NULL);
    call_work_done(c);
}

/* ---------- unary replies ---------- */

void rpc_reply_message(struct rpc_reply *r, const ProtobufCMessage *msg)
{
    if (r->msg)
        grpc_byte_buffer_destroy(r->msg);
    r->msg = pack_message(msg);
    r->set = true;
    r->code = GRPC_STATUS_OK;
    r->details[0] = '\0';
}

void rpc_reply_packed(struct rpc_reply *r, const void *data, size_t len)
{
    if (r->msg)
        grpc_byte_buffer_destroy(r->msg);
    r->msg = rpc_buffer_from_bytes(data, len);
    r->set = true;
    r->code = GRPC_STATUS_OK;
    r->details[0] = '\0';
}

void rpc_reply_error(struct rpc_reply *r, grpc_status_code code, const char *fmt, ...)
{
    if (r->msg) {
        grpc_byte_buffer_destroy(r->msg);
        r->msg = NULL;
    }
    r->set = true;
    r->code = code == GRPC_STATUS_OK ? GRPC_STATUS_UNKNOWN : code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->details, sizeof(r->details), fmt, ap);
    va_end(ap);
}

/* ---------- streams ---------- */

void rpc_stream_ref(struct rpc_stream *s)
{
    pthread_mutex_lock(&s->mu);
    s->refs++;
    pthread_mutex_unlock(&s->mu);
}

void rpc_stream_unref(struct rpc_stream *s)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->mu);
    int left = --s->refs;
    pthread_mutex_unlock(&s->mu);
    if (left == 0)
        stream_free(s);
}

int rpc_stream_send_latest(struct rpc_stream *s, const void *data, size_t len, struct error *err)
{
    grpc_byte_buffer *bb = rpc_buffer_from_bytes(data, len);
    pthread_mutex_lock(&s->mu);
    if (!s->accepting) {
        pthread_mutex_unlock(&s->mu);
        grpc_byte_buffer_destroy(bb);
        return error_set(err, "stream %s: closed", s->path);
    }
    drop_queue_locked(s);
    if (s->q_len >= RPC_STREAM_MAX_QUEUED) {
        s->accepting = false;
        drop_queue_locked(s);
        grpc_call_cancel_with_status(s->call, GRPC_STATUS_RESOURCE_EXHAUSTED,
                                     "client does not read the stream", NULL);
        pthread_mutex_unlock(&s->mu);
        grpc_byte_buffer_destroy(bb);
        return error_set(err, "stream %s: %d messages queued, the client does not read; cancelled",
                         s->path, RPC_STREAM_MAX_QUEUED);
    }
    enqueue_locked(s, send_item_new(bb, false, GRPC_STATUS_OK, NULL));
    pthread_mutex_unlock(&s->mu);
    return 0;
}

void call_shutdown_stream(struct rpc_stream *c)
{
    pthread_mutex_lock(&c->mu);
    if (c->opened && c->accepting) {
        c->accepting = false;
        enqueue_locked(
            c, send_item_new(NULL, true, GRPC_STATUS_UNAVAILABLE, "the plugin is shutting down"));
    }
    pthread_mutex_unlock(&c->mu);
}
