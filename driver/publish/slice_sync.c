/* The pool sync decision: see slice_sync.h. */
#include "slice_sync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slice_builder.h"

static const char *str_at(const json_t *obj, const char *a, const char *b)
{
    const json_t *v = json_object_get(obj, a);
    if (b != NULL)
        v = json_object_get(v, b);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static bool is_empty(const json_t *v)
{
    return json_is_null(v) || (json_is_array(v) && json_array_size(v) == 0) ||
           (json_is_object(v) && json_object_size(v) == 0);
}

/* A copy of v for comparison: no nulls, no empty lists or maps (the server
 * omits them), no taint timeAdded (the server fills it in), and no taints at
 * all with drop_taints.  in_taints: v is an element of a "taints" list. */
static json_t *normalized(const json_t *v, bool drop_taints, bool in_taints)
{
    if (json_is_array(v)) {
        json_t *out = json_array();
        size_t i;
        const json_t *e;
        json_array_foreach(v, i, e)
        {
            json_t *n = normalized(e, drop_taints, in_taints);
            if (n == NULL || json_array_append_new(out, n) < 0) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    if (!json_is_object(v))
        return json_deep_copy(v);
    json_t *out = json_object();
    const char *key;
    const json_t *e;
    json_object_foreach((json_t *)v, key, e)
    {
        if (in_taints && strcmp(key, "timeAdded") == 0)
            continue;
        bool taints = strcmp(key, "taints") == 0;
        if (taints && drop_taints)
            continue;
        json_t *n = normalized(e, drop_taints, taints);
        if (n == NULL) {
            json_decref(out);
            return NULL;
        }
        if (is_empty(n)) {
            json_decref(n);
            continue;
        }
        if (json_object_set_new(out, key, n) < 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

static bool equal_normalized(const json_t *a, const json_t *b, bool drop_taints)
{
    json_t *na = normalized(a, drop_taints, false);
    json_t *nb = normalized(b, drop_taints, false);
    bool eq = na != NULL && nb != NULL && json_equal(na, nb);
    json_decref(na);
    json_decref(nb);
    return eq;
}

bool slice_spec_equal(const json_t *a, const json_t *b, bool ignore_taints)
{
    return equal_normalized(a, b, ignore_taints);
}

bool slice_devices_equal(const json_t *a, const json_t *b, bool ignore_taints)
{
    json_t *wa = json_pack("{s:O?}", "devices", a);
    json_t *wb = json_pack("{s:O?}", "devices", b);
    bool eq = wa != NULL && wb != NULL && equal_normalized(wa, wb, ignore_taints);
    json_decref(wa);
    json_decref(wb);
    return eq;
}

static const json_t *find_device(const json_t *devices, const char *name)
{
    size_t i;
    const json_t *d;
    json_array_foreach(devices, i, d)
    {
        const char *n = str_at(d, "name", NULL);
        if (n && strcmp(n, name) == 0)
            return d;
    }
    return NULL;
}

bool slice_taints_dropped(const json_t *desired_slice, const json_t *returned_slice)
{
    const json_t *want = json_object_get(json_object_get(desired_slice, "spec"), "devices");
    const json_t *got = json_object_get(json_object_get(returned_slice, "spec"), "devices");
    size_t i;
    const json_t *d;
    json_array_foreach(want, i, d)
    {
        size_t n_want = json_array_size(json_object_get(d, "taints"));
        if (n_want == 0)
            continue;
        const json_t *r = find_device(got, str_at(d, "name", NULL));
        if (r != NULL && json_array_size(json_object_get(r, "taints")) < n_want)
            return true;
    }
    return false;
}

static int64_t generation_of(const json_t *slice)
{
    const json_t *g =
        json_object_get(json_object_get(json_object_get(slice, "spec"), "pool"), "generation");
    return json_is_integer(g) ? (int64_t)json_integer_value(g) : 0;
}

/* The desired-slice index slice's name stands for, or -1. */
static long match_index(const json_t *slice, size_t n_desired, const char *driver, const char *node)
{
    const char *name = str_at(slice, "metadata", "name");
    if (name == NULL)
        return -1;
    int digits = slice_index_digits(n_desired);
    if ((int)strlen(name) <= digits || name[digits] != '-')
        return -1;
    char *end;
    char hex[32];
    snprintf(hex, sizeof(hex), "%.*s", digits, name);
    unsigned long idx = strtoul(hex, &end, 16);
    if (*end != '\0' || hex[0] == '-' || hex[0] == '+' || idx >= n_desired)
        return -1;
    char prefix[SLICE_GENERATE_NAME_BUF];
    slice_generate_name(idx, n_desired, driver, node, prefix, sizeof(prefix));
    size_t plen = strlen(prefix);
    if (strncmp(name, prefix, plen) != 0 || strlen(name) == plen)
        return -1;
    return (long)idx;
}

static bool owner_ok(const json_t *slice, const char *node, const char *uid)
{
    const json_t *refs = json_object_get(json_object_get(slice, "metadata"), "ownerReferences");
    size_t i;
    const json_t *r;
    json_array_foreach(refs, i, r)
    {
        const char *api = str_at(r, "apiVersion", NULL), *kind = str_at(r, "kind", NULL);
        const char *name = str_at(r, "name", NULL), *ruid = str_at(r, "uid", NULL);
        if (api && kind && name && ruid && strcmp(api, "v1") == 0 && strcmp(kind, "Node") == 0 &&
            strcmp(name, node) == 0 && strcmp(ruid, uid) == 0 &&
            json_is_true(json_object_get(r, "controller")))
            return true;
    }
    return false;
}

static bool equivalent(const json_t *existing_spec, const json_t *want, const json_t *pairs,
                       bool drop_taints)
{
    if (equal_normalized(existing_spec, want, drop_taints))
        return true;
    size_t i;
    const json_t *p;
    json_array_foreach(pairs, i, p)
    {
        if (equal_normalized(json_object_get(p, "sent"), want, drop_taints) &&
            equal_normalized(json_object_get(p, "stored"), existing_spec, drop_taints))
            return true;
    }
    return false;
}

/* Desired slice i's spec with the plan's generation. */
static json_t *desired_spec(const json_t *desired_slice, int64_t generation)
{
    json_t *spec = json_deep_copy(json_object_get(desired_slice, "spec"));
    json_t *pool = json_object_get(spec, "pool");
    if (spec == NULL || !json_is_object(pool) ||
        json_object_set_new(pool, "generation", json_integer((json_int_t)generation)) < 0) {
        json_decref(spec);
        return NULL;
    }
    return spec;
}

static bool same_taint(const json_t *a, const json_t *b)
{
    static const char *const keys[] = {"key", "value", "effect"};
    for (size_t i = 0; i < 3; i++) {
        const char *x = str_at(a, keys[i], NULL), *y = str_at(b, keys[i], NULL);
        if (strcmp(x ? x : "", y ? y : "") != 0)
            return false;
    }
    return true;
}

/* Copies timeAdded of taints still present from the existing devices. */
static void keep_time_added(json_t *spec, const json_t *existing_spec)
{
    const json_t *old_devs = json_object_get(existing_spec, "devices");
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(spec, "devices"), i, d)
    {
        const json_t *old = find_device(old_devs, str_at(d, "name", NULL));
        if (old == NULL)
            continue;
        size_t j;
        json_t *t;
        json_array_foreach(json_object_get(d, "taints"), j, t)
        {
            size_t k;
            const json_t *ot;
            json_array_foreach(json_object_get(old, "taints"), k, ot)
            {
                json_t *when = json_object_get(ot, "timeAdded");
                if (json_is_string(when) && same_taint(t, ot) &&
                    json_object_get(t, "timeAdded") == NULL) {
                    json_object_set(t, "timeAdded", when);
                    break;
                }
            }
        }
    }
}

/* existing with spec and owner reference replaced; name, uid and
 * resourceVersion kept. */
static json_t *updated_object(const json_t *existing, const json_t *desired_slice,
                              int64_t generation)
{
    json_t *obj = json_deep_copy(existing);
    json_t *spec = desired_spec(desired_slice, generation);
    json_t *meta = json_object_get(obj, "metadata");
    json_t *our_refs =
        json_object_get(json_object_get(desired_slice, "metadata"), "ownerReferences");
    json_t *refs = json_array();
    if (obj == NULL || spec == NULL || !json_is_object(meta) || refs == NULL)
        goto fail;
    keep_time_added(spec, json_object_get(existing, "spec"));
    /* Keep owners that are not a Node; ours replaces any Node owner. */
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(meta, "ownerReferences"), i, r)
    {
        const char *kind = str_at(r, "kind", NULL);
        if ((kind == NULL || strcmp(kind, "Node") != 0) && json_array_append(refs, r) < 0)
            goto fail;
    }
    if (json_array_extend(refs, our_refs) < 0)
        goto fail;
    int rc = json_object_set_new(meta, "ownerReferences", refs); /* steals refs */
    refs = NULL;
    if (rc < 0)
        goto fail;
    rc = json_object_set_new(obj, "spec", spec); /* steals spec */
    spec = NULL;
    if (rc < 0)
        goto fail;
    return obj;
fail:
    json_decref(refs);
    json_decref(spec);
    json_decref(obj);
    return NULL;
}

void slice_sync_plan_free(struct slice_sync_plan *plan)
{
    json_decref(plan->updates);
    json_decref(plan->update_index);
    json_decref(plan->creates);
    json_decref(plan->create_index);
    json_decref(plan->deletes);
    memset(plan, 0, sizeof(*plan));
}

bool slice_sync_plan_empty(const struct slice_sync_plan *plan)
{
    return json_array_size(plan->updates) == 0 && json_array_size(plan->creates) == 0 &&
           json_array_size(plan->deletes) == 0;
}

int slice_sync_plan(const struct slice_sync_input *in, struct slice_sync_plan *plan,
                    struct error *err)
{
    memset(plan, 0, sizeof(*plan));
    size_t n_desired = json_array_size(in->desired);
    if (n_desired == 0)
        return error_set(err, "pool %s: no desired slice", in->node);
    const json_t **matched = calloc(n_desired, sizeof(*matched));
    json_t *pool_slices = json_array(); /* ours: driver, node and pool match */
    plan->updates = json_array();
    plan->update_index = json_array();
    plan->creates = json_array();
    plan->create_index = json_array();
    plan->deletes = json_array();
    if (!matched || !pool_slices || !plan->updates || !plan->update_index || !plan->creates ||
        !plan->create_index || !plan->deletes)
        goto oom;

    size_t i;
    const json_t *s;
    json_array_foreach(in->existing, i, s)
    {
        const char *drv = str_at(s, "spec", "driver"), *node = str_at(s, "spec", "nodeName");
        if (!drv || !node || strcmp(drv, in->driver) != 0 || strcmp(node, in->node) != 0)
            continue; /* not ours to touch */
        const char *pool = str_at(json_object_get(s, "spec"), "pool", "name");
        int rc = pool && strcmp(pool, in->node) == 0
                     ? json_array_append(pool_slices, (json_t *)s)
                     : json_array_append(plan->deletes, (json_t *)s);
        if (rc < 0)
            goto oom;
    }

    int64_t g = 0;
    json_array_foreach(pool_slices, i, s)
    {
        if (generation_of(s) > g)
            g = generation_of(s);
    }
    size_t obsolete_at_g = 0;
    json_array_foreach(pool_slices, i, s)
    {
        long idx = generation_of(s) < g ? -1 : match_index(s, n_desired, in->driver, in->node);
        if (idx >= 0 && matched[idx] == NULL) {
            matched[idx] = s;
            continue;
        }
        obsolete_at_g += generation_of(s) == g;
        if (json_array_append(plan->deletes, (json_t *)s) < 0)
            goto oom;
    }

    size_t n_new = 0, n_changed = 0;
    bool *changed = calloc(n_desired, sizeof(*changed));
    if (changed == NULL)
        goto oom;
    for (size_t k = 0; k < n_desired; k++) {
        if (matched[k] == NULL) {
            n_new++;
            continue;
        }
        json_t *want = desired_spec(json_array_get(in->desired, k), g);
        if (want == NULL) {
            free(changed);
            goto oom;
        }
        changed[k] = !equivalent(json_object_get(matched[k], "spec"), want, in->equivalents,
                                 in->ignore_taints) ||
                     !owner_ok(matched[k], in->node, in->node_uid);
        json_decref(want);
        n_changed += changed[k];
    }
    bool bump = !(n_new == 0 && n_changed <= 1 && obsolete_at_g == 0);
    plan->generation = bump ? g + 1 : g;

    for (size_t k = 0; k < n_desired; k++) {
        const json_t *want = json_array_get(in->desired, k);
        json_t *obj;
        json_t *list, *index;
        if (matched[k] == NULL) {
            obj = json_deep_copy(want);
            if (obj && slice_set_generation(obj, plan->generation) < 0) {
                json_decref(obj);
                obj = NULL;
            }
            list = plan->creates;
            index = plan->create_index;
        } else if (changed[k] || bump) {
            obj = updated_object(matched[k], want, plan->generation);
            list = plan->updates;
            index = plan->update_index;
        } else {
            plan->unchanged++;
            continue;
        }
        if (obj == NULL || json_array_append_new(list, obj) < 0 ||
            json_array_append_new(index, json_integer((json_int_t)k)) < 0) {
            free(changed);
            goto oom;
        }
    }
    free(changed);
    free(matched);
    json_decref(pool_slices);
    return 0;
oom:
    free(matched);
    json_decref(pool_slices);
    slice_sync_plan_free(plan);
    return error_set(err, "pool %s: out of memory planning the sync", in->node);
}
