// SPDX-License-Identifier: Apache-2.0
/* Small grpc core helpers that both ends of the driver's gRPC code need, the
 * plugin's server (rpc_call.c) and fakehw-podresources' client: status code
 * names, and bytes in and out of grpc byte buffers and slices.  Plain C memory
 * in and out (malloc'd results, freed with free(); out of memory is fatal), no
 * other state.  The kubelet stand-in has its own: it shares no code with the
 * plugin it tests. */
#ifndef FAKEHW_DRIVER_RPC_WIRE_H
#define FAKEHW_DRIVER_RPC_WIRE_H

#include <grpc/byte_buffer.h>
#include <grpc/slice.h>
#include <grpc/status.h>
#include <stddef.h>
#include <stdint.h>

/* "INVALID_ARGUMENT" for GRPC_STATUS_INVALID_ARGUMENT; "UNKNOWN_CODE" for a
 * number outside the codes gRPC defines. */
const char *rpc_status_name(grpc_status_code code);

/* A byte buffer holding a copy of data (the caller destroys it). */
grpc_byte_buffer *rpc_buffer_from_bytes(const void *data, size_t len);

/* The whole content of bb as malloc'd bytes (at least 1 byte allocated, so
 * an empty message is not NULL); NULL when bb cannot be read.  bb stays the
 * caller's. */
uint8_t *rpc_buffer_to_bytes(grpc_byte_buffer *bb, size_t *len);

/* s as a malloc'd NUL-terminated string. */
char *rpc_slice_to_string(grpc_slice s);

#endif
