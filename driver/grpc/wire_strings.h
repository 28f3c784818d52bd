// SPDX-License-Identifier: Apache-2.0
/* Proto3 string fields without NUL bytes.
 *
 * protobuf-c decodes a string field into a NUL-terminated `char *` and
 * forgets its length, so "<uid>\0junk" would reach a handler as "<uid>": a
 * claim answered under a uid the client did not send.  The lengths are only
 * in the encoded bytes, so the server walks those (after protobuf-c accepted
 * them) with the method's descriptor and refuses a request whose strings hold
 * a NUL. */
#ifndef FAKEHW_DRIVER_WIRE_STRINGS_H
#define FAKEHW_DRIVER_WIRE_STRINGS_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* 0 when no string field of the message (nested messages included) holds a
 * NUL byte; -1 with err naming the field path ("claims[2].uid"), the byte
 * offset and the text before the NUL.  buf must be a message protobuf-c
 * decoded with d. */
int wire_strings_check(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
                       struct error *err);

#endif
