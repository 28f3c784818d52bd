// SPDX-License-Identifier: Apache-2.0
/* Kubernetes objects between JSON (jansson) and the protobuf wire format,
 * driven by protobuf-c descriptors generated from the upstream
 * generated.proto files, with the JSON names, inlining and omitempty rules
 * of the Go types (pb_json_fields.h) and the types whose JSON is not their
 * message: Time, MicroTime, Quantity, IntOrString, RawExtension, FieldsV1.
 *
 * Work is bounded by the input: one pass over the bytes or the JSON, nesting
 * at most PB_JSON_MAX_DEPTH messages deep. */
#ifndef APISERVER_STANDIN_PB_JSON_H
#define APISERVER_STANDIN_PB_JSON_H
#include <jansson.h>
#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define PB_JSON_MAX_DEPTH 64

/* A growable byte buffer (xalloc: never fails). */
struct pb_bytes {
    uint8_t *p;
    size_t len, cap;
};
void pb_bytes_put(struct pb_bytes *b, const void *data, size_t n);
void pb_bytes_varint(struct pb_bytes *b, uint64_t v);
/* Field tag then a length-delimited payload. */
void pb_bytes_field_bytes(struct pb_bytes *b, unsigned number, const void *data, size_t n);
void pb_bytes_free(struct pb_bytes *b);

/* Reads one varint at *pos; -1 when truncated or longer than 10 bytes. */
int pb_read_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v);
/* Finds field number's length-delimited payload in a message (the last
 * occurrence, as protobuf merges); 0 when found, 1 when absent, -1 when the
 * bytes are not a well-formed message. */
int pb_find_bytes(const uint8_t *p, size_t len, unsigned number, const uint8_t **out,
                  size_t *out_len);

/* The message d as a new JSON object (or value, for the special types).
 * NULL and err set ("spec.devices[0].name: ...") when the bytes are not a
 * well-formed d. */
json_t *pb_json_decode(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len,
                       struct error *err);
/* Appends the message d made from obj.  JSON keys that d does not have are
 * left out, as a real server drops unknown fields; a value of the wrong JSON
 * type is an error naming the field. */
int pb_json_encode(const ProtobufCMessageDescriptor *d, const json_t *obj, struct pb_bytes *out,
                   struct error *err);
#endif
