// SPDX-License-Identifier: Apache-2.0
#include "grpc_client.h"

#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_wire.h"
#include "xalloc.h"

struct rpc_client {
    grpc_channel *channel;
    char *path;
};

static gpr_timespec deadline_after(double seconds)
{
    if (seconds <= 0)
        return gpr_inf_future(GPR_CLOCK_REALTIME);
    return gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                        gpr_time_from_millis((int64_t)(seconds * 1000), GPR_TIMESPAN));
}

/* Waits on a next-type queue until `tag` completes; other tags of the call
 * are recorded in done[] (indexed by tag value - 1). */
static bool wait_tag(grpc_completion_queue *cq, intptr_t tag, bool *done, bool *ok)
{
    while (!done[tag - 1]) {
        grpc_event ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type != GRPC_OP_COMPLETE)
            return false;
        intptr_t t = (intptr_t)ev.tag;
        done[t - 1] = true;
        ok[t - 1] = ev.success != 0;
    }
    return ok[tag - 1];
}

static void destroy_queue(grpc_completion_queue *cq)
{
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(cq);
}

struct rpc_client *rpc_client_new(const char *socket_path, struct error *err)
{
    (void)err; // nothing here can fail but memory, which is fatal
    struct rpc_client *c = xcalloc(1, sizeof(*c));
    grpc_init();
    c->path = xasprintf("unix:%s", socket_path);
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    c->channel = grpc_channel_create(c->path, creds, NULL);
    grpc_channel_credentials_release(creds);
    return c;
}

void rpc_client_free(struct rpc_client *c)
{
    if (c == NULL)
        return;
    if (c->channel)
        grpc_channel_destroy(c->channel);
    free(c->path);
    free(c);
    grpc_shutdown_blocking();
}

static grpc_call *make_call(struct rpc_client *c, grpc_completion_queue *cq, const char *method,
                            double timeout)
{
    grpc_slice m = grpc_slice_from_copied_string(method);
    grpc_call *call = grpc_channel_create_call(c->channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq, m,
                                               NULL, deadline_after(timeout), NULL);
    grpc_slice_unref(m);
    return call;
}

int rpc_client_call(struct rpc_client *c, const char *method, const void *req, size_t len,
                    double timeout, struct rpc_answer *a, struct error *err)
{
    memset(a, 0, sizeof(*a));
    grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
    grpc_call *call = make_call(c, cq, method, timeout);
    grpc_byte_buffer *send = wire_buffer_from_bytes(req, len), *recv = NULL;
    grpc_metadata_array md, trailing;
    grpc_metadata_array_init(&md);
    grpc_metadata_array_init(&trailing);
    grpc_slice details = grpc_empty_slice();
    grpc_status_code status = GRPC_STATUS_UNKNOWN;
    int rc = -1;

    grpc_op ops[6];
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &recv;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &trailing;
    ops[5].data.recv_status_on_client.status = &status;
    ops[5].data.recv_status_on_client.status_details = &details;
    bool done[1] = {false}, ok[1] = {false};
    if (grpc_call_start_batch(call, ops, 6, (void *)(intptr_t)1, NULL) != GRPC_CALL_OK) {
        error_set(err, "%s: cannot start the call", method);
    } else {
        wait_tag(cq, 1, done, ok);
        a->status = status;
        a->details = wire_slice_to_string(details);
        if (status == GRPC_STATUS_OK && recv)
            a->data = wire_buffer_to_bytes(recv, &a->len);
        rc = 0;
    }
    /* grpc's order: the call's buffers, the call, then its queue. */
    grpc_slice_unref(details);
    grpc_metadata_array_destroy(&md);
    grpc_metadata_array_destroy(&trailing);
    grpc_byte_buffer_destroy(send);
    if (recv)
        grpc_byte_buffer_destroy(recv);
    grpc_call_unref(call);
    destroy_queue(cq);
    return rc;
}

void rpc_answer_free(struct rpc_answer *a)
{
    free(a->details);
    free(a->data);
    memset(a, 0, sizeof(*a));
}

/* Tags of a stream's batches (values are indexes + 1 into done/ok). */
enum { T_SEND = 1, T_MD, T_STATUS, T_MSG, T_COUNT = T_MSG };

struct rpc_client_stream {
    grpc_completion_queue *cq;
    grpc_call *call;
    grpc_byte_buffer *send, *recv;
    grpc_metadata_array md, trailing;
    grpc_status_code status;
    grpc_slice details_slice;
    char *details;
    bool started[T_COUNT], done[T_COUNT], ok[T_COUNT];
};

