// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the slice-by-slice sync (slice_sync_run with
 * slice_layout_*): it holds about one desired slice at a time, makes its
 * calls in the order updates, creates, deletes, stops when the writer asks,
 * shares instead of copying without changing the LIST answer, and its
 * on-the-fly comparison normalises exactly like the copying one it replaced
 * (a reference normaliser here checks thousands of generated pairs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/publish/slice_builder.h"
#include "driver/publish/slice_sync.h"
#include "slice_fixture.h"
#include "common/tests/test_main.h"

#define BUILT_MAX 256

static struct fakehw_device *gpus(size_t n)
{
    struct fakehw_device *d = calloc(n, sizeof(*d));
    assert_non_null(d);
    for (size_t i = 0; i < n; i++) {
        snprintf(d[i].name, sizeof(d[i].name), "gpu-%zu", i);
        d[i].index = (long)i;
        snprintf(d[i].uuid, sizeof(d[i].uuid), "GPU-%08zx-1111-2222-3333-444444444444", i);
        snprintf(d[i].product_name, sizeof(d[i].product_name), "NVIDIA H100 80GB HBM3");
        d[i].memory_bytes = 81559ULL << 20;
        snprintf(d[i].driver_version, sizeof(d[i].driver_version), "580.95.05");
        snprintf(d[i].pci_bus_id, sizeof(d[i].pci_bus_id), "0000:%02zx:00.0", i & 0xff);
        d[i].numa_node = -1;
        d[i].healthy = true;
    }
    return d;
}

static void flip(struct fakehw_device *d, const char *reason)
{
    d->healthy = reason == NULL;
    snprintf(d->health_reason, sizeof(d->health_reason), "%s", reason ? reason : "");
}

static const char *name_of(const json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
}

/* A fake server and a run with recording builder and writer. */
struct world {
    struct fakehw_device *devs;
    size_t n;
    json_t *server;

    struct slice_build_input bin;
    struct slice_layout layout;
    json_t *built[BUILT_MAX]; /* our own reference to every slice handed out */
    size_t n_built;
    size_t max_alive; /* most built slices the run held at once */
    char ops[BUILT_MAX + 1];
    size_t n_ops;
    int stop_at; /* the call (1-based) that gets stop_rc; 0: none */
    int stop_rc;
    struct slice_sync_summary sum;
    /* The dry run (slice_sync_input.would_store): 0 none, else what the
     * fake server answers; dry_runs counts the questions. */
    enum { DRY_NONE, DRY_DROPS_CAPACITY, DRY_KEEPS, DRY_FAILS } dry;
    int dry_runs;
};

/* Removes capacity from the first device of a slice spec, as a server that
 * does not serve a field drops it. */
static void drop_first_capacity(json_t *spec)
{
    json_object_del(json_array_get(json_object_get(spec, "devices"), 0), "capacity");
}

static int fake_would_store(void *ctx, const json_t *obj, json_t **stored_spec)
{
    struct world *w = ctx;
    w->dry_runs++;
    if (w->dry == DRY_FAILS)
        return -1;
    json_t *spec = json_deep_copy(json_object_get(obj, "spec"));
    if (w->dry == DRY_DROPS_CAPACITY)
        drop_first_capacity(spec);
    *stored_spec = spec;
    return 0;
}

static json_t *record_build(void *ctx, size_t index, struct error *err)
{
    struct world *w = ctx;
    size_t alive = 1;
    for (size_t i = 0; i < w->n_built; i++)
        alive += w->built[i]->refcount > 1; /* the run still holds it */
    if (alive > w->max_alive)
        w->max_alive = alive;
    json_t *s = slice_layout_slice(&w->bin, &w->layout, index, err);
    assert_non_null(s);
    assert_true(w->n_built < BUILT_MAX);
    w->built[w->n_built++] = json_incref(s);
    return s;
}

static int record_write(void *ctx, enum slice_sync_op op, size_t index, const json_t *obj,
                        struct error *err)
{
    (void)index;
    struct world *w = ctx;
    w->ops[w->n_ops++] = op == SLICE_SYNC_UPDATE ? 'U' : op == SLICE_SYNC_CREATE ? 'C' : 'D';
    w->ops[w->n_ops] = '\0';
    if (w->stop_at > 0 && (int)w->n_ops == w->stop_at) {
        if (w->stop_rc < 0)
            return error_set(err, "fake write failure");
        return w->stop_rc;
    }
    /* Apply to the next server state (copies: the run's objects are lent). */
    json_t *next = json_array();
    size_t i;
    json_t *s;
    json_array_foreach(w->server, i, s)
    {
        bool same = strcmp(name_of(s), name_of(obj) ? name_of(obj) : "") == 0;
        if (!same)
            json_array_append(next, s);
        else if (op == SLICE_SYNC_UPDATE)
            json_array_append_new(next, slice_fixture_stored(obj));
    }
    if (op == SLICE_SYNC_CREATE)
        json_array_append_new(next, slice_fixture_stored(obj));
    json_decref(w->server);
    w->server = next;
    return 0;
}

/* One sync of the current devices against the server. */
static int sync_world(struct world *w)
{
    w->bin = (struct slice_build_input){.driver = DRIVER,
                                        .node = NODE,
                                        .node_uid = NODE_UID,
                                        .devs = w->devs,
                                        .n_devs = w->n,
                                        .tree_up = true,
                                        .effect = TAINT_EFFECT_NO_SCHEDULE};
    struct error err;
    assert_int_equal(slice_layout_make(&w->bin, &w->layout, &err), 0);
    json_t *existing = json_deep_copy(w->server);
    json_t *before = json_deep_copy(existing);
    struct slice_sync_input in = {
        .driver = DRIVER, .node = NODE, .node_uid = NODE_UID, .existing = existing};
    if (w->dry != DRY_NONE) {
        in.would_store = fake_would_store;
        in.would_store_ctx = w;
    }
    for (size_t i = 0; i < w->n_built; i++)
        json_decref(w->built[i]);
    w->n_built = 0;
    w->max_alive = 0;
    w->n_ops = 0;
    w->ops[0] = '\0';
    int rc = slice_sync_run(&in, w->layout.n_slices, record_build, record_write, w, &w->sum, &err);
    /* The LIST answer is shared, never changed. */
    assert_true(json_equal(existing, before));
    json_decref(existing);
    json_decref(before);
    slice_layout_free(&w->layout);
    return rc;
}

/* Puts the fake server back to a saved state between runs of one test. */
/* One sync, which makes the calls ops names (U update, C create, D delete). */
static void sync_is(struct world *w, const char *ops)
{
    assert_int_equal(sync_world(w), 0);
    assert_string_equal(w->ops, ops);
}

static void restore_server(struct world *w, const json_t *saved)
{
    json_decref(w->server);
    w->server = json_deep_copy(saved);
}

static void world_free(struct world *w)
{
    for (size_t i = 0; i < w->n_built; i++)
        json_decref(w->built[i]);
    json_decref(w->server);
    free(w->devs);
}

static void test_one_slice_at_a_time(void **state)
{
    (void)state;
    struct world w = {.devs = gpus(1024), .n = 1024, .server = json_array()};
    /* First publish: 8 slices created one after the other. */
    sync_is(&w, "CCCCCCCC");
    assert_int_equal(w.max_alive, 1);
    /* Nothing changed: 8 compared, nothing written. */
    assert_int_equal(sync_world(&w), 0);
    assert_int_equal(w.n_ops, 0);
    assert_int_equal(w.sum.unchanged, 8);
    assert_int_equal(w.n_built, 8);
    assert_int_equal(w.max_alive, 1);
    /* A taint: 64 per slice, 16 slices: 8 updates, 8 creates, bumped. */
    flip(&w.devs[5], "XID 79");
    sync_is(&w, "UUUUUUUUCCCCCCCC");
    assert_int_equal(w.sum.generation, 2);
    assert_int_equal(w.max_alive, 1);
    /* One more flip: the comparison keeps the one changed slice. */
    flip(&w.devs[700], "XID 48");
    sync_is(&w, "U");
    assert_int_equal(w.sum.generation, 2);
    assert_int_equal(w.sum.unchanged, 15);
    assert_int_equal(w.max_alive, 2);
    /* Two slices change: the comparison stops at the second, all updated. */
    flip(&w.devs[100], "XID 31");
    flip(&w.devs[900], "XID 31");
    sync_is(&w, "UUUUUUUUUUUUUUUU");
    assert_int_equal(w.sum.generation, 3);
    assert_true(w.max_alive <= 2);
    assert_true(w.n_built < 16 + 16); /* the comparison stopped early */
    world_free(&w);
}

static void test_order_and_stop(void **state)
{
    (void)state;
    struct world w = {.devs = gpus(300), .n = 300, .server = json_array()};
    assert_int_equal(sync_world(&w), 0);
    /* A slice of another pool of this driver and node: stale. */
    json_t *stale = json_deep_copy(json_array_get(w.server, 0));
    json_object_set_new(json_object_get(json_object_get(stale, "spec"), "pool"), "name",
                        json_string("old-pool"));
    json_object_set_new(json_object_get(stale, "metadata"), "name", json_string("stale-abcde"));
    json_array_append_new(w.server, stale);
    flip(&w.devs[7], "XID 79");
    json_t *saved = json_deep_copy(w.server);

    /* Updates first, then creates, then deletes. */
    sync_is(&w, "UUUCCD");
    assert_int_equal(w.sum.updates, 3);
    assert_int_equal(w.sum.creates, 2);
    assert_int_equal(w.sum.deletes, 1);

    /* The writer asks for a re-plan at the second call: nothing more. */
    restore_server(&w, saved);
    w.stop_at = 2;
    w.stop_rc = 1;
    assert_int_equal(sync_world(&w), 1);
    assert_string_equal(w.ops, "UU");
    assert_int_equal(w.sum.updates, 1);

    /* A failing write fails the run with the writer's error. */
    restore_server(&w, saved);
    w.stop_at = 4;
    w.stop_rc = -1;
    assert_int_equal(sync_world(&w), -1);
    assert_string_equal(w.ops, "UUUC");
    json_decref(saved);
    world_free(&w);
}

/* The update shares the existing object's values, keeps other owners and
 * taint times, and replaces only spec and the Node owner. */
struct update_check {
    const json_t *desired;
    const json_t *existing;
    bool shared_name;
    json_t *update;
};

static json_t *plain_build(void *ctx, size_t index, struct error *err)
{
    (void)err;
    struct update_check *c = ctx;
    return json_deep_copy(json_array_get(c->desired, index));
}

static int check_write(void *ctx, enum slice_sync_op op, size_t index, const json_t *obj,
                       struct error *err)
{
    (void)index;
    (void)err;
    struct update_check *c = ctx;
    assert_int_equal(op, SLICE_SYNC_UPDATE);
    c->shared_name =
        json_object_get(json_object_get(obj, "metadata"), "name") ==
            json_object_get(json_object_get(c->existing, "metadata"), "name") &&
        json_object_get(obj, "apiVersion") == json_object_get(c->existing, "apiVersion");
    c->update = json_deep_copy(obj);
    return 0;
}

static void test_update_shares_and_keeps(void **state)
{
    (void)state;
    struct fakehw_device *d = gpus(4);
    flip(&d[1], "XID 79");
    struct slice_build_input bin = {
        DRIVER, NODE, NODE_UID,           d,   4, true, TAINT_EFFECT_NO_SCHEDULE, false, 1,
        true,   true, PERSONALITY_FAKEHW, NULL};
    struct slice_build_result r;
    struct error err;
    assert_int_equal(slice_build(&bin, &r, &err), 0);
    json_t *existing_obj = slice_fixture_stored(json_array_get(r.slices, 0));
    json_array_append_new(
        json_object_get(json_object_get(existing_obj, "metadata"), "ownerReferences"),
        json_pack("{s:s, s:s, s:s, s:s}", "apiVersion", "v1", "kind", "ConfigMap", "name", "keep",
                  "uid", "u-1"));
    json_t *server = json_pack("[o]", existing_obj);
    json_t *before = json_deep_copy(server);
    slice_build_result_free(&r);

    d[0].memory_bytes = 1ULL << 30; /* a change elsewhere in the slice */
    assert_int_equal(slice_build(&bin, &r, &err), 0);
    struct update_check c = {.desired = r.slices, .existing = existing_obj};
    struct slice_sync_input in = {
        .driver = DRIVER, .node = NODE, .node_uid = NODE_UID, .existing = server};
    struct slice_sync_summary sum;
    assert_int_equal(slice_sync_run(&in, 1, plain_build, check_write, &c, &sum, &err), 0);
    assert_int_equal(sum.updates, 1);
    assert_true(c.shared_name);
    assert_true(json_equal(server, before)); /* nothing of the LIST answer changed */
    const json_t *refs = json_object_get(json_object_get(c.update, "metadata"), "ownerReferences");
    assert_int_equal(json_array_size(refs), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(refs, 0), "kind")),
                        "ConfigMap");
    assert_string_equal(json_string_value(json_object_get(json_array_get(refs, 1), "uid")),
                        NODE_UID);
    const json_t *dev1 =
        json_array_get(json_object_get(json_object_get(c.update, "spec"), "devices"), 1);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(dev1, "taints"), 0), "timeAdded")),
                        "2025-11-22T05:00:00Z");
    assert_string_equal(name_of(c.update), name_of(existing_obj));
    json_decref(c.update);
    json_decref(before);
    json_decref(server);
    slice_build_result_free(&r);
    free(d);
}

