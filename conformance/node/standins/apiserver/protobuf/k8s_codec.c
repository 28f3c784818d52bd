// SPDX-License-Identifier: Apache-2.0
/* The protobuf media type at the HTTP edge; see k8s_codec.h. */
#include "k8s_codec.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "k8s.io/apimachinery/pkg/apis/meta/v1/generated.pb-c.h"
#include "xalloc.h"

static const uint8_t magic[4] = {'k', '8', 's', 0};

/* ---------- kinds ---------- */

static const ProtobufCMessageDescriptor *const status_desc =
    &k8s__io__apimachinery__pkg__apis__meta__v1__status__descriptor;
static const ProtobufCMessageDescriptor *const delete_options_desc =
    &k8s__io__apimachinery__pkg__apis__meta__v1__delete_options__descriptor;

/* The message of a kind, from the served resources (objects and lists) and
 * the meta kinds; NULL when the stand-in does not know it. */
static const ProtobufCMessageDescriptor *kind_descriptor(const char *kind)
{
    if (kind == NULL)
        return NULL;
    if (!strcmp(kind, "Status"))
        return status_desc;
    if (!strcmp(kind, "DeleteOptions"))
        return delete_options_desc;
    for (int i = 0; i < RESOURCE_COUNT; i++) {
        const struct resource *r = resource_by_id(i);
        size_t n = strlen(r->kind);
        if (!strcmp(kind, r->kind))
            return r->pb;
        if (!strncmp(kind, r->kind, n) && !strcmp(kind + n, "List"))
            return r->pb_list;
    }
    return NULL;
}

/* ---------- negotiation ---------- */

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    for (char *e = s + strlen(s); e > s && (e[-1] == ' ' || e[-1] == '\t');)
        *--e = '\0';
    return s;
}

