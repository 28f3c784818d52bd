// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: NodePrepareResources / NodeUnprepareResources as the
 * plugin handles them.  The first byte picks the method (v1 prepare, v1
 * unprepare, v1beta1 prepare, v1beta1 unprepare), the rest is the request
 * as it comes off the wire: decoded with the method's descriptor as the
 * server does, then handed to the DRA service's own handler (claim list,
 * request checks, de-duplication, per-claim name checks of the prepare path,
 * answer encoding).  The prepare state is real; every claim fetch answers
 * 404, so nothing is ever written. */
#include <grpc/grpc.h>
#include <grpc/byte_buffer.h>
#include <stdint.h>
#include <stdlib.h>

#include "driver/grpc/dra_service.h"
#include "driver/grpc/rpc_internal.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rpc_method methods[DRA_SERVICE_METHODS];

static void setup(void)
{
    grpc_init();
    struct error err;
    struct dra_service *svc = dra_service_new(fuzz_prepare_state(NULL, NULL), &err);
    if (svc == NULL)
        abort();
    dra_service_methods(svc, methods);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (methods[0].unary == NULL)
        setup();
    if (size < 1)
        return 0;
    const struct rpc_method *m = &methods[data[0] % DRA_SERVICE_METHODS];
    ProtobufCMessage *req = protobuf_c_message_unpack(m->request, NULL, size - 1, data + 1);
    if (req == NULL)
        return 0;
    struct rpc_reply reply;
    memset(&reply, 0, sizeof(reply));
    m->unary(m->ctx, req, &reply);
    /* Every call is answered: a message or a status with a reason. */
    if (!reply.set || (reply.msg == NULL && reply.code == GRPC_STATUS_OK))
        abort();
    if (reply.msg != NULL)
        grpc_byte_buffer_destroy(reply.msg);
    protobuf_c_message_free_unpacked(req, NULL);
    return 0;
}
