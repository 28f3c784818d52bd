// SPDX-License-Identifier: Apache-2.0
/* Merge patch and JSON patch; see patch.h. */
#include "patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *merge_patch(json_t *target, const json_t *patch)
{
    if (!json_is_object(patch)) {
        json_decref(target);
        return json_deep_copy(patch);
    }
    if (!json_is_object(target)) {
        json_decref(target);
        target = json_object();
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)patch, k, v)
    {
        if (json_is_null(v)) {
            json_object_del(target, k);
            continue;
        }
        json_t *cur = json_object_get(target, k);
        json_incref(cur);
        json_object_set_new(target, k, merge_patch(cur, v));
    }
    return target;
}

const char *smp_directive(const json_t *patch)
{
    if (json_is_array(patch)) {
        size_t i;
        json_t *v;
        json_array_foreach(patch, i, v)
        {
            const char *d = smp_directive(v);
            if (d)
                return d;
        }
        return NULL;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)patch, k, v)
    {
        if (k[0] == '$')
            return k;
        const char *d = smp_directive(v);
        if (d)
            return d;
    }
    return NULL;
}

/* ---------- JSON pointer ---------- */

/* Splits a pointer ("/a/b~1c") into its parent container in doc and the last
 * token (unescaped, into last).  Returns the parent or NULL. */
static json_t *resolve_parent(json_t *doc, const char *ptr, char *last, size_t last_size)
{
    json_t *cur = doc;
    const char *p = ptr;
    if (*p != '/')
        return NULL;
    for (;;) {
        p++;
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char tok[512];
        size_t t = 0;
        for (size_t i = 0; i < n && t + 1 < sizeof(tok); i++) {
            if (p[i] == '~' && i + 1 < n && (p[i + 1] == '0' || p[i + 1] == '1')) {
                tok[t++] = p[i + 1] == '0' ? '~' : '/';
                i++;
            } else {
                tok[t++] = p[i];
            }
        }
        tok[t] = '\0';
        if (end == NULL) {
            snprintf(last, last_size, "%s", tok);
            return cur;
        }
        if (json_is_object(cur)) {
            cur = json_object_get(cur, tok);
        } else if (json_is_array(cur)) {
            char *e;
            long idx = strtol(tok, &e, 10);
            if (*e || e == tok || idx < 0)
                return NULL;
            cur = json_array_get(cur, (size_t)idx);
        } else {
            return NULL;
        }
        if (cur == NULL)
            return NULL;
        p = end;
    }
}

/* Array index of token for an array of size n; "-" means n when allowed. */
static int array_index(const char *tok, size_t n, int allow_end, size_t *out)
{
    if (allow_end && !strcmp(tok, "-")) {
        *out = n;
        return 0;
    }
    char *e;
    long idx = strtol(tok, &e, 10);
    if (*e || e == tok || idx < 0 || (size_t)idx > n || ((size_t)idx == n && !allow_end))
        return -1;
    *out = (size_t)idx;
    return 0;
}

static json_t *ptr_get(json_t *doc, const char *ptr)
{
    if (ptr[0] == '\0')
        return doc;
    char last[512];
    json_t *parent = resolve_parent(doc, ptr, last, sizeof(last));
    if (json_is_object(parent))
        return json_object_get(parent, last);
    size_t i;
    if (json_is_array(parent) && array_index(last, json_array_size(parent), 0, &i) == 0)
        return json_array_get(parent, i);
    return NULL;
}

/* value is stolen. */
static int ptr_add(json_t **doc, const char *ptr, json_t *value, int replace)
{
    if (ptr[0] == '\0') {
        json_decref(*doc);
        *doc = value;
        return 0;
    }
    char last[512];
    json_t *parent = resolve_parent(*doc, ptr, last, sizeof(last));
    if (json_is_object(parent)) {
        if (!replace || json_object_get(parent, last) != NULL)
            return json_object_set_new(parent, last, value);
    }
    size_t i;
    if (json_is_array(parent) && array_index(last, json_array_size(parent), !replace, &i) == 0)
        return replace ? json_array_set_new(parent, i, value)
                       : json_array_insert_new(parent, i, value);
    json_decref(value);
    return -1;
}

static int ptr_remove(json_t *doc, const char *ptr)
{
    char last[512];
    json_t *parent = ptr[0] ? resolve_parent(doc, ptr, last, sizeof(last)) : NULL;
    if (json_is_object(parent))
        return json_object_del(parent, last);
    size_t i;
    if (json_is_array(parent) && array_index(last, json_array_size(parent), 0, &i) == 0)
        return json_array_remove(parent, i);
    return -1;
}

int json_patch_apply(json_t **doc, const json_t *ops, char *msg, size_t msg_size)
{
    if (!json_is_array(ops)) {
        snprintf(msg, msg_size, "a JSON patch must be a list of operations");
        return -1;
    }
    size_t i;
    json_t *o;
    json_array_foreach(ops, i, o)
    {
        const char *op = json_string_value(json_object_get(o, "op"));
        const char *path = json_string_value(json_object_get(o, "path"));
        const char *from = json_string_value(json_object_get(o, "from"));
        json_t *value = json_object_get(o, "value");
        if (op == NULL || path == NULL) {
            snprintf(msg, msg_size, "operation %zu: \"op\" and \"path\" are required", i);
            return -1;
        }
        int rc = -1;
        if (!strcmp(op, "add") || !strcmp(op, "replace")) {
            if (value == NULL) {
                snprintf(msg, msg_size, "operation %zu (%s %s): \"value\" is required", i, op,
                         path);
                return -1;
            }
            rc = ptr_add(doc, path, json_deep_copy(value), op[0] == 'r');
        } else if (!strcmp(op, "remove")) {
            rc = ptr_remove(*doc, path);
        } else if (!strcmp(op, "test")) {
            json_t *cur = ptr_get(*doc, path);
            if (value == NULL || cur == NULL || !json_equal(cur, value)) {
                snprintf(msg, msg_size, "operation %zu (test %s): the value differs", i, path);
                return -1;
            }
            rc = 0;
        } else if (!strcmp(op, "move") || !strcmp(op, "copy")) {
            json_t *src = from ? ptr_get(*doc, from) : NULL;
            if (src == NULL) {
                snprintf(msg, msg_size, "operation %zu (%s %s): \"from\" %s not found", i, op, path,
                         from ? from : "(missing)");
                return -1;
            }
            json_t *copy = json_deep_copy(src);
            if (op[0] == 'm' && ptr_remove(*doc, from) < 0) {
                json_decref(copy);
                rc = -1;
            } else {
                rc = ptr_add(doc, path, copy, 0);
            }
        } else {
            snprintf(msg, msg_size, "operation %zu: unknown op \"%s\"", i, op);
            return -1;
        }
        if (rc < 0) {
            snprintf(msg, msg_size, "operation %zu (%s %s): path not found", i, op, path);
            return -1;
        }
    }
    return 0;
}
