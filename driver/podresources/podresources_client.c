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
#include "xalloc.h"

int podres_call(const char *socket_path, const char *method, const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *answer_desc, double timeout_s,
                ProtobufCMessage **answer, struct error *err)
{
    *answer = NULL;
    char target[4200];
    if (snprintf(target, sizeof(target), "unix:%s", socket_path) >= (int)sizeof(target))
        return error_set(err, "%s: socket path is too long", socket_path);
    size_t req_len = protobuf_c_message_get_packed_size(req);
    cleanup_free uint8_t *req_bytes = xmalloc(req_len ? req_len : 1);
    protobuf_c_message_pack(req, req_bytes);

    grpc_init();
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    grpc_channel *channel = grpc_channel_create(target, creds, NULL);
    grpc_channel_credentials_release(creds);
    grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
    gpr_timespec deadline =
        gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                     gpr_time_from_millis((int64_t)(timeout_s * 1000), GPR_TIMESPAN));
    grpc_slice m = grpc_slice_from_copied_string(method);
    grpc_call *call = grpc_channel_create_call(channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq, m, NULL,
                                               deadline, NULL);
    grpc_slice_unref(m);

    grpc_byte_buffer *send = rpc_buffer_from_bytes(req_bytes, req_len);
    grpc_byte_buffer *recv = NULL;
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
    if (grpc_call_start_batch(call, ops, 6, (void *)(intptr_t)1, NULL) != GRPC_CALL_OK) {
        error_set(err, "%s %s: cannot start the call", socket_path, method);
        goto out;
    }
    /* The deadline ends the call, so this wait is bounded. */
    grpc_event ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (ev.type != GRPC_OP_COMPLETE || !ev.success) {
        error_set(err, "%s %s: the call did not complete", socket_path, method);
        goto out;
    }
    if (status != GRPC_STATUS_OK) {
        cleanup_free char *text = rpc_slice_to_string(details);
        error_set(err, "%s %s: %s: %s", socket_path, method, rpc_status_name(status), text);
        goto out;
    }
    {
        size_t len = 0;
        cleanup_free uint8_t *bytes = recv != NULL ? rpc_buffer_to_bytes(recv, &len) : NULL;
        if (recv != NULL && bytes == NULL) {
            error_set(err, "%s %s: cannot read the answer", socket_path, method);
            goto out;
        }
        *answer = protobuf_c_message_unpack(answer_desc, NULL, len, bytes);
    }
    if (*answer == NULL) {
        error_set(err, "%s %s: the answer is not a %s", socket_path, method, answer_desc->name);
        goto out;
    }
    rc = 0;
out:
    grpc_slice_unref(details);
    grpc_metadata_array_destroy(&md);
    grpc_metadata_array_destroy(&trailing);
    grpc_byte_buffer_destroy(send);
    if (recv != NULL)
        grpc_byte_buffer_destroy(recv);
    grpc_call_unref(call);
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN) {
    }
    grpc_completion_queue_destroy(cq);
    grpc_channel_destroy(channel);
    grpc_shutdown();
    return rc;
}
