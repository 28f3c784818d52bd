// SPDX-License-Identifier: Apache-2.0
/* JSON <-> protobuf for Kubernetes types; see pb_json.h. */
#include "pb_json.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grow.h"
#include "pb_json_fields.h"
#include "xalloc.h"

enum wire { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5 };

/* The message types whose JSON is not an object of their fields. */
enum special {
    SP_NONE,
    SP_TIME,         /* RFC 3339, seconds */
    SP_MICROTIME,    /* RFC 3339, microseconds */
    SP_QUANTITY,     /* "10Gi" */
    SP_INTORSTRING,  /* 8 or "50%" */
    SP_RAWEXTENSION, /* any JSON, carried as bytes */
    SP_FIELDSV1,     /* managedFields[].fieldsV1: JSON, carried as bytes */
};

static const struct {
    const char *name;
    enum special kind;
} specials[] = {
    {"k8s.io.apimachinery.pkg.apis.meta.v1.Time", SP_TIME},
    {"k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime", SP_MICROTIME},
    {"k8s.io.apimachinery.pkg.api.resource.Quantity", SP_QUANTITY},
    {"k8s.io.apimachinery.pkg.util.intstr.IntOrString", SP_INTORSTRING},
    {"k8s.io.apimachinery.pkg.runtime.RawExtension", SP_RAWEXTENSION},
    {"k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1", SP_FIELDSV1},
};

static enum special special_of(const ProtobufCMessageDescriptor *d)
{
    for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++)
        if (!strcmp(d->name, specials[i].name))
            return specials[i].kind;
    return SP_NONE;
}

/* ---------- the field table ---------- */

const struct pb_json_field *pb_json_field_find(const char *message, unsigned number)
{
    size_t lo = 0, hi = pb_json_fields_len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct pb_json_field *f = &pb_json_fields[mid];
        int c = strcmp(f->message, message);
        if (c == 0)
            c = f->number < number ? -1 : f->number > number ? 1 : 0;
        if (c == 0)
            return f;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static const char *json_name(const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f,
                             unsigned *flags)
{
    const struct pb_json_field *row = pb_json_field_find(d->name, f->id);
    *flags = row ? row->flags : 0;
    return row && row->json[0] ? row->json : f->name;
}

/* protoc-c turns map<K,V> into repeated <Name>Entry {key = 1; value = 2}. */
static bool is_map_entry(const ProtobufCFieldDescriptor *f)
{
    if (f->type != PROTOBUF_C_TYPE_MESSAGE || f->label != PROTOBUF_C_LABEL_REPEATED)
        return false;
    const ProtobufCMessageDescriptor *e = f->descriptor;
    size_t n = strlen(e->short_name);
    return n > 5 && !strcmp(e->short_name + n - 5, "Entry") && e->n_fields == 2 &&
           e->fields[0].id == 1 && e->fields[1].id == 2 && !strcmp(e->fields[0].name, "key") &&
           !strcmp(e->fields[1].name, "value");
}

/* ---------- bytes ---------- */

void pb_bytes_put(struct pb_bytes *b, const void *data, size_t n)
{
    GROW(b->p, b->cap, b->len + n);
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
}

void pb_bytes_varint(struct pb_bytes *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            tmp[n] |= 0x80;
        n++;
    } while (v);
    pb_bytes_put(b, tmp, n);
}

static void put_tag(struct pb_bytes *b, unsigned number, enum wire w)
{
    pb_bytes_varint(b, ((uint64_t)number << 3) | (uint64_t)w);
}

void pb_bytes_field_bytes(struct pb_bytes *b, unsigned number, const void *data, size_t n)
{
    put_tag(b, number, WIRE_LEN);
    pb_bytes_varint(b, n);
    pb_bytes_put(b, data, n);
}

void pb_bytes_free(struct pb_bytes *b)
{
    free(b->p);
    *b = (struct pb_bytes){0};
}