/* A slice stored without a member the desired one has (a server that does
 * not serve the field) is written again only when a dry run says the server
 * would keep the member; a real change is written without asking. */
static void test_dropped_member_dry_run(void **state)
{
    (void)state;
    struct world w = {.devs = gpus(2), .n = 2, .server = json_array()};
    sync_is(&w, "C");
    drop_first_capacity(json_object_get(json_array_get(w.server, 0), "spec"));

    /* Without a dry run: written. */
    json_t *saved = json_deep_copy(w.server);
    sync_is(&w, "U");
    restore_server(&w, saved);

    /* The server would drop it again: left alone, one question. */
    w.dry = DRY_DROPS_CAPACITY;
    sync_is(&w, "");
    assert_int_equal(w.sum.unchanged, 1);
    assert_int_equal(w.dry_runs, 1);

    /* The server would keep it (the gate is on now): written. */
    w.dry = DRY_KEEPS;
    sync_is(&w, "U");
    restore_server(&w, saved);

    /* The dry run cannot tell: written. */
    w.dry = DRY_FAILS;
    sync_is(&w, "U");
    restore_server(&w, saved);

    /* A new member besides (a flip's taint), which the server keeps:
     * asked, and written. */
    w.dry = DRY_DROPS_CAPACITY;
    w.dry_runs = 0;
    flip(&w.devs[1], "XID 79");
    sync_is(&w, "U");
    assert_int_equal(w.dry_runs, 1);
    restore_server(&w, saved);
    flip(&w.devs[1], NULL);

    /* A changed value: written without asking. */
    w.dry_runs = 0;
    w.devs[1].memory_bytes = 1ULL << 30;
    sync_is(&w, "U");
    assert_int_equal(w.dry_runs, 0);

    json_decref(saved);
    world_free(&w);
}

