// SPDX-License-Identifier: Apache-2.0
/* How a protobuf field of a Kubernetes type appears in JSON, from the Go
 * struct tags of k8s.io/api and k8s.io/apimachinery (json-fields.py writes
 * the table at build time; the .proto files do not carry this). */
#ifndef APISERVER_STANDIN_PB_JSON_FIELDS_H
#define APISERVER_STANDIN_PB_JSON_FIELDS_H
#include <stddef.h>

enum {
    PBJ_INLINE = 1,    /* an embedded struct: its fields sit in the parent's JSON object */
    PBJ_OMITEMPTY = 2, /* json:",omitempty": a zero scalar is left out */
    PBJ_POINTER = 4,   /* a Go pointer: on the wire only when set, zero or not */
    PBJ_SKIP = 8,      /* json:"-" */
};

struct pb_json_field {
    const char *message; /* full protobuf name, "k8s.io.api.resource.v1.Device" */
    unsigned number;     /* field number */
    const char *json;    /* JSON name ("" for an inlined struct) */
    unsigned flags;
};

/* Sorted by message (strcmp), then number. */
extern const struct pb_json_field pb_json_fields[];
extern const size_t pb_json_fields_len;
extern const char pb_json_fields_version[]; /* the k8s.io/api version read */

/* The row of message's field number, or NULL (then the JSON name is the
 * protobuf name and zero values are kept). */
const struct pb_json_field *pb_json_field_find(const char *message, unsigned number);
#endif
