// SPDX-License-Identifier: Apache-2.0
/* grpc core helpers of the plugin's server and fakehw-podresources: see rpc_wire.h. */
#include "rpc_wire.h"

#include <grpc/byte_buffer_reader.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

const char *rpc_status_name(grpc_status_code code)
{
    static const char *const names[] = {
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    };
    if ((unsigned)code < sizeof(names) / sizeof(names[0]))
        return names[code];
    return "UNKNOWN_CODE";
}

grpc_byte_buffer *rpc_buffer_from_bytes(const void *data, size_t len)
{
    grpc_slice s = grpc_slice_from_copied_buffer(data, len);
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    return bb;
}

uint8_t *rpc_buffer_to_bytes(grpc_byte_buffer *bb, size_t *len)
{
    grpc_byte_buffer_reader r;
    *len = 0;
    if (!grpc_byte_buffer_reader_init(&r, bb))
        return NULL;
    grpc_slice all = grpc_byte_buffer_reader_readall(&r);
    grpc_byte_buffer_reader_destroy(&r);
    *len = GRPC_SLICE_LENGTH(all);
    uint8_t *out = xmalloc(*len ? *len : 1);
    memcpy(out, GRPC_SLICE_START_PTR(all), *len);
    grpc_slice_unref(all);
    return out;
}

char *rpc_slice_to_string(grpc_slice s)
{
    size_t n = GRPC_SLICE_LENGTH(s);
    char *out = xmalloc(n + 1);
    memcpy(out, GRPC_SLICE_START_PTR(s), n);
    out[n] = '\0';
    return out;
}
