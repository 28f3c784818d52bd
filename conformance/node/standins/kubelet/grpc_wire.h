// SPDX-License-Identifier: Apache-2.0
/* The kubelet stand-in's own grpc core helpers: status code names, and bytes
 * in and out of grpc byte buffers and slices.  The stand-in shares no code
 * with the plugin it tests (docs/conformance.md), so these are its own and
 * not the plugin's driver/grpc/rpc_wire.c. */
#ifndef FAKEHW_STANDIN_GRPC_WIRE_H
#define FAKEHW_STANDIN_GRPC_WIRE_H

#include <grpc/byte_buffer.h>
#include <grpc/slice.h>
#include <grpc/status.h>
#include <stddef.h>
#include <stdint.h>

/* "INVALID_ARGUMENT" for GRPC_STATUS_INVALID_ARGUMENT; "UNKNOWN_CODE" for a
 * number outside the codes gRPC defines. */
const char *wire_status_name(grpc_status_code code);

/* A byte buffer holding a copy of data (the caller destroys it). */
grpc_byte_buffer *wire_buffer_from_bytes(const void *data, size_t len);

/* The whole content of bb as malloc'd bytes (at least 1 byte allocated, so an
 * empty message is not NULL); NULL when bb cannot be read.  bb stays the
 * caller's. */
uint8_t *wire_buffer_to_bytes(grpc_byte_buffer *bb, size_t *len);

/* s as a malloc'd NUL-terminated string. */
char *wire_slice_to_string(grpc_slice s);

#endif