int pb_read_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (*pos >= len)
            return -1;
        uint8_t c = p[(*pos)++];
        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return -1;
}

/* One field: its number, wire type and, for WIRE_LEN, the payload; the
 * varint or fixed value otherwise. */
struct wire_field {
    unsigned number;
    enum wire type;
    uint64_t value;
    const uint8_t *data;
    size_t len;
};

static int read_field(const uint8_t *p, size_t len, size_t *pos, struct wire_field *wf)
{
    uint64_t tag;
    if (pb_read_varint(p, len, pos, &tag) < 0)
        return -1;
    wf->number = (unsigned)(tag >> 3);
    wf->type = (enum wire)(tag & 7);
    if (wf->number == 0 || tag >> 3 > 536870911u)
        return -1;
    switch (wf->type) {
    case WIRE_VARINT:
        return pb_read_varint(p, len, pos, &wf->value);
    case WIRE_I64:
    case WIRE_I32: {
        size_t n = wf->type == WIRE_I64 ? 8 : 4;
        if (len - *pos < n)
            return -1;
        wf->value = 0;
        for (size_t i = 0; i < n; i++)
            wf->value |= (uint64_t)p[*pos + i] << (8 * i);
        *pos += n;
        return 0;
    }
    case WIRE_LEN: {
        uint64_t n;
        if (pb_read_varint(p, len, pos, &n) < 0 || n > len - *pos)
            return -1;
        wf->data = p + *pos;
        wf->len = (size_t)n;
        *pos += (size_t)n;
        return 0;
    }
    default: /* groups (3, 4) are not in Kubernetes types */
        return -1;
    }
}

int pb_find_bytes(const uint8_t *p, size_t len, unsigned number, const uint8_t **out,
                  size_t *out_len)
{
    size_t pos = 0;
    int found = 1;
    while (pos < len) {
        struct wire_field wf;
        if (read_field(p, len, &pos, &wf) < 0)
            return -1;
        if (wf.number == number && wf.type == WIRE_LEN) {
            *out = wf.data;
            *out_len = wf.len;
            found = 0;
        }
    }
    return found;
}

/* ---------- base64 (bytes fields in JSON, as Go's encoding/json) ---------- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static json_t *base64_json(const uint8_t *p, size_t n)
{
    char *s = xmalloc(4 * ((n + 2) / 3) + 1), *o = s;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        *o++ = b64[v >> 18 & 63];
        *o++ = b64[v >> 12 & 63];
        *o++ = i + 1 < n ? b64[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? b64[v & 63] : '=';
    }
    *o = '\0';
    json_t *j = json_string(s);
    free(s);
    return j;
}

static int base64_decode(const char *s, struct pb_bytes *out)
{
    uint32_t acc = 0;
    int bits = 0;
    for (; *s && *s != '='; s++) {
        const char *c = strchr(b64, *s);
        if (c == NULL || *s == '\0')
            return -1;
        acc = acc << 6 | (uint32_t)(c - b64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            uint8_t byte = (uint8_t)(acc >> bits);
            pb_bytes_put(out, &byte, 1);
        }
    }
    return 0;
}

/* ---------- times ---------- */

static json_t *time_json(int64_t seconds, int32_t nanos, bool micro)
{
    time_t t = (time_t)seconds;
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL)
        return NULL;
    char buf[64];
    size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    if (micro)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, ".%06d", (int)(nanos / 1000));
    snprintf(buf + n, sizeof(buf) - n, "Z");
    return json_string(buf);
}

/* RFC 3339: 2006-01-02T15:04:05[.frac](Z|+07:00).  0 on success. */
static int parse_time(const char *s, int64_t *seconds, int32_t *nanos)
{
    struct tm tm = {0};
    int used = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &used) != 6 ||
        used != 19)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    const char *p = s + used;
    long frac = 0, scale = 1000000000L;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return -1;
        for (; *p >= '0' && *p <= '9'; p++)
            if (scale > 1) {
                scale /= 10;
                frac += (*p - '0') * scale;
            }
    }
    long off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int hh, mm, n = 0;
        if (sscanf(p + 1, "%2d:%2d%n", &hh, &mm, &n) != 2 || n != 5)
            return -1;
        off = (hh * 3600L + mm * 60L) * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return -1;
    }
    if (*p)
        return -1;
    *seconds = (int64_t)timegm(&tm) - off;
    *nanos = (int32_t)frac;
    return 0;
}