/* One Accept clause: its media (or -1) and q. */
static int clause_media(char *clause, double *q)
{
    *q = 1.0;
    char *save = NULL;
    char *type = trim(strtok_r(clause, ";", &save));
    int media = -1;
    if (!strcasecmp(type, CODEC_JSON) || !strcmp(type, "*/*") || !strcasecmp(type, "application/*"))
        media = CODEC_MEDIA_JSON;
    else if (!strcasecmp(type, CODEC_PROTOBUF))
        media = CODEC_MEDIA_PROTOBUF;
    for (char *p = strtok_r(NULL, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
        p = trim(p);
        if (!strncasecmp(p, "q=", 2))
            *q = strtod(p + 2, NULL);
        else if (strncasecmp(p, "stream=", 7) && strncasecmp(p, "charset=", 8))
            media = -1; /* as=Table;g=..;v=..: a transformation the stand-in does not do */
    }
    return *q > 0 ? media : -1;
}

int codec_negotiate(const char *accept, enum codec_media *out)
{
    *out = CODEC_MEDIA_JSON;
    while (accept && (*accept == ' ' || *accept == '\t'))
        accept++;
    if (accept == NULL || *accept == '\0')
        return 0;
    char *copy = xstrdup(accept), *save = NULL;
    double best_q = 0;
    int best = -1;
    for (char *c = strtok_r(copy, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
        double q;
        char clause[256];
        snprintf(clause, sizeof(clause), "%s", c);
        int m = clause_media(clause, &q);
        if (m >= 0 && q > best_q) {
            best = m;
            best_q = q;
        }
    }
    free(copy);
    if (best < 0)
        return -1;
    *out = (enum codec_media)best;
    return 0;
}

bool codec_is_protobuf(const char *content_type)
{
    if (content_type == NULL)
        return false;
    size_t n = strlen(CODEC_PROTOBUF);
    while (*content_type == ' ')
        content_type++;
    return !strncasecmp(content_type, CODEC_PROTOBUF, n) &&
           (content_type[n] == '\0' || content_type[n] == ';' || content_type[n] == ' ');
}

/* ---------- the envelope ---------- */

static void envelope(const char *api_version, const char *kind, const struct pb_bytes *raw,
                     struct pb_bytes *out)
{
    struct pb_bytes tm = {0};
    pb_bytes_field_bytes(&tm, 1, api_version, strlen(api_version));
    pb_bytes_field_bytes(&tm, 2, kind, strlen(kind));
    pb_bytes_put(out, magic, sizeof(magic));
    pb_bytes_field_bytes(out, 1, tm.p, tm.len);     /* typeMeta */
    pb_bytes_field_bytes(out, 2, raw->p, raw->len); /* raw */
    pb_bytes_field_bytes(out, 3, "", 0);            /* contentEncoding */
    pb_bytes_field_bytes(out, 4, "", 0);            /* contentType */
    pb_bytes_free(&tm);
}

static char *field_string(const uint8_t *p, size_t len, unsigned number)
{
    const uint8_t *s;
    size_t n;
    if (pb_find_bytes(p, len, number, &s, &n) != 0)
        return xstrdup("");
    return xstrndup((const char *)s, n);
}

char *codec_body_to_json(const uint8_t *body, size_t len, struct error *err)
{
    if (len < sizeof(magic) || memcmp(body, magic, sizeof(magic))) {
        error_set(err,
                  "the body does not start with the protobuf envelope's magic bytes \"k8s\\x00\"");
        return NULL;
    }
    const uint8_t *p = body + sizeof(magic), *tm = NULL, *raw = NULL;
    size_t n = len - sizeof(magic), tm_len = 0, raw_len = 0;
    const uint8_t *enc;
    size_t enc_len = 0;
    if (pb_find_bytes(p, n, 1, &tm, &tm_len) < 0 || pb_find_bytes(p, n, 2, &raw, &raw_len) < 0 ||
        pb_find_bytes(p, n, 3, &enc, &enc_len) < 0) {
        error_set(err, "the protobuf envelope (runtime.Unknown) is malformed");
        return NULL;
    }
    if (enc_len) {
        error_set(err, "the protobuf envelope names a content encoding, which is not supported");
        return NULL;
    }
    char *api_version = tm ? field_string(tm, tm_len, 1) : xstrdup("");
    char *kind = tm ? field_string(tm, tm_len, 2) : xstrdup("");
    char *text = NULL;
    const ProtobufCMessageDescriptor *d = kind_descriptor(kind);
    if (d == NULL) {
        error_set(err, "no kind \"%s\" is registered for version \"%s\"", kind, api_version);
    } else {
        json_t *obj = pb_json_decode(d, raw ? raw : (const uint8_t *)"", raw_len, err);
        if (obj) {
            json_t *out = json_pack("{s:s, s:s}", "kind", kind, "apiVersion", api_version);
            json_object_update(out, obj);
            text = json_dumps(out, JSON_COMPACT);
            json_decref(out);
            json_decref(obj);
        } else {
            error_prefix(err, "decoding %s", kind);
        }
    }
    free(api_version);
    free(kind);
    return text;
}

static int encode_object(const json_t *obj, const struct resource *r, struct pb_bytes *out,
                         struct error *err)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *api_version = json_string_value(json_object_get(obj, "apiVersion"));
    if (kind == NULL && r) {
        kind = r->kind;
        api_version = r->api_version;
    }
    const ProtobufCMessageDescriptor *d = kind_descriptor(kind);
    if (d == NULL)
        return error_set(err, "no protobuf message for kind \"%s\"", kind ? kind : "");
    struct pb_bytes raw = {0};
    if (pb_json_encode(d, obj, &raw, err) < 0) {
        pb_bytes_free(&raw);
        return error_prefix(err, "encoding %s", kind);
    }
    envelope(api_version ? api_version : "", kind, &raw, out);
    pb_bytes_free(&raw);
    return 0;
}

int codec_json_to_body(const char *json_text, const struct resource *r, struct pb_bytes *out,
                       struct error *err)
{
    json_error_t je;
    json_t *obj = json_loads(json_text, 0, &je);
    if (obj == NULL)
        return error_set(err, "the answer is not JSON: %s", je.text);
    int rc = encode_object(obj, r, out, err);
    json_decref(obj);
    return rc;
}

int codec_watch_frame(const char *type, const char *object_json, const struct resource *r,
                      struct pb_bytes *out, struct error *err)
{
    struct pb_bytes inner = {0}, event = {0}, ext = {0};
    int rc = codec_json_to_body(object_json, r, &inner, err);
    if (rc == 0) {
        pb_bytes_field_bytes(&ext, 1, inner.p, inner.len); /* RawExtension.raw */
        pb_bytes_field_bytes(&event, 1, type, strlen(type));
        pb_bytes_field_bytes(&event, 2, ext.p, ext.len);
        uint8_t be[4] = {(uint8_t)(event.len >> 24), (uint8_t)(event.len >> 16),
                         (uint8_t)(event.len >> 8), (uint8_t)event.len};
        pb_bytes_put(out, be, sizeof(be));
        pb_bytes_put(out, event.p, event.len);
    }
    pb_bytes_free(&inner);
    pb_bytes_free(&event);
    pb_bytes_free(&ext);
    return rc;
}