struct rpc_client_stream *rpc_client_stream_open(struct rpc_client *c, const char *method,
                                                 const void *req, size_t len, double timeout,
                                                 struct error *err)
{
    struct rpc_client_stream *s = xcalloc(1, sizeof(*s));
    s->cq = grpc_completion_queue_create_for_next(NULL);
    s->call = make_call(c, s->cq, method, timeout);
    s->send = wire_buffer_from_bytes(req, len);
    grpc_metadata_array_init(&s->md);
    grpc_metadata_array_init(&s->trailing);
    s->details_slice = grpc_empty_slice();
    s->status = GRPC_STATUS_UNKNOWN;

    grpc_op send_ops[3], md_op, status_op;
    memset(send_ops, 0, sizeof(send_ops));
    memset(&md_op, 0, sizeof(md_op));
    memset(&status_op, 0, sizeof(status_op));
    send_ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    send_ops[1].op = GRPC_OP_SEND_MESSAGE;
    send_ops[1].data.send_message.send_message = s->send;
    send_ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    md_op.op = GRPC_OP_RECV_INITIAL_METADATA;
    md_op.data.recv_initial_metadata.recv_initial_metadata = &s->md;
    status_op.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    status_op.data.recv_status_on_client.trailing_metadata = &s->trailing;
    status_op.data.recv_status_on_client.status = &s->status;
    status_op.data.recv_status_on_client.status_details = &s->details_slice;
    if (grpc_call_start_batch(s->call, send_ops, 3, (void *)(intptr_t)T_SEND, NULL) == GRPC_CALL_OK)
        s->started[T_SEND - 1] = true;
    if (grpc_call_start_batch(s->call, &md_op, 1, (void *)(intptr_t)T_MD, NULL) == GRPC_CALL_OK)
        s->started[T_MD - 1] = true;
    if (grpc_call_start_batch(s->call, &status_op, 1, (void *)(intptr_t)T_STATUS, NULL) ==
        GRPC_CALL_OK)
        s->started[T_STATUS - 1] = true;
    if (!s->started[T_SEND - 1] || !s->started[T_MD - 1] || !s->started[T_STATUS - 1]) {
        rpc_client_stream_close(s);
        return error_set(err, "%s: cannot start the call", method), NULL;
    }
    return s;
}

int rpc_client_stream_next(struct rpc_client_stream *s, uint8_t **data, size_t *len)
{
    if (!s->done[T_STATUS - 1]) {
        grpc_op op;
        memset(&op, 0, sizeof(op));
        op.op = GRPC_OP_RECV_MESSAGE;
        op.data.recv_message.recv_message = &s->recv;
        s->done[T_MSG - 1] = false;
        if (grpc_call_start_batch(s->call, &op, 1, (void *)(intptr_t)T_MSG, NULL) == GRPC_CALL_OK) {
            s->started[T_MSG - 1] = true;
            bool ok = wait_tag(s->cq, T_MSG, s->done, s->ok);
            s->started[T_MSG - 1] = false;
            if (ok && s->recv) {
                *data = wire_buffer_to_bytes(s->recv, len);
                grpc_byte_buffer_destroy(s->recv);
                s->recv = NULL;
                if (*data)
                    return 1;
            }
        }
    }
    wait_tag(s->cq, T_STATUS, s->done, s->ok);
    return 0;
}

grpc_status_code rpc_client_stream_status(struct rpc_client_stream *s, const char **details)
{
    if (s->details == NULL)
        s->details = wire_slice_to_string(s->details_slice);
    if (details)
        *details = s->details ? s->details : "";
    return s->status;
}

void rpc_client_stream_close(struct rpc_client_stream *s)
{
    if (s == NULL)
        return;
    if (!s->done[T_STATUS - 1])
        grpc_call_cancel(s->call, NULL);
    for (int t = 1; t <= T_COUNT; t++)
        if (s->started[t - 1])
            wait_tag(s->cq, t, s->done, s->ok);
    if (s->recv)
        grpc_byte_buffer_destroy(s->recv);
    grpc_byte_buffer_destroy(s->send);
    grpc_metadata_array_destroy(&s->md);
    grpc_metadata_array_destroy(&s->trailing);
    grpc_slice_unref(s->details_slice);
    free(s->details);
    grpc_call_unref(s->call);
    destroy_queue(s->cq);
    free(s);
}