/* ---------- decoding ---------- */

struct path {
    char text[512];
    size_t len;
};

/* Appends ".name" (or "name" first) or "[key]"; returns the length to pop to. */
static size_t path_push(struct path *pa, const char *s, bool index)
{
    size_t saved = pa->len;
    size_t room = sizeof(pa->text) - pa->len;
    int n = index ? snprintf(pa->text + pa->len, room, "[%s]", s)
                  : snprintf(pa->text + pa->len, room, "%s%s", pa->len ? "." : "", s);
    if (n > 0)
        pa->len = (size_t)n < room ? pa->len + (size_t)n : sizeof(pa->text) - 1;
    return saved;
}

static void path_pop(struct path *pa, size_t saved)
{
    pa->len = saved;
    pa->text[saved] = '\0';
}

static int fail(struct error *err, const struct path *pa, const char *what)
{
    return error_set(err, "%s%s%s", pa->len ? pa->text : "", pa->len ? ": " : "", what);
}

static json_t *decode_message(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len,
                              int depth, struct path *pa, struct error *err);

static json_t *decode_special(enum special sp, const uint8_t *p, size_t len, struct path *pa,
                              struct error *err)
{
    size_t pos = 0;
    struct wire_field wf;
    int64_t seconds = 0, nanos = 0, type = 0, intval = 0;
    const uint8_t *str = NULL;
    size_t str_len = 0;
    bool have_str = false;
    while (pos < len) {
        if (read_field(p, len, &pos, &wf) < 0) {
            fail(err, pa, "malformed protobuf");
            return NULL;
        }
        switch (sp) {
        case SP_TIME:
        case SP_MICROTIME:
            if (wf.number == 1 && wf.type == WIRE_VARINT)
                seconds = (int64_t)wf.value;
            else if (wf.number == 2 && wf.type == WIRE_VARINT)
                nanos = (int32_t)wf.value;
            break;
        case SP_INTORSTRING:
            if (wf.number == 1 && wf.type == WIRE_VARINT)
                type = (int64_t)wf.value;
            else if (wf.number == 2 && wf.type == WIRE_VARINT)
                intval = (int32_t)wf.value;
            else if (wf.number == 3 && wf.type == WIRE_LEN)
                str = wf.data, str_len = wf.len, have_str = true;
            break;
        default: /* Quantity.string, RawExtension.raw, FieldsV1.Raw: field 1 */
            if (wf.number == 1 && wf.type == WIRE_LEN)
                str = wf.data, str_len = wf.len, have_str = true;
            break;
        }
    }
    json_t *j = NULL;
    switch (sp) {
    case SP_TIME:
    case SP_MICROTIME:
        /* A zero time is an empty message; its JSON is null. */
        j = len == 0 ? json_null() : time_json(seconds, (int32_t)nanos, sp == SP_MICROTIME);
        break;
    case SP_QUANTITY:
    case SP_INTORSTRING:
        if (sp == SP_INTORSTRING && type != 1)
            j = json_integer(intval);
        else if (!have_str || !memchr(str, 0, str_len))
            j = json_stringn((const char *)str, have_str ? str_len : 0);
        break;
    case SP_RAWEXTENSION:
    case SP_FIELDSV1: {
        if (!have_str || str_len == 0)
            return json_null();
        json_error_t je;
        j = json_loadb((const char *)str, str_len, JSON_DECODE_ANY, &je);
        if (j == NULL) {
            char msg[300];
            snprintf(msg, sizeof(msg), "raw bytes are not JSON: %s", je.text);
            fail(err, pa, msg);
            return NULL;
        }
        return j;
    }
    default:
        break;
    }
    if (j == NULL)
        fail(err, pa, "not valid UTF-8, a NUL byte, or not a valid time");
    return j;
}