/* Slices built one by one, in any order, are those of slice_build. */
static void test_layout_matches_build(void **state)
{
    (void)state;
    struct fakehw_device *d = gpus(300);
    flip(&d[3], "XID 79");
    flip(&d[250], NULL);
    memset(d[10].product_name, 'x', 70); /* breaks an API rule: rejected */
    d[10].product_name[70] = '\0';
    snprintf(d[20].name, sizeof(d[20].name), "gpu-21"); /* a second gpu-21: rejected */
    d[20].index = 21;
    for (int remove = 0; remove < 2; remove++) {
        struct slice_build_input bin = {
            DRIVER, NODE, NODE_UID,           d,   300, true, TAINT_EFFECT_NO_EXECUTE, remove, 7,
            true,   true, PERSONALITY_FAKEHW, NULL};
        struct slice_build_result r;
        struct slice_layout l;
        struct error err;
        assert_int_equal(slice_build(&bin, &r, &err), 0);
        assert_int_equal(slice_layout_make(&bin, &l, &err), 0);
        assert_int_equal(l.n_slices, json_array_size(r.slices));
        assert_int_equal(l.published, r.published);
        assert_int_equal(l.tainted, r.tainted);
        assert_int_equal(l.removed, r.removed);
        assert_true(json_equal(l.rejected, r.rejected));
        assert_int_equal(json_array_size(l.rejected), 2);
        for (size_t i = l.n_slices; i-- > 0;) {
            json_t *s = slice_layout_slice(&bin, &l, i, &err);
            assert_true(json_equal(s, json_array_get(r.slices, i)));
            json_decref(s);
        }
        slice_layout_free(&l);
        slice_build_result_free(&r);
    }
    free(d);
}

