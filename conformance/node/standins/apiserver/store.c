// SPDX-License-Identifier: Apache-2.0
/* The object store and its event history; see store.h. */
#include "store.h"
#include "cleanup.h"
#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int store_init(struct store *s, size_t history)
{
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->changed, NULL);
    for (int i = 0; i < RESOURCE_COUNT; i++)
        if ((s->objects[i] = json_object()) == NULL)
            return -1;
    s->ring_cap = history ? history : 1;
    s->ring = xcalloc(s->ring_cap, sizeof(*s->ring));
    return 0;
}

static void event_free(struct store_event *e)
{
    free(e->object_json);
    free(e->ns);
    for (int i = 0; i < FIELD_COUNT; i++) {
        free(e->now[i]);
        free(e->was[i]);
    }
    memset(e, 0, sizeof(*e));
}

void store_destroy(struct store *s)
{
    for (size_t i = 0; i < s->ring_len; i++)
        event_free(&s->ring[(s->ring_head + i) % s->ring_cap]);
    free(s->ring);
    for (int i = 0; i < RESOURCE_COUNT; i++)
        json_decref(s->objects[i]);
    pthread_cond_destroy(&s->changed);
    pthread_mutex_destroy(&s->lock);
}

void store_lock(struct store *s)
{
    pthread_mutex_lock(&s->lock);
}

void store_unlock(struct store *s)
{
    pthread_mutex_unlock(&s->lock);
}

void store_close(struct store *s)
{
    store_lock(s);
    s->closing = true;
    pthread_cond_broadcast(&s->changed);
    store_unlock(s);
}

static void make_key(char *key, size_t size, const char *ns, const char *name)
{
    snprintf(key, size, "%s/%s", ns ? ns : "", name);
}

static const char *meta_str(const json_t *obj, const char *field)
{
    const char *v = json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
    return v ? v : "";
}

json_t *store_get(struct store *s, const struct resource *r, const char *ns, const char *name)
{
    char key[600];
    make_key(key, sizeof(key), ns, name);
    return json_object_get(s->objects[r->id], key);
}

uint64_t store_next_rv(struct store *s)
{
    return ++s->rv;
}

static void record(struct store *s, const struct resource *r, const char *type, const json_t *obj,
                   const json_t *old)
{
    if (s->ring_len == s->ring_cap) {
        struct store_event *oldest = &s->ring[s->ring_head];
        s->expired_rv = oldest->rv;
        event_free(oldest);
        s->ring_head = (s->ring_head + 1) % s->ring_cap;
        s->ring_len--;
    }
    struct store_event *e = &s->ring[(s->ring_head + s->ring_len) % s->ring_cap];
    e->rv = strtoull(meta_str(obj, "resourceVersion"), NULL, 10);
    e->res = r;
    e->type = type;
    e->object_json = json_dumps(obj, JSON_COMPACT);
    e->ns = xstrdup(meta_str(obj, "namespace"));
    for (int i = 0; i < FIELD_COUNT; i++) {
        e->now[i] = xstrdup(field_value(obj, (enum field_label)i));
        e->was[i] = old ? xstrdup(field_value(old, (enum field_label)i)) : NULL;
    }
    s->ring_len++;
    pthread_cond_broadcast(&s->changed);
}

void store_put(struct store *s, const struct resource *r, json_t *obj, const json_t *old)
{
    char key[600];
    make_key(key, sizeof(key), meta_str(obj, "namespace"), meta_str(obj, "name"));
    record(s, r, old ? "MODIFIED" : "ADDED", obj, old);
    json_object_set_new(s->objects[r->id], key, obj);
}

void store_delete(struct store *s, const struct resource *r, json_t *final)
{
    char key[600];
    make_key(key, sizeof(key), meta_str(final, "namespace"), meta_str(final, "name"));
    record(s, r, "DELETED", final, NULL);
    json_object_del(s->objects[r->id], key);
    json_decref(final);
}

static int by_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *store_list(struct store *s, const struct resource *r, const char *ns)
{
    json_t *map = s->objects[r->id];
    size_t n = json_object_size(map), k = 0;
    cleanup_free const char **keys = xcalloc(n, sizeof(*keys));
    json_t *out = json_array();
    const char *key;
    json_t *v;
    json_object_foreach(map, key, v)
    {
        keys[k++] = key;
    }
    qsort(keys, k, sizeof(*keys), by_key);
    for (size_t i = 0; i < k; i++) {
        json_t *obj = json_object_get(map, keys[i]);
        if (ns && strcmp(meta_str(obj, "namespace"), ns))
            continue;
        json_array_append(out, obj);
    }
    return out;
}

size_t store_first_after(const struct store *s, uint64_t after)
{
    size_t lo = 0, hi = s->ring_len;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->ring[(s->ring_head + mid) % s->ring_cap].rv <= after)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const struct store_event *store_event_at(const struct store *s, size_t i)
{
    return &s->ring[(s->ring_head + i) % s->ring_cap];
}