static json_t *decode_scalar(const ProtobufCFieldDescriptor *f, const struct wire_field *wf,
                             struct path *pa, struct error *err)
{
    bool lenwire = wf->type == WIRE_LEN;
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES:
        if (!lenwire)
            break;
        if (f->type == PROTOBUF_C_TYPE_BYTES)
            return base64_json(wf->data, wf->len);
        /* The stand-in's JSON is NUL-free, like every JSON body it reads. */
        json_t *s =
            memchr(wf->data, 0, wf->len) ? NULL : json_stringn((const char *)wf->data, wf->len);
        if (s == NULL)
            fail(err, pa, "a string that is not valid UTF-8 or holds a NUL byte");
        return s;
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_ENUM:
        if (wf->type == WIRE_VARINT)
            return json_integer((int32_t)wf->value);
        break;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_UINT32:
        if (wf->type == WIRE_VARINT)
            return json_integer(f->type == PROTOBUF_C_TYPE_UINT32 ? (json_int_t)(uint32_t)wf->value
                                                                  : (json_int_t)wf->value);
        break;
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SINT64:
        if (wf->type == WIRE_VARINT)
            return json_integer((json_int_t)((wf->value >> 1) ^ (~(wf->value & 1) + 1)));
        break;
    case PROTOBUF_C_TYPE_BOOL:
        if (wf->type == WIRE_VARINT)
            return json_boolean(wf->value != 0);
        break;
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_SFIXED32:
        if (wf->type == WIRE_I32)
            return json_integer(f->type == PROTOBUF_C_TYPE_FIXED32 ? (json_int_t)(uint32_t)wf->value
                                                                   : (int32_t)wf->value);
        break;
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_SFIXED64:
        if (wf->type == WIRE_I64)
            return json_integer((json_int_t)wf->value);
        break;
    case PROTOBUF_C_TYPE_FLOAT:
        if (wf->type == WIRE_I32) {
            uint32_t u = (uint32_t)wf->value;
            float v;
            memcpy(&v, &u, sizeof(v));
            return json_real(v);
        }
        break;
    case PROTOBUF_C_TYPE_DOUBLE:
        if (wf->type == WIRE_I64) {
            double v;
            memcpy(&v, &wf->value, sizeof(v));
            return json_real(v);
        }
        break;
    default:
        break;
    }
    fail(err, pa, "wrong wire type for the field's type");
    return NULL;
}

static json_t *decode_value(const ProtobufCFieldDescriptor *f, const struct wire_field *wf,
                            int depth, struct path *pa, struct error *err)
{
    if (f->type != PROTOBUF_C_TYPE_MESSAGE)
        return decode_scalar(f, wf, pa, err);
    if (wf->type != WIRE_LEN) {
        fail(err, pa, "a message field that is not length-delimited");
        return NULL;
    }
    return decode_message(f->descriptor, wf->data, wf->len, depth + 1, pa, err);
}