/* --- the comparison --- */

/* The normaliser the comparison replaced: copies v without nulls, empty
 * lists and maps in maps, taint timeAdded, and taints with drop. */
static json_t *reference_normalised(const json_t *v, bool drop, bool in_taints)
{
    if (json_is_array(v)) {
        json_t *out = json_array();
        size_t i;
        const json_t *e;
        json_array_foreach(v, i, e)
            json_array_append_new(out, reference_normalised(e, drop, in_taints));
        return out;
    }
    if (!json_is_object(v))
        return json_deep_copy(v);
    json_t *out = json_object();
    const char *key;
    const json_t *e;
    json_object_foreach((json_t *)v, key, e)
    {
        bool taints = strcmp(key, "taints") == 0;
        if ((in_taints && strcmp(key, "timeAdded") == 0) || (taints && drop))
            continue;
        json_t *n = reference_normalised(e, drop, taints);
        bool empty = json_is_null(n) || (json_is_array(n) && json_array_size(n) == 0) ||
                     (json_is_object(n) && json_object_size(n) == 0);
        if (empty)
            json_decref(n);
        else
            json_object_set_new(out, key, n);
    }
    return out;
}

static bool reference_equal(const json_t *a, const json_t *b, bool drop)
{
    json_t *na = reference_normalised(a, drop, false), *nb = reference_normalised(b, drop, false);
    bool eq = json_equal(na, nb);
    json_decref(na);
    json_decref(nb);
    return eq;
}

