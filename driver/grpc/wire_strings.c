// SPDX-License-Identifier: Apache-2.0
#include "wire_strings.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "utf8.h"

#define MAX_DEPTH   16 /* our request messages nest 2 deep */
#define MAX_COUNTED 8  /* repeated fields whose index is named (by field order) */

static bool read_varint(const uint8_t *buf, size_t len, size_t *i, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; shift < 64 && *i < len; shift += 7) {
        uint8_t b = buf[(*i)++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

static int nul_error(const char *path, const uint8_t *s, size_t len, size_t at, struct error *err)
{
    /* The text before the NUL names the claim; shown only if printable. */
    char before[65];
    size_t n = at < 64 ? at : 64;
    memcpy(before, s, n);
    before[n] = '\0';
    if (!utf8_valid(before, n))
        before[0] = '\0';
    return error_set(err,
                     "%s \"%s\" has a NUL byte at byte %zu of %zu; strings must not contain NUL",
                     path, before, at, len);
}

static int check(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
                 const char *prefix, int depth, struct error *err)
{
    if (depth > MAX_DEPTH)
        return error_set(err, "%s: messages nested more than %d deep", prefix, MAX_DEPTH);
    unsigned counts[MAX_COUNTED] = {0};
    size_t i = 0;
    while (i < len) {
        uint64_t key, n;
        if (!read_varint(buf, len, &i, &key))
            return error_set(err, "%sbad field key at byte %zu", prefix, i);
        unsigned wt = key & 7;
        if (wt == 0) {
            if (!read_varint(buf, len, &i, &n))
                return error_set(err, "%sbad varint at byte %zu", prefix, i);
            continue;
        }
        if (wt == 1 || wt == 5) {
            size_t w = wt == 1 ? 8 : 4;
            if (len - i < w)
                return error_set(err, "%struncated field at byte %zu", prefix, i);
            i += w;
            continue;
        }
        if (wt != 2)
            return error_set(err, "%sunsupported wire type %u at byte %zu", prefix, wt, i);
        if (!read_varint(buf, len, &i, &n) || n > len - i)
            return error_set(err, "%struncated field at byte %zu", prefix, i);
        const uint8_t *val = buf + i;
        i += (size_t)n;
        const ProtobufCFieldDescriptor *f =
            protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3));
        if (f == NULL)
            continue; /* unknown field: protobuf-c keeps it aside, nobody reads it */
        char path[256];
        size_t fi = (size_t)(f - d->fields);
        if (f->label == PROTOBUF_C_LABEL_REPEATED && fi < MAX_COUNTED)
            snprintf(path, sizeof(path), "%s%s[%u]", prefix, f->name, counts[fi]++);
        else
            snprintf(path, sizeof(path), "%s%s", prefix, f->name);
        if (f->type == PROTOBUF_C_TYPE_STRING) {
            const uint8_t *nul = memchr(val, 0, (size_t)n);
            if (nul != NULL)
                return nul_error(path, val, (size_t)n, (size_t)(nul - val), err);
        } else if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            char sub[260];
            snprintf(sub, sizeof(sub), "%s.", path);
            if (check(f->descriptor, val, (size_t)n, sub, depth + 1, err) < 0)
                return -1;
        }
    }
    return 0;
}

int wire_strings_check(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
                       struct error *err)
{
    return check(d, buf, len, "", 0, err);
}