/* A map entry {key, value} into obj[key]. */
static int decode_map_entry(const ProtobufCFieldDescriptor *f, json_t *obj,
                            const struct wire_field *wf, int depth, struct path *pa,
                            struct error *err)
{
    const ProtobufCMessageDescriptor *e = f->descriptor;
    if (wf->type != WIRE_LEN)
        return fail(err, pa, "a map entry that is not length-delimited");
    json_t *key = NULL, *value = NULL;
    size_t pos = 0;
    while (pos < wf->len) {
        struct wire_field in;
        if (read_field(wf->data, wf->len, &pos, &in) < 0) {
            json_decref(key);
            json_decref(value);
            return fail(err, pa, "malformed map entry");
        }
        json_t **slot = in.number == 1 ? &key : in.number == 2 ? &value : NULL;
        if (slot == NULL)
            continue;
        json_decref(*slot);
        *slot = decode_value(&e->fields[in.number - 1], &in, depth, pa, err);
        if (*slot == NULL) {
            json_decref(key);
            json_decref(value);
            return -1;
        }
    }
    const char *k = key ? json_string_value(key) : "";
    if (k == NULL) {
        json_decref(key);
        json_decref(value);
        return fail(err, pa, "a map key that is not a string");
    }
    /* No value on the wire is the value's zero: an empty message, "" or 0. */
    if (value == NULL && e->fields[1].type == PROTOBUF_C_TYPE_MESSAGE)
        value = decode_message(e->fields[1].descriptor, (const uint8_t *)"", 0, depth + 1, pa, err);
    else if (value == NULL)
        value = e->fields[1].type == PROTOBUF_C_TYPE_STRING ? json_string("") : json_integer(0);
    if (value == NULL) {
        json_decref(key);
        return -1;
    }
    json_object_set_new(obj, k, value);
    json_decref(key);
    return 0;
}

static bool zero_scalar(const json_t *v)
{
    return (json_is_string(v) && json_string_length(v) == 0) ||
           (json_is_integer(v) && json_integer_value(v) == 0) || json_is_false(v) ||
           (json_is_real(v) && json_real_value(v) == 0.0);
}

/* Packed repeated scalars (proto3 style), accepted as protobuf does. */
static int decode_packed(const ProtobufCFieldDescriptor *f, json_t *arr,
                         const struct wire_field *wf, struct path *pa, struct error *err)
{
    size_t pos = 0;
    while (pos < wf->len) {
        struct wire_field one = {.number = wf->number};
        switch (f->type) {
        case PROTOBUF_C_TYPE_FIXED32:
        case PROTOBUF_C_TYPE_SFIXED32:
        case PROTOBUF_C_TYPE_FLOAT:
        case PROTOBUF_C_TYPE_FIXED64:
        case PROTOBUF_C_TYPE_SFIXED64:
        case PROTOBUF_C_TYPE_DOUBLE: {
            bool wide = f->type == PROTOBUF_C_TYPE_FIXED64 || f->type == PROTOBUF_C_TYPE_SFIXED64 ||
                        f->type == PROTOBUF_C_TYPE_DOUBLE;
            size_t n = wide ? 8 : 4;
            if (wf->len - pos < n)
                return fail(err, pa, "truncated packed field");
            one.type = wide ? WIRE_I64 : WIRE_I32;
            for (size_t i = 0; i < n; i++)
                one.value |= (uint64_t)wf->data[pos + i] << (8 * i);
            pos += n;
            break;
        }
        default:
            one.type = WIRE_VARINT;
            if (pb_read_varint(wf->data, wf->len, &pos, &one.value) < 0)
                return fail(err, pa, "truncated packed field");
        }
        json_t *v = decode_scalar(f, &one, pa, err);
        if (v == NULL)
            return -1;
        json_array_append_new(arr, v);
    }
    return 0;
}

