// SPDX-License-Identifier: Apache-2.0
#include "device_attributes.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"

int device_attributes_semver(const char *text, char *buf, size_t size, struct error *err)
{
    const char *parts[3] = {"0", "0", "0"};
    size_t lens[3] = {1, 1, 1};
    int n = 0;
    const char *p = text;
    for (;;) {
        size_t len = strspn(p, "0123456789");
        if (len == 0 || len > 18 || n == 3)
            return error_set(err, "\"%s\" is not a version (want 1 to 3 dot-separated numbers)",
                             text);
        /* Drop leading zeros but keep one digit: semver forbids "05". */
        const char *start = p;
        size_t digits = len;
        while (digits > 1 && *start == '0') {
            start++;
            digits--;
        }
        parts[n] = start;
        lens[n] = digits;
        n++;
        p += len;
        if (*p == '\0')
            break;
        if (*p != '.')
            return error_set(err, "\"%s\" is not a version (want 1 to 3 dot-separated numbers)",
                             text);
        p++;
    }
    int w = snprintf(buf, size, "%.*s.%.*s.%.*s", (int)lens[0], parts[0], (int)lens[1], parts[1],
                     (int)lens[2], parts[2]);
    if (w < 0 || (size_t)w >= size || w > DEVICE_ATTRIBUTE_VALUE_MAX)
        return error_set(err, "version \"%s\" is longer than %d characters", text,
                         DEVICE_ATTRIBUTE_VALUE_MAX);
    return 0;
}

int device_attribute_add(json_t *attrs, const char *name, const char *type, json_t *value,
                         struct error *err)
{
    json_t *wrapped = json_object();
    if (wrapped == NULL || value == NULL || json_object_set_new(wrapped, type, value) < 0) {
        json_decref(wrapped);
        return error_set(err, "attribute %s: out of memory", name);
    }
    if (json_object_set_new(attrs, name, wrapped) < 0)
        return error_set(err, "attribute %s: out of memory", name);
    return 0;
}

int device_attribute_add_string(json_t *attrs, const char *name, const char *value,
                                struct error *err)
{
    if (strlen(value) > DEVICE_ATTRIBUTE_VALUE_MAX)
        return error_set(err, "attribute %s: \"%s\" is longer than %d characters", name, value,
                         DEVICE_ATTRIBUTE_VALUE_MAX);
    return device_attribute_add(attrs, name, "string", json_string(value), err);
}

int device_attribute_add_version(json_t *attrs, const char *name, const char *text,
                                 struct error *err)
{
    char v[DEVICE_ATTRIBUTE_VALUE_MAX + 1];
    if (device_attributes_semver(text, v, sizeof(v), err) < 0)
        return error_prefix(err, "attribute %s", name);
    return device_attribute_add(attrs, name, "version", json_string(v), err);
}

/* The published attributes: the SLICE column of the table in fakehw_tree.h,
 * in its order.  STRING and VERSION read a char array of struct
 * fakehw_device, INT a long. */
enum slice_type { SLICE_TYPE_STRING, SLICE_TYPE_INT, SLICE_TYPE_VERSION };
enum slice_rule { SLICE_RULE_ALWAYS, SLICE_RULE_NONEMPTY, SLICE_RULE_NONNEG };

struct published {
    bool published;
    enum slice_type type;
    enum slice_rule rule;
    const char *names[2]; /* the name, then an alias or NULL */
    size_t offset;        /* of the value in struct fakehw_device */
};

#define SLICE_UNPUBLISHED .published = false
#define SLICE_PUBLISHED(t, r, ...)                                                                 \
    .published = true, .type = SLICE_TYPE_##t, .rule = SLICE_RULE_##r, .names = {__VA_ARGS__}
#define PUBLISHED_ROW(id, file, kind, field, since, slice)                                         \
    {.offset = offsetof(struct fakehw_device, field), SLICE_##slice},
static const struct published published[] = {FAKEHW_DEVICE_ATTRIBUTES(PUBLISHED_ROW)};
#undef PUBLISHED_ROW

/* Adds attribute p of d under each of its names, unless its rule leaves it
 * out. */
static int add_published(json_t *attrs, const struct published *p, const struct fakehw_device *d,
                         struct error *err)
{
    const char *at = (const char *)d + p->offset;
    long number = p->type == SLICE_TYPE_INT ? *(const long *)(const void *)at : 0;
    if ((p->rule == SLICE_RULE_NONEMPTY && at[0] == '\0') ||
        (p->rule == SLICE_RULE_NONNEG && number < 0))
        return 0;
    for (size_t i = 0; i < 2 && p->names[i] != NULL; i++) {
        const char *name = p->names[i];
        int rc = p->type == SLICE_TYPE_INT
                     ? device_attribute_add(attrs, name, "int", json_integer(number), err)
                 : p->type == SLICE_TYPE_VERSION
                     ? device_attribute_add_version(attrs, name, at, err)
                     : device_attribute_add_string(attrs, name, at, err);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int add_all(json_t *a, const struct fakehw_device *d, struct error *err)
{
    /* type is no file of the tree: a device with a parent is a partition. */
    if (device_attribute_add_string(a, "type", d->parent[0] ? "mig" : "gpu", err) < 0)
        return -1;
    for (size_t i = 0; i < sizeof(published) / sizeof(published[0]); i++)
        if (published[i].published && add_published(a, &published[i], d, err) < 0)
            return -1;
    return 0;
}

json_t *device_attributes_build(const struct fakehw_device *d, device_attributes_fill_fn *fill,
                                struct error *err)
{
    json_auto_t *a = json_object();
    if (a == NULL) {
        error_set(err, "device %s: out of memory", d->name);
        return NULL;
    }
    if (fill(a, d, err) < 0) {
        error_prefix(err, "device %s", d->name);
        return NULL;
    }
    return steal_pointer(&a);
}

json_t *device_attributes_json(const struct fakehw_device *d, struct error *err)
{
    return device_attributes_build(d, add_all, err);
}
