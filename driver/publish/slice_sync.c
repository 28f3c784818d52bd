// SPDX-License-Identifier: Apache-2.0
/* The pool sync decision: see slice_sync.h. */
#include "slice_sync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "slice_builder.h"

const char *slice_json_string(const json_t *obj, const char *a, const char *b)
{
    const json_t *v = json_object_get(obj, a);
    if (b != NULL)
        v = json_object_get(v, b);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* --- comparing, normalised on the fly ---
 *
 * Two values are compared as if normalised first: no nulls, no empty lists
 * or maps in a map (the server omits them), no taint timeAdded (the server
 * fills it in), and no taints at all with drop_taints.  in_taints: the value
 * is (an element of) a "taints" list.  Nothing is copied: a 4,096-device pool
 * compared this way costs no memory. */

static bool skipped(const char *key, bool drop_taints, bool in_taints)
{
    return (in_taints && strcmp(key, "timeAdded") == 0) ||
           (drop_taints && strcmp(key, "taints") == 0);
}

static bool norm_equal(const json_t *a, const json_t *b, bool drop_taints, bool in_taints);

/* True when v normalises to nothing, so a map leaves it out. */
static bool norm_empty(const json_t *v, bool drop_taints, bool in_taints)
{
    if (v == NULL || json_is_null(v))
        return true;
    if (json_is_array(v))
        return json_array_size(v) == 0;
    if (!json_is_object(v))
        return false;
    const char *key;
    const json_t *e;
    json_object_foreach((json_t *)v, key, e)
    {
        if (!skipped(key, drop_taints, in_taints) &&
            !norm_empty(e, drop_taints, strcmp(key, "taints") == 0))
            return false;
    }
    return true;
}

/* The members of a that normalisation keeps are in b, normalised equal. */
static bool norm_members_in(const json_t *a, const json_t *b, bool drop_taints, bool in_taints,
                            bool compare)
{
    const char *key;
    const json_t *ea;
    json_object_foreach((json_t *)a, key, ea)
    {
        bool taints = strcmp(key, "taints") == 0;
        if (skipped(key, drop_taints, in_taints) || norm_empty(ea, drop_taints, taints))
            continue;
        const json_t *eb = json_object_get(b, key);
        if (eb == NULL || norm_empty(eb, drop_taints, taints))
            return false;
        if (compare && !norm_equal(ea, eb, drop_taints, taints))
            return false;
    }
    return true;
}

static bool norm_equal(const json_t *a, const json_t *b, bool drop_taints, bool in_taints)
{
    if (json_is_object(a)) {
        /* Every kept member of a is equal in b, and b keeps no other. */
        return json_is_object(b) && norm_members_in(a, b, drop_taints, in_taints, true) &&
               norm_members_in(b, a, drop_taints, in_taints, false);
    }
    if (json_is_array(a)) {
        size_t n = json_array_size(a);
        if (!json_is_array(b) || json_array_size(b) != n)
            return false;
        for (size_t i = 0; i < n; i++) {
            if (!norm_equal(json_array_get(a, i), json_array_get(b, i), drop_taints, in_taints))
                return false;
        }
        return true;
    }
    return a != NULL && b != NULL && json_equal((json_t *)a, (json_t *)b);
}

bool slice_spec_equal(const json_t *a, const json_t *b, bool ignore_taints)
{
    return norm_equal(a, b, ignore_taints, false);
}

bool slice_devices_equal(const json_t *a, const json_t *b, bool ignore_taints)
{
    /* As members "devices" of two maps: empty and missing are alike. */
    bool empty_a = norm_empty(a, ignore_taints, false),
         empty_b = norm_empty(b, ignore_taints, false);
    if (empty_a || empty_b)
        return empty_a && empty_b;
    return norm_equal(a, b, ignore_taints, false);
}

static const json_t *find_device(const json_t *devices, const char *name)
{
    size_t i;
    const json_t *d;
    json_array_foreach(devices, i, d)
    {
        const char *n = slice_json_string(d, "name", NULL);
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
        const json_t *r = find_device(got, slice_json_string(d, "name", NULL));
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
    const char *name = slice_json_string(slice, "metadata", "name");
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
        const char *api = slice_json_string(r, "apiVersion", NULL),
                   *kind = slice_json_string(r, "kind", NULL);
        const char *name = slice_json_string(r, "name", NULL),
                   *ruid = slice_json_string(r, "uid", NULL);
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
    if (norm_equal(existing_spec, want, drop_taints, false))
        return true;
    size_t i;
    const json_t *p;
    json_array_foreach(pairs, i, p)
    {
        if (norm_equal(json_object_get(p, "sent"), want, drop_taints, false) &&
            norm_equal(json_object_get(p, "stored"), existing_spec, drop_taints, false))
            return true;
    }
    return false;
}

static bool same_taint(const json_t *a, const json_t *b)
{
    static const char *const keys[] = {"key", "value", "effect"};
    for (size_t i = 0; i < 3; i++) {
        const char *x = slice_json_string(a, keys[i], NULL),
                   *y = slice_json_string(b, keys[i], NULL);
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
        const json_t *old = find_device(old_devs, slice_json_string(d, "name", NULL));
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

/* The object to PUT: existing with its spec replaced by want's (want is the
 * run's own desired slice, its taint times are filled in from existing) and
 * its Node owner replaced by ours.  Shallow: the result shares existing's
 * values and want's spec, and changes neither.  NULL when out of memory. */
static json_t *updated_object(const json_t *existing, json_t *want)
{
    json_t *spec = json_object_get(want, "spec");
    const json_t *old_meta = json_object_get(existing, "metadata");
    json_t *our_refs = json_object_get(json_object_get(want, "metadata"), "ownerReferences");
    if (!json_is_object(spec) || !json_is_object(old_meta))
        return NULL;
    keep_time_added(spec, json_object_get(existing, "spec"));
    json_auto_t *obj = json_copy((json_t *)existing);
    json_t *meta = json_copy((json_t *)old_meta);
    json_t *refs = json_array();
    /* set_new takes meta and refs, also when it fails; refs is filled in
     * place below. */
    if (json_object_set_new(meta, "ownerReferences", refs) < 0 ||
        json_object_set_new(obj, "metadata", meta) < 0)
        return NULL;
    /* Keep owners that are not a Node; ours replaces any Node owner. */
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(old_meta, "ownerReferences"), i, r)
    {
        const char *kind = slice_json_string(r, "kind", NULL);
        if ((kind == NULL || strcmp(kind, "Node") != 0) && json_array_append(refs, r) < 0)
            return NULL;
    }
    if (json_array_extend(refs, our_refs) < 0 || json_object_set(obj, "spec", spec) < 0)
        return NULL;
    return steal_pointer(&obj);
}

/* --- the run --- */

/* What the LIST answer means for the pool: which existing slice stands for
 * which desired index, and which go.  Borrowed pointers into in->existing. */
struct pool_match {
    const json_t **matched; /* per desired index, or NULL: to create */
    const json_t **deletes; /* stale and obsolete slices, in call order */
    size_t n_deletes;
    size_t n_new;         /* desired slices without a match */
    size_t obsolete_at_g; /* slices to delete at the pool's generation */
    int64_t g;            /* the highest generation among the pool's slices */
};

static void pool_match_free(struct pool_match *m)
{
    free(m->matched);
    free(m->deletes);
    m->matched = NULL;
    m->deletes = NULL;
}
#define cleanup_pool_match __attribute__((cleanup(pool_match_free)))

static int pool_match(const struct slice_sync_input *in, size_t n_desired, struct pool_match *m)
{
    memset(m, 0, sizeof(*m));
    size_t n_existing = json_array_size(in->existing);
    /* ours: driver, node, pool */
    cleanup_free const json_t **pool = calloc(n_existing + 1, sizeof(*pool));
    size_t n_pool = 0;
    m->matched = calloc(n_desired, sizeof(*m->matched));
    m->deletes = calloc(n_existing + 1, sizeof(*m->deletes));
    if (pool == NULL || m->matched == NULL || m->deletes == NULL) {
        pool_match_free(m);
        return -1;
    }
    size_t i;
    const json_t *s;
    json_array_foreach(in->existing, i, s)
    {
        const char *drv = slice_json_string(s, "spec", "driver"),
                   *node = slice_json_string(s, "spec", "nodeName");
        if (!drv || !node || strcmp(drv, in->driver) != 0 || strcmp(node, in->node) != 0)
            continue; /* not ours to touch */
        const char *name = slice_json_string(json_object_get(s, "spec"), "pool", "name");
        if (name && strcmp(name, in->node) == 0)
            pool[n_pool++] = s;
        else
            m->deletes[m->n_deletes++] = s; /* another pool of ours: stale */
    }
    for (i = 0; i < n_pool; i++) {
        if (generation_of(pool[i]) > m->g)
            m->g = generation_of(pool[i]);
    }
    for (i = 0; i < n_pool; i++) {
        s = pool[i];
        long idx = generation_of(s) < m->g ? -1 : match_index(s, n_desired, in->driver, in->node);
        if (idx >= 0 && m->matched[idx] == NULL) {
            m->matched[idx] = s;
            continue;
        }
        m->obsolete_at_g += generation_of(s) == m->g;
        m->deletes[m->n_deletes++] = s;
    }
    for (size_t k = 0; k < n_desired; k++)
        m->n_new += m->matched[k] == NULL;
    return 0;
}

/* Desired slice index from the builder, at generation. */
static json_t *build_at(slice_sync_build_fn build_fn, void *ctx, size_t index, int64_t generation,
                        const char *node, struct error *err)
{
    json_t *want = build_fn(ctx, index, err);
    if (want == NULL)
        return NULL;
    if (slice_set_generation(want, generation) < 0) {
        json_decref(want);
        error_set(err, "pool %s: desired slice %zu has no spec.pool", node, index);
        return NULL;
    }
    return want;
}

/* want with every member removed that existing lacks, at any depth of maps
 * (lists element by element when their lengths agree): what a server that
 * drops fields it does not serve would leave of it.  A new reference; NULL
 * when out of memory. */
static json_t *without_absent(const json_t *want, const json_t *existing)
{
    size_t i;
    json_t *v, *out;
    if (json_is_object(want) && json_is_object(existing)) {
        const char *key;
        out = json_object();
        json_object_foreach((json_t *)want, key, v)
        {
            const json_t *e = json_object_get(existing, key);
            if (e == NULL || out == NULL)
                continue;
            json_t *c = without_absent(v, e);
            if (c == NULL || json_object_set_new(out, key, c) < 0) {
                json_decref(out);
                out = NULL;
            }
        }
        return out;
    }
    if (json_is_array(want) && json_is_array(existing) &&
        json_array_size(want) == json_array_size(existing)) {
        out = json_array();
        json_array_foreach((json_t *)want, i, v)
        {
            json_t *c = out ? without_absent(v, json_array_get(existing, i)) : NULL;
            if (c == NULL || json_array_append_new(out, c) < 0) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    return json_incref((json_t *)want);
}

/* The desired spec differs from the stored one only by members the stored
 * one lacks. */
static bool only_absent_members(const json_t *existing_spec, const json_t *want_spec,
                                bool drop_taints)
{
    json_t *pruned = without_absent(want_spec, existing_spec);
    bool same = pruned != NULL && norm_equal(existing_spec, pruned, drop_taints, false);
    json_decref(pruned);
    return same;
}

static bool slice_changed(const json_t *existing, json_t *want, const struct slice_sync_input *in)
{
    const json_t *es = json_object_get(existing, "spec");
    const json_t *ws = json_object_get(want, "spec");
    if (!owner_ok(existing, in->node, in->node_uid))
        return true;
    if (equivalent(es, ws, in->equivalents, in->ignore_taints))
        return false;
    if (in->would_store == NULL || !only_absent_members(es, ws, in->ignore_taints))
        return true;
    json_t *obj = updated_object(existing, want);
    json_t *stored = NULL;
    bool same = obj != NULL && in->would_store(in->would_store_ctx, obj, &stored) == 0 &&
                norm_equal(stored, es, in->ignore_taints, false);
    json_decref(stored);
    json_decref(obj);
    return !same;
}

/* One slice_sync_run: its input, the pool as the LIST answer has it, and
 * what it did so far. */
struct run {
    const struct slice_sync_input *in;
    size_t n; /* desired slices */
    slice_sync_build_fn build_fn;
    slice_sync_write_fn write_fn;
    void *ctx;
    const struct pool_match *m;
    struct slice_sync_summary *sum;
    struct error *err;
};

/* The generation stays only when nothing is new, nothing obsolete at G and
 * at most one slice changed: compares one slice at a time and stops at the
 * second change (*bump).  *kept: the one changed slice, if any. */
static int compare(const struct run *r, bool *bump, json_t **kept, size_t *kept_index)
{
    for (size_t k = 0; k < r->n && !*bump; k++) {
        json_t *want = build_at(r->build_fn, r->ctx, k, r->m->g, r->in->node, r->err);
        if (want == NULL)
            return -1;
        if (!slice_changed(r->m->matched[k], want, r->in)) {
            json_decref(want);
        } else if (*kept == NULL) {
            *kept = want;
            *kept_index = k;
        } else {
            json_decref(want);
            json_decref(steal_pointer(kept));
            *bump = true;
        }
    }
    return 0;
}

/* Updates first: existing slices take the new generation while they still
 * hold their devices.  Without a bump only the kept slice is written. */
static int write_updates(const struct run *r, bool bump, json_t **kept, size_t kept_index)
{
    for (size_t k = 0; k < r->n; k++) {
        if (r->m->matched[k] == NULL)
            continue;
        json_auto_t *want = NULL;
        if (bump)
            want = build_at(r->build_fn, r->ctx, k, r->sum->generation, r->in->node, r->err);
        else if (*kept != NULL && k == kept_index)
            want = steal_pointer(kept);
        else {
            r->sum->unchanged++;
            continue;
        }
        if (want == NULL)
            return -1;
        json_auto_t *obj = updated_object(r->m->matched[k], want);
        if (obj == NULL)
            return error_set(r->err, "pool %s: out of memory planning the sync", r->in->node);
        int w = r->write_fn(r->ctx, SLICE_SYNC_UPDATE, k, obj, r->err);
        if (w != 0)
            return w;
        r->sum->updates++;
    }
    return 0;
}

/* Then creates. */
static int write_creates(const struct run *r)
{
    for (size_t k = 0; k < r->n; k++) {
        if (r->m->matched[k] != NULL)
            continue;
        json_auto_t *want =
            build_at(r->build_fn, r->ctx, k, r->sum->generation, r->in->node, r->err);
        if (want == NULL)
            return -1;
        int w = r->write_fn(r->ctx, SLICE_SYNC_CREATE, k, want, r->err);
        if (w != 0)
            return w;
        r->sum->creates++;
    }
    return 0;
}

/* Deletes last, when the slices are already below the pool's generation. */
static int write_deletes(const struct run *r)
{
    for (size_t i = 0; i < r->m->n_deletes; i++) {
        int w = r->write_fn(r->ctx, SLICE_SYNC_DELETE, 0, r->m->deletes[i], r->err);
        if (w != 0)
            return w;
        r->sum->deletes++;
    }
    return 0;
}

int slice_sync_run(const struct slice_sync_input *in, size_t n_slices, slice_sync_build_fn build_fn,
                   slice_sync_write_fn write_fn, void *ctx, struct slice_sync_summary *sum,
                   struct error *err)
{
    memset(sum, 0, sizeof(*sum));
    if (n_slices == 0)
        return error_set(err, "pool %s: no desired slice", in->node);
    cleanup_pool_match struct pool_match m;
    if (pool_match(in, n_slices, &m) < 0)
        return error_set(err, "pool %s: out of memory planning the sync", in->node);
    const struct run r = {in, n_slices, build_fn, write_fn, ctx, &m, sum, err};
    json_auto_t *kept = NULL; /* the one changed slice the comparison found */
    size_t kept_index = 0;
    bool bump = m.n_new > 0 || m.obsolete_at_g > 0;
    if (!bump && compare(&r, &bump, &kept, &kept_index) < 0)
        return -1;
    sum->generation = bump ? m.g + 1 : m.g;
    int rc = write_updates(&r, bump, &kept, kept_index);
    if (rc == 0)
        rc = write_creates(&r);
    if (rc == 0)
        rc = write_deletes(&r);
    return rc;
}

/* --- the whole plan at once --- */

struct plan_ctx {
    const struct slice_sync_input *in;
    struct slice_sync_plan *plan;
};

static json_t *plan_build(void *ctx, size_t index, struct error *err)
{
    struct plan_ctx *c = ctx;
    json_t *copy = json_deep_copy(json_array_get(c->in->desired, index));
    if (copy == NULL)
        error_set(err, "pool %s: out of memory planning the sync", c->in->node);
    return copy;
}

static int plan_write(void *ctx, enum slice_sync_op op, size_t index, const json_t *obj,
                      struct error *err)
{
    struct plan_ctx *c = ctx;
    struct slice_sync_plan *plan = c->plan;
    json_t *list = op == SLICE_SYNC_UPDATE   ? plan->updates
                   : op == SLICE_SYNC_CREATE ? plan->creates
                                             : plan->deletes;
    json_t *idx = op == SLICE_SYNC_UPDATE   ? plan->update_index
                  : op == SLICE_SYNC_CREATE ? plan->create_index
                                            : NULL;
    if (json_array_append(list, (json_t *)obj) < 0 ||
        (idx != NULL && json_array_append_new(idx, json_integer((json_int_t)index)) < 0))
        return error_set(err, "pool %s: out of memory planning the sync", c->in->node);
    return 0;
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
    plan->updates = json_array();
    plan->update_index = json_array();
    plan->creates = json_array();
    plan->create_index = json_array();
    plan->deletes = json_array();
    if (!plan->updates || !plan->update_index || !plan->creates || !plan->create_index ||
        !plan->deletes) {
        slice_sync_plan_free(plan);
        return error_set(err, "pool %s: out of memory planning the sync", in->node);
    }
    struct plan_ctx c = {in, plan};
    struct slice_sync_summary sum;
    if (slice_sync_run(in, json_array_size(in->desired), plan_build, plan_write, &c, &sum, err) !=
        0) {
        slice_sync_plan_free(plan);
        return -1;
    }
    plan->generation = sum.generation;
    plan->unchanged = sum.unchanged;
    return 0;
}