static int decode_field(const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f,
                        json_t *obj, const struct wire_field *wf, int depth, struct path *pa,
                        struct error *err)
{
    unsigned flags;
    const char *name = json_name(d, f, &flags);
    if (flags & PBJ_SKIP)
        return 0;
    size_t saved = path_push(pa, flags & PBJ_INLINE ? f->name : name, false);
    int rc = 0;
    if (flags & PBJ_INLINE) {
        json_t *inner = decode_value(f, wf, depth, pa, err);
        if (inner == NULL || !json_is_object(inner))
            rc = inner ? fail(err, pa, "an inlined field that is not an object") : -1;
        else
            json_object_update(obj, inner);
        json_decref(inner);
    } else if (is_map_entry(f)) {
        json_t *m = json_object_get(obj, name);
        if (m == NULL) {
            m = json_object();
            json_object_set_new(obj, name, m);
        }
        rc = decode_map_entry(f, m, wf, depth, pa, err);
    } else if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        json_t *arr = json_object_get(obj, name);
        if (arr == NULL) {
            arr = json_array();
            json_object_set_new(obj, name, arr);
        }
        if (wf->type == WIRE_LEN && f->type != PROTOBUF_C_TYPE_STRING &&
            f->type != PROTOBUF_C_TYPE_BYTES && f->type != PROTOBUF_C_TYPE_MESSAGE) {
            rc = decode_packed(f, arr, wf, pa, err);
        } else {
            json_t *v = decode_value(f, wf, depth, pa, err);
            if (v == NULL)
                rc = -1;
            else
                json_array_append_new(arr, v);
        }
    } else {
        json_t *v = decode_value(f, wf, depth, pa, err);
        if (v == NULL)
            rc = -1;
        else if ((flags & PBJ_OMITEMPTY) && !(flags & PBJ_POINTER) &&
                 f->type != PROTOBUF_C_TYPE_MESSAGE && zero_scalar(v)) {
            /* Go's encoding/json leaves out a zero omitempty value. */
            json_object_del(obj, name);
            json_decref(v);
        } else
            json_object_set_new(obj, name, v);
    }
    path_pop(pa, saved);
    return rc;
}

static json_t *decode_message(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len,
                              int depth, struct path *pa, struct error *err)
{
    if (depth > PB_JSON_MAX_DEPTH) {
        fail(err, pa, "messages nested deeper than 64");
        return NULL;
    }
    enum special sp = special_of(d);
    if (sp != SP_NONE)
        return decode_special(sp, p, len, pa, err);
    json_t *obj = json_object();
    size_t pos = 0;
    while (pos < len) {
        struct wire_field wf;
        if (read_field(p, len, &pos, &wf) < 0) {
            fail(err, pa, "malformed protobuf");
            json_decref(obj);
            return NULL;
        }
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, wf.number);
        if (f == NULL) /* unknown to this version: dropped, as the real server does */
            continue;
        if (decode_field(d, f, obj, &wf, depth, pa, err) < 0) {
            json_decref(obj);
            return NULL;
        }
    }
    return obj;
}

json_t *pb_json_decode(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len,
                       struct error *err)
{
    struct path pa = {.len = 0};
    pa.text[0] = '\0';
    return decode_message(d, p, len, 0, &pa, err);
}

/* ---------- encoding ---------- */

static int encode_message(const ProtobufCMessageDescriptor *d, const json_t *obj,
                          struct pb_bytes *out, int depth, struct path *pa, struct error *err);

static int wrong_type(struct error *err, const struct path *pa, const char *want)
{
    char msg[96];
    snprintf(msg, sizeof(msg), "expected %s", want);
    return fail(err, pa, msg);
}

static int encode_special(enum special sp, const json_t *v, struct pb_bytes *out, struct path *pa,
                          struct error *err)
{
    switch (sp) {
    case SP_TIME:
    case SP_MICROTIME: {
        int64_t seconds;
        int32_t nanos;
        if (!json_is_string(v) || parse_time(json_string_value(v), &seconds, &nanos) < 0)
            return wrong_type(err, pa, "an RFC 3339 time");
        if (seconds) {
            put_tag(out, 1, WIRE_VARINT);
            pb_bytes_varint(out, (uint64_t)seconds);
        }
        if (sp == SP_MICROTIME && nanos) {
            put_tag(out, 2, WIRE_VARINT);
            pb_bytes_varint(out, (uint64_t)(int64_t)nanos);
        }
        return 0;
    }
    case SP_QUANTITY: {
        char num[32];
        const char *s = json_string_value(v);
        if (json_is_integer(v)) {
            snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
            s = num;
        }
        if (s == NULL)
            return wrong_type(err, pa, "a quantity");
        pb_bytes_field_bytes(out, 1, s, strlen(s));
        return 0;
    }
    case SP_INTORSTRING: {
        const char *s = json_string_value(v);
        if (s == NULL && !json_is_integer(v))
            return wrong_type(err, pa, "an integer or a string");
        put_tag(out, 1, WIRE_VARINT);
        pb_bytes_varint(out, s ? 1 : 0);
        put_tag(out, 2, WIRE_VARINT);
        pb_bytes_varint(out, s ? 0 : (uint64_t)(int64_t)(int32_t)json_integer_value(v));
        pb_bytes_field_bytes(out, 3, s ? s : "", s ? strlen(s) : 0);
        return 0;
    }
    case SP_RAWEXTENSION:
    case SP_FIELDSV1: {
        char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (text == NULL)
            return fail(err, pa, "cannot serialise the embedded JSON");
        pb_bytes_field_bytes(out, 1, text, strlen(text));
        free(text);
        return 0;
    }
    default:
        return fail(err, pa, "internal: not a special type");
    }
}

