// SPDX-License-Identifier: Apache-2.0
/* The API server's protobuf media type at the stand-in's HTTP edge: content
 * negotiation of Accept, the "k8s\0" + runtime.Unknown envelope of request
 * and response bodies, and the length-delimited frames of a protobuf watch
 * (a raw metav1.WatchEvent whose object is an enveloped object), as
 * k8s.io/apimachinery's protobuf serializer writes them.  Inside, the
 * stand-in keeps JSON; this module converts at the edge. */
#ifndef APISERVER_STANDIN_K8S_CODEC_H
#define APISERVER_STANDIN_K8S_CODEC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "pb_json.h"
#include "resources.h"

#define CODEC_JSON           "application/json"
#define CODEC_PROTOBUF       "application/vnd.kubernetes.protobuf"
#define CODEC_PROTOBUF_WATCH "application/vnd.kubernetes.protobuf;stream=watch"

enum codec_media { CODEC_MEDIA_JSON, CODEC_MEDIA_PROTOBUF };

/* The answer's media type for an Accept header (NULL or empty: JSON), the
 * highest-q clause the stand-in can write; -1 when none (406).  Clauses that
 * ask for a transformation (as=Table, ...) are passed over. */
int codec_negotiate(const char *accept, enum codec_media *out);
/* Whether a Content-Type names the protobuf media type. */
bool codec_is_protobuf(const char *content_type);

/* A protobuf request body as JSON text (malloc), with the kind and
 * apiVersion of its envelope.  The kinds read: the served resources, their
 * lists, DeleteOptions. */
char *codec_body_to_json(const uint8_t *body, size_t len, struct error *err);
/* A JSON answer as a protobuf body: an object, a list or a Status, named by
 * its "kind" (or r's kind when it has none). */
int codec_json_to_body(const char *json_text, const struct resource *r, struct pb_bytes *out,
                       struct error *err);
/* One watch event as a frame: a 4-byte big-endian length, then the event. */
int codec_watch_frame(const char *type, const char *object_json, const struct resource *r,
                      struct pb_bytes *out, struct error *err);
#endif
