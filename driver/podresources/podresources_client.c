// SPDX-License-Identifier: Apache-2.0
/* The unary gRPC call: see podresources_client.h. */
#include "podresources_client.h"

#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "driver/grpc/rpc_wire.h"
#include "podresources_reach.h"
#include "xalloc.h"

/* The channel, queue and call of one unary call, released by scope (the
 * call before its queue, the channel last, then grpc itself). */
struct unary_call {
    grpc_channel *channel;
    grpc_completion_queue *cq;
    grpc_call *call;
    grpc_byte_buffer *send;
};

static void unary_call_free(struct unary_call *u)
{
    if (u->channel == NULL)
        return;
    grpc_byte_buffer_destroy(u->send);
    grpc_call_unref(u->call);
    grpc_completion_queue_shutdown(u->cq);
    while (grpc_completion_queue_next(u->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN) {
    }
    grpc_completion_queue_destroy(u->cq);
    grpc_channel_destroy(u->channel);
    grpc_shutdown();
}

/* What the call receives, released by scope. */
struct received {
    grpc_byte_buffer *msg;
    grpc_metadata_array md, trailing;
    grpc_slice details;
    grpc_status_code status;
};

static void received_free(struct received *r)
{
    grpc_slice_unref(r->details);
    grpc_metadata_array_destroy(&r->md);
    grpc_metadata_array_destroy(&r->trailing);
    if (r->msg != NULL)
        grpc_byte_buffer_destroy(r->msg);
}

int podres_call(const char *socket_path, const char *method, const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *answer_desc, double timeout_s,
                ProtobufCMessage **answer, struct error *err)
{
    *answer = NULL;
    char target[4200];
    if (snprintf(target, sizeof(target), "unix:%s", socket_path) >= (int)sizeof(target))
        return error_set(err, "%s: socket path is too long", socket_path);
    size_t req_len = protobuf_c_message_get_packed_size(req);
    cleanup_free uint8_t *req_bytes = xmalloc(req_len);
    protobuf_c_message_pack(req, req_bytes);

    __attribute__((cleanup(unary_call_free))) struct unary_call u = {0};
    grpc_init();
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    u.channel = grpc_channel_create(target, creds, NULL);
    grpc_channel_credentials_release(creds);
    u.cq = grpc_completion_queue_create_for_next(NULL);
    gpr_timespec deadline =
        gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                     gpr_time_from_millis((int64_t)(timeout_s * 1000), GPR_TIMESPAN));
    grpc_slice m = grpc_slice_from_copied_string(method);
    u.call = grpc_channel_create_call(u.channel, NULL, GRPC_PROPAGATE_DEFAULTS, u.cq, m, NULL,
                                      deadline, NULL);
    grpc_slice_unref(m);
    u.send = rpc_buffer_from_bytes(req_bytes, req_len);

    __attribute__((cleanup(received_free))) struct received r = {.status = GRPC_STATUS_UNKNOWN};
    grpc_metadata_array_init(&r.md);
    grpc_metadata_array_init(&r.trailing);
    r.details = grpc_empty_slice();

    grpc_op ops[6];
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = u.send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &r.md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &r.msg;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &r.trailing;
    ops[5].data.recv_status_on_client.status = &r.status;
    ops[5].data.recv_status_on_client.status_details = &r.details;
    if (grpc_call_start_batch(u.call, ops, 6, (void *)(intptr_t)1, NULL) != GRPC_CALL_OK)
        return error_set(err, "%s %s: cannot start the call", socket_path, method);
    /* The deadline ends the call, so this wait is bounded. */
    grpc_event ev = grpc_completion_queue_next(u.cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (ev.type != GRPC_OP_COMPLETE || !ev.success)
        return error_set(err, "%s %s: the call did not complete", socket_path, method);
    if (r.status == GRPC_STATUS_UNAVAILABLE) {
        char why[1024];
        if (podres_explain_unreachable(socket_path, why, sizeof(why)))
            return error_set(err, "%s", why);
    }
    if (r.status == GRPC_STATUS_DEADLINE_EXCEEDED)
        return error_set(err,
                         "%s %s: the kubelet did not answer within %g s (--timeout); is it "
                         "overloaded or hung?",
                         socket_path, method, timeout_s);
    if (r.status != GRPC_STATUS_OK) {
        cleanup_free char *text = rpc_slice_to_string(r.details);
        return error_set(err, "%s %s: %s: %s", socket_path, method, rpc_status_name(r.status),
                         text);
    }
    size_t len = 0;
    cleanup_free uint8_t *bytes = r.msg != NULL ? rpc_buffer_to_bytes(r.msg, &len) : NULL;
    if (r.msg != NULL && bytes == NULL)
        return error_set(err, "%s %s: cannot read the answer", socket_path, method);
    *answer = protobuf_c_message_unpack(answer_desc, NULL, len, bytes);
    if (*answer == NULL)
        return error_set(err, "%s %s: the answer is not a %s", socket_path, method,
                         answer_desc->name);
    return 0;
}