static int encode_scalar(const ProtobufCFieldDescriptor *f, unsigned number, const json_t *v,
                         struct pb_bytes *out, struct path *pa, struct error *err)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING: {
        if (!json_is_string(v))
            return wrong_type(err, pa, "a string");
        pb_bytes_field_bytes(out, number, json_string_value(v), json_string_length(v));
        return 0;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        struct pb_bytes raw = {0};
        if (!json_is_string(v) || base64_decode(json_string_value(v), &raw) < 0) {
            pb_bytes_free(&raw);
            return wrong_type(err, pa, "base64 bytes");
        }
        pb_bytes_field_bytes(out, number, raw.p, raw.len);
        pb_bytes_free(&raw);
        return 0;
    }
    case PROTOBUF_C_TYPE_BOOL:
        if (!json_is_boolean(v))
            return wrong_type(err, pa, "a boolean");
        put_tag(out, number, WIRE_VARINT);
        pb_bytes_varint(out, json_is_true(v));
        return 0;
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_ENUM:
        if (!json_is_integer(v))
            return wrong_type(err, pa, "an integer");
        put_tag(out, number, WIRE_VARINT);
        pb_bytes_varint(out, (uint64_t)json_integer_value(v));
        return 0;
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SINT64: {
        if (!json_is_integer(v))
            return wrong_type(err, pa, "an integer");
        int64_t i = json_integer_value(v);
        put_tag(out, number, WIRE_VARINT);
        pb_bytes_varint(out, ((uint64_t)i << 1) ^ (uint64_t)(i >> 63));
        return 0;
    }
    case PROTOBUF_C_TYPE_DOUBLE:
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_SFIXED64: {
        if (!json_is_number(v))
            return wrong_type(err, pa, "a number");
        uint8_t b[8];
        size_t n = 8;
        uint64_t u;
        if (f->type == PROTOBUF_C_TYPE_DOUBLE) {
            double x = json_number_value(v);
            memcpy(&u, &x, 8);
        } else if (f->type == PROTOBUF_C_TYPE_FLOAT) {
            float x = (float)json_number_value(v);
            uint32_t w;
            memcpy(&w, &x, 4);
            u = w;
            n = 4;
        } else {
            u = (uint64_t)json_integer_value(v);
            if (f->type == PROTOBUF_C_TYPE_FIXED32 || f->type == PROTOBUF_C_TYPE_SFIXED32)
                n = 4;
        }
        for (size_t i = 0; i < n; i++)
            b[i] = (uint8_t)(u >> (8 * i));
        put_tag(out, number, n == 8 ? WIRE_I64 : WIRE_I32);
        pb_bytes_put(out, b, n);
        return 0;
    }
    default:
        return fail(err, pa, "internal: unexpected field type");
    }
}