static unsigned long rng = 12345;

static unsigned pick(unsigned n)
{
    rng = rng * 6364136223846793005UL + 1442695040888963407UL;
    return (unsigned)(rng >> 33) % n;
}

/* A small random value where nulls, empties, taints and timeAdded are
 * common. */
static json_t *random_value(int depth)
{
    static const char *const keys[] = {"a", "b", "taints", "timeAdded", "key"};
    unsigned kind = depth > 3 ? pick(4) : pick(7);
    switch (kind) {
    case 0:
        return json_null();
    case 1:
        return json_integer(pick(2));
    case 2:
        return json_string(pick(2) ? "x" : "y");
    case 3:
        return pick(2) ? json_real(1.0) : json_integer(1);
    case 4:
    case 5: {
        json_t *o = json_object();
        for (unsigned i = pick(4); i > 0; i--)
            json_object_set_new(o, keys[pick(5)], random_value(depth + 1));
        return o;
    }
    default: {
        json_t *a = json_array();
        for (unsigned i = pick(3); i > 0; i--)
            json_array_append_new(a, random_value(depth + 1));
        return a;
    }
    }
}

/* A copy of v with small changes that normalisation may or may not hide. */
static json_t *mutated(const json_t *v)
{
    if (json_is_object(v)) {
        json_t *o = json_object();
        const char *key;
        json_t *e;
        json_object_foreach((json_t *)v, key, e)
        {
            unsigned m = pick(8);
            if (m == 0)
                continue; /* drop the member */
            json_object_set_new(o, key, m == 1 ? random_value(3) : mutated(e));
        }
        if (pick(6) == 0)
            json_object_set_new(o, pick(2) ? "timeAdded" : "c",
                                pick(2) ? json_null() : json_object());
        return o;
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) json_array_append_new(a, mutated(e));
        return a;
    }
    return pick(10) == 0 ? random_value(4) : json_deep_copy(v);
}