static int encode_value(const ProtobufCFieldDescriptor *f, unsigned number, const json_t *v,
                        struct pb_bytes *out, int depth, struct path *pa, struct error *err)
{
    if (f->type != PROTOBUF_C_TYPE_MESSAGE)
        return encode_scalar(f, number, v, out, pa, err);
    struct pb_bytes sub = {0};
    int rc = encode_message(f->descriptor, v, &sub, depth + 1, pa, err);
    if (rc == 0)
        pb_bytes_field_bytes(out, number, sub.p, sub.len);
    pb_bytes_free(&sub);
    return rc;
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Map entries in key order, as the Go marshaller writes them. */
static int encode_map(const ProtobufCFieldDescriptor *f, const json_t *m, struct pb_bytes *out,
                      int depth, struct path *pa, struct error *err)
{
    if (!json_is_object(m))
        return wrong_type(err, pa, "an object");
    const ProtobufCMessageDescriptor *e = f->descriptor;
    size_t n = json_object_size(m), i = 0;
    const char **keys = xcalloc(n ? n : 1, sizeof(*keys));
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)m, k, v) keys[i++] = k;
    qsort(keys, n, sizeof(*keys), cmp_keys);
    int rc = 0;
    for (i = 0; i < n && rc == 0; i++) {
        size_t saved = path_push(pa, keys[i], true);
        struct pb_bytes entry = {0};
        pb_bytes_field_bytes(&entry, 1, keys[i], strlen(keys[i]));
        v = json_object_get(m, keys[i]);
        if (!json_is_null(v))
            rc = encode_value(&e->fields[1], 2, v, &entry, depth, pa, err);
        if (rc == 0)
            pb_bytes_field_bytes(out, f->id, entry.p, entry.len);
        pb_bytes_free(&entry);
        path_pop(pa, saved);
    }
    free(keys);
    return rc;
}

static int encode_field(const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f,
                        const json_t *obj, struct pb_bytes *out, int depth, struct path *pa,
                        struct error *err)
{
    unsigned flags;
    const char *name = json_name(d, f, &flags);
    if (flags & PBJ_SKIP)
        return 0;
    if (flags & PBJ_INLINE) /* the embedded struct reads the same object */
        return encode_value(f, f->id, obj, out, depth, pa, err);
    const json_t *v = json_object_get(obj, name);
    if (v == NULL || json_is_null(v))
        return 0;
    size_t saved = path_push(pa, name, false);
    int rc = 0;
    if (is_map_entry(f)) {
        rc = encode_map(f, v, out, depth, pa, err);
    } else if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        if (!json_is_array(v)) {
            rc = wrong_type(err, pa, "a list");
        } else {
            size_t i;
            const json_t *el;
            json_array_foreach(v, i, el)
            {
                char idx[24];
                snprintf(idx, sizeof(idx), "%zu", i);
                size_t s2 = path_push(pa, idx, true);
                rc = encode_value(f, f->id, el, out, depth, pa, err);
                path_pop(pa, s2);
                if (rc < 0)
                    break;
            }
        }
    } else {
        rc = encode_value(f, f->id, v, out, depth, pa, err);
    }
    path_pop(pa, saved);
    return rc;
}

static int encode_message(const ProtobufCMessageDescriptor *d, const json_t *obj,
                          struct pb_bytes *out, int depth, struct path *pa, struct error *err)
{
    if (depth > PB_JSON_MAX_DEPTH)
        return fail(err, pa, "objects nested deeper than 64");
    enum special sp = special_of(d);
    if (sp != SP_NONE)
        return encode_special(sp, obj, out, pa, err);
    if (!json_is_object(obj))
        return wrong_type(err, pa, "an object");
    /* protoc-c lists the fields by number: the order the Go marshaller writes. */
    for (unsigned i = 0; i < d->n_fields; i++)
        if (encode_field(d, &d->fields[i], obj, out, depth, pa, err) < 0)
            return -1;
    return 0;
}

int pb_json_encode(const ProtobufCMessageDescriptor *d, const json_t *obj, struct pb_bytes *out,
                   struct error *err)
{
    struct path pa = {.len = 0};
    pa.text[0] = '\0';
    return encode_message(d, obj, out, 0, &pa, err);
}