static void test_comparison_matches_the_copying_one(void **state)
{
    (void)state;
    size_t equal = 0, different = 0;
    for (int i = 0; i < 20000; i++) {
        json_t *a = json_object();
        json_object_set_new(a, "devices", random_value(1));
        json_object_set_new(a, "pool", random_value(2));
        json_t *b = pick(4) == 0 ? random_value(0) : mutated(a);
        for (int drop = 0; drop < 2; drop++) {
            bool want = reference_equal(a, b, drop);
            if (slice_spec_equal(a, b, drop) != want || slice_spec_equal(b, a, drop) != want) {
                char *ta = json_dumps(a, JSON_ENCODE_ANY), *tb = json_dumps(b, JSON_ENCODE_ANY);
                fail_msg("%s vs %s (drop taints %d): want %d", ta, tb, drop, want);
            }
            equal += want;
            different += !want;
        }
        json_decref(a);
        json_decref(b);
    }
    /* Both outcomes were exercised plenty. */
    assert_true(equal > 2000);
    assert_true(different > 2000);
}

static void test_comparison_cases(void **state)
{
    (void)state;
    struct {
        const char *a, *b;
        bool drop, equal;
    } cases[] = {
        {"{\"a\":1}", "{\"a\":1,\"b\":null,\"c\":[],\"d\":{\"e\":null,\"f\":[]}}", false, true},
        {"{\"a\":1}", "{\"a\":1,\"b\":{\"c\":0}}", false, false},
        {"{\"l\":[{}]}", "{\"l\":[{\"x\":null}]}", false, true},
        {"{\"l\":[null]}", "{\"l\":[{}]}", false, false},
        {"{\"l\":[1,2]}", "{\"l\":[2,1]}", false, false},
        {"{\"a\":1}", "{\"a\":1.0}", false, false},
        {"{\"taints\":[{\"key\":\"k\",\"timeAdded\":\"t1\"}]}", "{\"taints\":[{\"key\":\"k\"}]}",
         false, true},
        {"{\"taints\":[{\"key\":\"k\"}]}", "{\"taints\":[{\"key\":\"j\"}]}", false, false},
        {"{\"taints\":[{\"key\":\"k\"}],\"a\":1}", "{\"a\":1}", false, false},
        {"{\"taints\":[{\"key\":\"k\"}],\"a\":1}", "{\"a\":1}", true, true},
        {"{\"timeAdded\":\"x\"}", "{}", false, false},
        {"{\"taints\":{\"timeAdded\":\"x\"}}", "{}", false, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *a = json_loads(cases[i].a, 0, NULL), *b = json_loads(cases[i].b, 0, NULL);
        assert_non_null(a);
        assert_non_null(b);
        if (slice_spec_equal(a, b, cases[i].drop) != cases[i].equal)
            fail_msg("case %zu: %s vs %s", i, cases[i].a, cases[i].b);
        json_decref(a);
        json_decref(b);
    }
    json_t *empty = json_array(), *one = json_pack("[{s:s}]", "name", "gpu-0");
    assert_true(slice_devices_equal(NULL, empty, false));
    assert_false(slice_devices_equal(empty, one, false));
    assert_true(slice_devices_equal(one, one, false));
    json_decref(empty);
    json_decref(one);
}

TEST_MAIN("driver/publish slice-by-slice sync", test_one_slice_at_a_time, test_order_and_stop,
          test_update_shares_and_keeps, test_dropped_member_dry_run, test_layout_matches_build,
          test_comparison_matches_the_copying_one, test_comparison_cases)
