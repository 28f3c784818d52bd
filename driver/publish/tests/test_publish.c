// SPDX-License-Identifier: Apache-2.0
/* Unit tests for driver/publish: API name rules, slice building and
 * splitting at the API limits, and the pool sync plan (generation rules,
 * matching, what is updated, created and deleted), and the digest that
 * tells a change worth a sync from one that publishes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns_names.h"
#include "driver/device/tests/test_gpus.h"
#include "driver/publish/api_names.h"
#include "driver/publish/slice_builder.h"
#include "driver/publish/slice_fingerprint.h"
#include "driver/publish/slice_sync.h"
#include "common/tests/check_valid.h"
#include "slice_fixture.h"
#include "common/tests/test_main.h"

static struct fakehw_device gpu(int i)
{
    struct fakehw_device d = test_h100(i);
    d.numa_node = i % 2;
    return d;
}

static struct fakehw_device *gpus(size_t n)
{
    struct fakehw_device *d = calloc(n ? n : 1, sizeof(*d));
    for (size_t i = 0; i < n; i++)
        d[i] = gpu((int)i);
    return d;
}

static const char *s_at(const json_t *o, const char *a, const char *b, const char *c)
{
    o = json_object_get(o, a);
    if (b)
        o = json_object_get(o, b);
    if (c)
        o = json_object_get(o, c);
    return json_string_value(o);
}

static json_int_t i_at(const json_t *o, const char *a, const char *b, const char *c)
{
    o = json_object_get(json_object_get(json_object_get(o, a), b), c);
    assert_true(json_is_integer(o));
    return json_integer_value(o);
}

static const json_t *devices_of(const json_t *slice)
{
    return json_object_get(json_object_get(slice, "spec"), "devices");
}

/* --- API names --- */

static void test_names(void **state)
{
    (void)state;
    CHECK_VALID(dns_label_valid, OK("gpu-0"), BAD("GPU-0", "-gpu", "gpu.0"));
    CHECK_VALID(dns_subdomain_valid, OK("gpu.fakehw.example.com"),
                BAD("gpu..example.com", "gpu.-x.com"));
    CHECK_VALID(api_c_identifier_valid, OK("cudaComputeCapability"), BAD("9lives", "a-b"));
    assert_false(api_c_identifier_valid("abcdefghijklmnopqrstuvwxyz0123456")); /* 33 */
    CHECK_VALID(api_qualified_name_valid, OK("uuid", "resource.kubernetes.io/pciBusID"),
                BAD("a/b/c", "Resource.io/x", "/x"));
    char prefix[100];
    memset(prefix, 'a', 64);
    snprintf(prefix + 64, sizeof(prefix) - 64, "/x");
    assert_false(api_qualified_name_valid(prefix)); /* prefix of 64 */
}

static void test_semver(void **state)
{
    (void)state;
    const char *good[] = {"0.0.0", "9.0.0", "580.95.5", "1.0.0-rc.1", "1.0.0-alpha-1.x",
                          "1.0.0+build.05", "1.0.0-0.3.7+exp.sha.5114f85",
                          /* 18 digits: the most a number may have (int64) */
                          "999999999999999999.0.0", "1.0.0-999999999999999999",
                          /* an identifier with a letter is a string, any length */
                          "1.0.0-9999999999999999999a", "1.0.0+9999999999999999999"};
    const char *bad[] = {"9.0", "580.95.05", "01.0.0", "1.0", "1.0.0-01", "1.0.0-", "1.0.0+",
                         "1.0.0-a..b", "v1.0.0", "1.0.0.0", "", "1..0",
                         /* 19 digits: refused by 1.38 API servers (int64) */
                         "1000000000000000000.0.0", "0.1000000000000000000.0",
                         "0.0.1000000000000000000", "1.0.0-1000000000000000000"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        if (!api_semver_valid(good[i]))
            fail_msg("%s should be semver", good[i]);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (api_semver_valid(bad[i]))
            fail_msg("%s should not be semver", bad[i]);
    }
}

static void test_device_validate(void **state)
{
    (void)state;
    struct error err;
    json_t *d = json_loads("{\"name\": \"gpu-0\", \"attributes\": {\"driverVersion\":"
                           " {\"version\": \"580.95.05\"}}}",
                           0, NULL);
    assert_int_equal(api_device_validate(d, &err), -1);
    assert_string_equal(err.msg, "device gpu-0: attribute \"driverVersion\": version "
                                 "\"580.95.05\" is not semver 2.0.0 with numbers of at most 18 "
                                 "digits");
    json_decref(d);
    d = json_loads("{\"name\": \"gpu-0\", \"attributes\": {\"x\": {\"int\": 1, \"bool\": true}}}",
                   0, NULL);
    assert_int_equal(api_device_validate(d, &err), -1);
    assert_string_equal(err.msg, "device gpu-0: attribute \"x\": exactly one of int, bool, "
                                 "string, version must be set");
    json_decref(d);
    d = json_loads("{\"name\": \"gpu-0\", \"attributes\": {\"9x\": {\"int\": 1}}}", 0, NULL);
    assert_int_equal(api_device_validate(d, &err), -1);
    assert_non_null(strstr(err.msg, "\"9x\" is not a qualified name"));
    json_decref(d);
    /* 33 entries in all. */
    d = json_pack("{s:s, s:{}, s:{s:{s:s}}}", "name", "gpu-0", "attributes", "capacity", "memory",
                  "value", "1Gi");
    for (int i = 0; i < 32; i++) {
        char key[16];
        snprintf(key, sizeof(key), "a%d", i);
        json_object_set_new(json_object_get(d, "attributes"), key, json_pack("{s:i}", "int", i));
    }
    assert_int_equal(api_device_validate(d, &err), -1);
    assert_string_equal(err.msg, "device gpu-0: 33 attributes and capacities, at most 32 are "
                                 "allowed");
    json_object_del(json_object_get(d, "attributes"), "a0");
    assert_int_equal(api_device_validate(d, &err), 0);
    json_decref(d);
    d = json_pack("{s:s, s:{s:{s:s}}}", "name", "gpu-0", "attributes", "productName", "string",
                  "0123456789012345678901234567890123456789012345678901234567890123456789");
    assert_int_equal(api_device_validate(d, &err), -1);
    assert_non_null(strstr(err.msg, "is longer than 64"));
    json_decref(d);
}

/* --- building --- */

static void test_build_one_device(void **state)
{
    (void)state;
    struct fakehw_device d = gpu(0);
    struct slice_build_input in = slice_fixture_input(&d, 1);
    struct slice_build_result r;
    struct error err;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    assert_int_equal(json_array_size(r.slices), 1);
    const json_t *s = json_array_get(r.slices, 0);
    assert_string_equal(s_at(s, "apiVersion", NULL, NULL), "resource.k8s.io/v1");
    assert_string_equal(s_at(s, "kind", NULL, NULL), "ResourceSlice");
    assert_string_equal(s_at(s, "metadata", "generateName", NULL),
                        "00000-gpu.fakehw.example.com-node-1-");
    const json_t *owner =
        json_array_get(json_object_get(json_object_get(s, "metadata"), "ownerReferences"), 0);
    assert_string_equal(s_at(owner, "apiVersion", NULL, NULL), "v1");
    assert_string_equal(s_at(owner, "kind", NULL, NULL), "Node");
    assert_string_equal(s_at(owner, "name", NULL, NULL), NODE);
    assert_string_equal(s_at(owner, "uid", NULL, NULL), NODE_UID);
    assert_true(json_is_true(json_object_get(owner, "controller")));
    assert_string_equal(s_at(s, "spec", "driver", NULL), DRIVER);
    assert_string_equal(s_at(s, "spec", "nodeName", NULL), NODE);
    assert_string_equal(s_at(s, "spec", "pool", "name"), NODE);
    assert_int_equal(i_at(s, "spec", "pool", "generation"), 1);
    assert_int_equal(i_at(s, "spec", "pool", "resourceSliceCount"), 1);

    const json_t *dev = json_array_get(devices_of(s), 0);
    assert_string_equal(s_at(dev, "name", NULL, NULL), "gpu-0");
    assert_null(json_object_get(dev, "taints"));
    const json_t *a = json_object_get(dev, "attributes");
    assert_string_equal(s_at(a, "type", "string", NULL), "gpu");
    assert_string_equal(s_at(a, "uuid", "string", NULL),
                        "GPU-00000000-1111-2222-3333-444444444444");
    assert_string_equal(s_at(a, "productName", "string", NULL), "NVIDIA H100 80GB HBM3");
    assert_string_equal(s_at(a, "architecture", "string", NULL), "Hopper");
    assert_string_equal(s_at(a, "brand", "string", NULL), "NVIDIA");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(a, "index"), "int")), 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(a, "numaNode"), "int")), 0);
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(a, "resource.kubernetes.io/numaNode"), "int")),
                     0);
    assert_string_equal(s_at(a, "driverVersion", "version", NULL), "580.95.5");
    assert_string_equal(s_at(a, "cudaComputeCapability", "version", NULL), "9.0.0");
    assert_string_equal(s_at(a, "resource.kubernetes.io/pciBusID", "string", NULL), "0000:18:00.0");
    assert_string_equal(s_at(a, "resource.kubernetes.io/pcieRoot", "string", NULL), "pci0000:17");
    assert_string_equal(s_at(dev, "capacity", "memory", "value"), "81559Mi");
    assert_int_equal(api_device_validate(dev, &err), 0);
    assert_int_equal(r.published, 1);
    assert_int_equal(json_array_size(r.rejected), 0);
    slice_build_result_free(&r);
}

/* Builds n devices with the given unhealthy ones and checks the split. */
static void check_split(size_t n, const int *unhealthy, size_t n_unhealthy, size_t want_slices,
                        size_t want_first)
{
    struct fakehw_device *d = gpus(n);
    for (size_t i = 0; i < n_unhealthy; i++) {
        d[unhealthy[i]].healthy = false;
        snprintf(d[unhealthy[i]].health_reason, FAKEHW_REASON_MAX, "XID 79");
    }
    struct slice_build_input in = slice_fixture_input(d, n);
    struct slice_build_result r;
    struct error err;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    assert_int_equal(json_array_size(r.slices), want_slices);
    size_t total = 0, limit = n_unhealthy ? SLICE_MAX_DEVICES_TAINTED : SLICE_MAX_DEVICES;
    long last_index = -1;
    for (size_t s = 0; s < want_slices; s++) {
        const json_t *slice = json_array_get(r.slices, s);
        size_t k = json_array_size(devices_of(slice));
        assert_true(k <= limit);
        if (s == 0)
            assert_int_equal(k, want_first);
        assert_int_equal(i_at(slice, "spec", "pool", "resourceSliceCount"), want_slices);
        char want_name[SLICE_GENERATE_NAME_BUF];
        slice_generate_name(s, want_slices, DRIVER, NODE, want_name, sizeof(want_name));
        assert_string_equal(s_at(slice, "metadata", "generateName", NULL), want_name);
        size_t i;
        const json_t *dev;
        json_array_foreach(devices_of(slice), i, dev)
        {
            long idx = (long)json_integer_value(json_object_get(
                json_object_get(json_object_get(dev, "attributes"), "index"), "int"));
            assert_true(idx > last_index); /* index order, across slices */
            last_index = idx;
        }
        total += k;
    }
    assert_int_equal(total, n);
    assert_int_equal(r.tainted, n_unhealthy);
    slice_build_result_free(&r);
    free(d);
}

static void test_split_at_limits(void **state)
{
    (void)state;
    check_split(1, NULL, 0, 1, 1);
    check_split(4, NULL, 0, 1, 4);
    check_split(128, NULL, 0, 1, 128);
    check_split(129, NULL, 0, 2, 128);
    check_split(300, NULL, 0, 3, 128);
    /* Any taint in the pool: 64 per slice. */
    int one[] = {3};
    check_split(4, one, 1, 1, 4);
    check_split(64, one, 1, 1, 64);
    int last[] = {64};
    check_split(65, last, 1, 2, 64);
    int two[] = {0, 299};
    check_split(300, two, 2, 5, 64);
}

static void test_build_empty_and_order(void **state)
{
    (void)state;
    struct slice_build_input in = slice_fixture_input(NULL, 0);
    struct slice_build_result r;
    struct error err;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    assert_int_equal(json_array_size(r.slices), 1);
    assert_int_equal(json_array_size(devices_of(json_array_get(r.slices, 0))), 0);
    assert_true(json_is_array(devices_of(json_array_get(r.slices, 0))));
    slice_build_result_free(&r);

    /* Input order does not matter: index order out. */
    struct fakehw_device d[3] = {gpu(2), gpu(0), gpu(1)};
    in = slice_fixture_input(d, 3);
    assert_int_equal(slice_build(&in, &r, &err), 0);
    const json_t *devs = devices_of(json_array_get(r.slices, 0));
    assert_string_equal(s_at(json_array_get(devs, 0), "name", NULL, NULL), "gpu-0");
    assert_string_equal(s_at(json_array_get(devs, 2), "name", NULL, NULL), "gpu-2");
    slice_build_result_free(&r);
}

static void test_build_taints_and_policies(void **state)
{
    (void)state;
    struct fakehw_device d[3] = {gpu(0), gpu(1), gpu(2)};
    d[1].healthy = false;
    snprintf(d[1].health_reason, FAKEHW_REASON_MAX, "XID 79: GPU has fallen off the bus");
    struct slice_build_input in = slice_fixture_input(d, 3);
    in.effect = TAINT_EFFECT_NO_EXECUTE;
    struct slice_build_result r;
    struct error err;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    const json_t *devs = devices_of(json_array_get(r.slices, 0));
    assert_null(json_object_get(json_array_get(devs, 0), "taints"));
    const json_t *t = json_array_get(json_object_get(json_array_get(devs, 1), "taints"), 0);
    assert_string_equal(s_at(t, "key", NULL, NULL), DRIVER "/unhealthy");
    assert_string_equal(s_at(t, "value", NULL, NULL), "XID-79");
    assert_string_equal(s_at(t, "effect", NULL, NULL), "NoExecute");
    assert_null(json_object_get(t, "timeAdded"));
    slice_build_result_free(&r);

    in.remove_unhealthy = true;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    devs = devices_of(json_array_get(r.slices, 0));
    assert_int_equal(json_array_size(devs), 2);
    assert_string_equal(s_at(json_array_get(devs, 1), "name", NULL, NULL), "gpu-2");
    assert_int_equal(r.removed, 1);
    slice_build_result_free(&r);

    /* fakehw gone: every device tainted fakehw-unavailable. */
    in.remove_unhealthy = false;
    in.tree_up = false;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    devs = devices_of(json_array_get(r.slices, 0));
    assert_int_equal(r.tainted, 3);
    assert_string_equal(s_at(json_array_get(json_object_get(json_array_get(devs, 0), "taints"), 0),
                             "value", NULL, NULL),
                        "fakehw-unavailable");
    slice_build_result_free(&r);
}

static void test_build_rejects_bad_device(void **state)
{
    (void)state;
    struct fakehw_device d[2] = {gpu(0), gpu(1)};
    memset(d[0].product_name, 'x', 70);
    d[0].product_name[70] = '\0';
    struct slice_build_input in = slice_fixture_input(d, 2);
    struct slice_build_result r;
    struct error err;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    assert_int_equal(r.published, 1);
    assert_int_equal(json_array_size(r.rejected), 1);
    const json_t *rej = json_array_get(r.rejected, 0);
    assert_string_equal(s_at(rej, "device", NULL, NULL), "gpu-0");
    assert_non_null(strstr(s_at(rej, "error", NULL, NULL), "productName"));
    slice_build_result_free(&r);

    in.driver = "Not_A_Domain";
    assert_int_equal(slice_build(&in, &r, &err), -1);
    assert_string_equal(err.msg, "driver name \"Not_A_Domain\" is not a DNS subdomain of at most "
                                 "63 characters");
    in.driver = DRIVER;
    in.node_uid = "";
    assert_int_equal(slice_build(&in, &r, &err), -1);
    assert_string_equal(err.msg, "node node-1: no uid for the owner reference");
}

static void test_generate_names(void **state)
{
    (void)state;
    char buf[SLICE_GENERATE_NAME_BUF];
    slice_generate_name(10, 300, DRIVER, NODE, buf, sizeof(buf));
    assert_string_equal(buf, "0000a-gpu.fakehw.example.com-node-1-");
    assert_int_equal(slice_index_digits(1), 5);
    assert_int_equal(slice_index_digits(0x100000), 5);
    assert_int_equal(slice_index_digits(0x100001), 6);
    /* Long node names: cut to 58 characters, still a valid name once the
     * server appends 5 characters. */
    const char *node = "a-very-long-node-name.with.many.parts.example.internal.cluster.local";
    slice_generate_name(0, 1, "gpu.nvidia.com", node, buf, sizeof(buf));
    assert_int_equal(strlen(buf), SLICE_GENERATE_NAME_MAX);
    char full[80];
    snprintf(full, sizeof(full), "%sx7k2q", buf);
    assert_true(dns_subdomain_valid(full));
}

/* --- the sync plan --- */

/* Applies a plan to a fake server list. */
static json_t *apply(const json_t *existing, const struct slice_sync_plan *plan)
{
    json_t *out = json_array();
    size_t i, j;
    const json_t *s, *x;
    json_array_foreach(existing, i, s)
    {
        bool gone = false;
        const json_t *repl = NULL;
        json_array_foreach(plan->deletes, j, x) gone = gone || json_equal((json_t *)x, (json_t *)s);
        json_array_foreach(plan->updates, j, x)
        {
            if (strcmp(s_at(x, "metadata", "name", NULL), s_at(s, "metadata", "name", NULL)) == 0)
                repl = x;
        }
        if (gone)
            continue;
        json_array_append_new(out, repl ? slice_fixture_stored(repl) : json_deep_copy(s));
    }
    json_array_foreach(plan->creates, j, x) json_array_append_new(out, slice_fixture_stored(x));
    return out;
}

struct world {
    struct fakehw_device *devs;
    size_t n;
    json_t *server;
    struct slice_sync_plan plan;
    bool remove;
};

static void plan_for(struct world *w)
{
    struct slice_build_input in = slice_fixture_input(w->devs, w->n);
    in.remove_unhealthy = w->remove;
    struct slice_build_result r;
    struct error err;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    struct slice_sync_input sin = {.driver = DRIVER,
                                   .node = NODE,
                                   .node_uid = NODE_UID,
                                   .existing = w->server,
                                   .desired = r.slices};
    slice_sync_plan_free(&w->plan);
    if (slice_sync_plan(&sin, &w->plan, &err) < 0)
        fail_msg("plan: %s", err.msg);
    slice_build_result_free(&r);
}

static void sync(struct world *w)
{
    plan_for(w);
    json_t *next = apply(w->server, &w->plan);
    json_decref(w->server);
    w->server = next;
}

static size_t count(const json_t *a)
{
    return json_array_size(a);
}

static void world_free(struct world *w)
{
    slice_sync_plan_free(&w->plan);
    json_decref(w->server);
    free(w->devs);
}

static void test_plan_first_publish_and_steady(void **state)
{
    (void)state;
    struct world w = {gpus(300), 300, json_array(), {0}, false};
    sync(&w);
    assert_int_equal(w.plan.generation, 1);
    assert_int_equal(count(w.plan.creates), 3);
    assert_int_equal(count(w.plan.updates) + count(w.plan.deletes), 0);
    assert_int_equal(count(w.server), 3);
    /* Same input again: nothing to do. */
    plan_for(&w);
    assert_true(slice_sync_plan_empty(&w.plan));
    assert_int_equal(w.plan.unchanged, 3);
    assert_int_equal(w.plan.generation, 1);
    world_free(&w);
}

static void test_plan_single_update_keeps_generation(void **state)
{
    (void)state;
    struct world w = {gpus(4), 4, json_array(), {0}, false};
    sync(&w);
    /* A flip in a one-slice pool: one update, same generation. */
    w.devs[2].healthy = false;
    sync(&w);
    assert_int_equal(w.plan.generation, 1);
    assert_int_equal(count(w.plan.updates), 1);
    assert_int_equal(count(w.plan.creates) + count(w.plan.deletes), 0);
    const json_t *t = json_array_get(
        json_object_get(json_array_get(devices_of(json_array_get(w.server, 0)), 2), "taints"), 0);
    assert_string_equal(s_at(t, "timeAdded", NULL, NULL), "2025-11-22T05:00:00Z");
    /* The server's timeAdded does not count as a difference... */
    plan_for(&w);
    assert_true(slice_sync_plan_empty(&w.plan));
    /* ...and another change keeps it. */
    w.devs[0].memory_bytes = 1ULL << 30;
    plan_for(&w);
    assert_int_equal(count(w.plan.updates), 1);
    const json_t *dev2 = json_array_get(devices_of(json_array_get(w.plan.updates, 0)), 2);
    assert_string_equal(
        s_at(json_array_get(json_object_get(dev2, "taints"), 0), "timeAdded", NULL, NULL),
        "2025-11-22T05:00:00Z");
    /* The update keeps the object's identity. */
    assert_string_equal(s_at(json_array_get(w.plan.updates, 0), "metadata", "name", NULL),
                        s_at(json_array_get(w.server, 0), "metadata", "name", NULL));
    assert_non_null(s_at(json_array_get(w.plan.updates, 0), "metadata", "resourceVersion", NULL));
    world_free(&w);
}

static void test_plan_multi_slice_change_bumps(void **state)
{
    (void)state;
    struct world w = {gpus(300), 300, json_array(), {0}, false};
    sync(&w);
    /* A taint anywhere: 64 per slice, 5 slices: 3 updates + 2 creates, bumped. */
    w.devs[7].healthy = false;
    sync(&w);
    assert_int_equal(w.plan.generation, 2);
    assert_int_equal(count(w.plan.updates), 3);
    assert_int_equal(count(w.plan.creates), 2);
    assert_int_equal(count(w.server), 5);
    size_t i;
    const json_t *s;
    json_array_foreach(w.server, i, s)
    {
        assert_int_equal(i_at(s, "spec", "pool", "generation"), 2);
        assert_int_equal(i_at(s, "spec", "pool", "resourceSliceCount"), 5);
    }
    /* Healthy again: back to 3 slices, the 2 extra are obsolete at G: bump. */
    w.devs[7].healthy = true;
    sync(&w);
    assert_int_equal(w.plan.generation, 3);
    assert_int_equal(count(w.plan.updates), 3);
    assert_int_equal(count(w.plan.deletes), 2);
    assert_int_equal(count(w.server), 3);
    world_free(&w);
}

static void test_plan_recreates_deleted_slice(void **state)
{
    (void)state;
    struct world w = {gpus(300), 300, json_array(), {0}, false};
    sync(&w);
    json_array_remove(w.server, 1);
    sync(&w);
    assert_int_equal(count(w.plan.creates), 1);
    assert_int_equal(count(w.plan.updates), 2);
    assert_int_equal(w.plan.generation, 2);
    assert_string_equal(s_at(json_array_get(w.plan.creates, 0), "metadata", "generateName", NULL),
                        "00001-gpu.fakehw.example.com-node-1-");
    /* Everything wiped (the kubelet at its start): all created again, at a
     * generation above nothing: 1. */
    json_array_clear(w.server);
    sync(&w);
    assert_int_equal(count(w.plan.creates), 3);
    assert_int_equal(w.plan.generation, 1);
    world_free(&w);
}

static void test_plan_removes_stale_and_foreign(void **state)
{
    (void)state;
    struct world w = {gpus(4), 4, json_array(), {0}, false};
    sync(&w);
    const json_t *good = json_array_get(w.server, 0);
    /* Another pool of this driver and node: stale, deleted. */
    json_t *other_pool = json_deep_copy(good);
    json_object_set_new(json_object_get(json_object_get(other_pool, "spec"), "pool"), "name",
                        json_string("old-pool"));
    json_object_set_new(json_object_get(other_pool, "metadata"), "name",
                        json_string("gpu.fakehw.example.com-abcde"));
    /* A lower generation: obsolete. */
    json_t *old_gen = json_deep_copy(good);
    json_object_set_new(json_object_get(json_object_get(old_gen, "spec"), "pool"), "generation",
                        json_integer(0));
    json_object_set_new(json_object_get(old_gen, "metadata"), "name",
                        json_string("00000-gpu.fakehw.example.com-node-1-zzzzz"));
    /* The v0.34 naming (no index): obsolete. */
    json_t *unindexed = json_deep_copy(good);
    json_object_set_new(json_object_get(unindexed, "metadata"), "name",
                        json_string("gpu.fakehw.example.com-qqqqq"));
    /* Another driver, another node: not ours, left alone. */
    json_t *foreign = json_deep_copy(good);
    json_object_set_new(json_object_get(foreign, "spec"), "driver", json_string("nic.example.com"));
    json_t *other_node = json_deep_copy(good);
    json_object_set_new(json_object_get(other_node, "spec"), "nodeName", json_string("node-2"));
    json_array_append_new(w.server, other_pool);
    json_array_append_new(w.server, old_gen);
    json_array_append_new(w.server, unindexed);
    json_array_append_new(w.server, foreign);
    json_array_append_new(w.server, other_node);
    sync(&w);
    assert_int_equal(count(w.plan.deletes), 3);
    /* The unindexed slice is at generation 1 = G: the generation moves on. */
    assert_int_equal(w.plan.generation, 2);
    assert_int_equal(count(w.plan.updates), 1);
    assert_int_equal(count(w.plan.creates), 0);
    assert_int_equal(count(w.server), 3);
    world_free(&w);
}

static void test_plan_duplicate_index_and_owner(void **state)
{
    (void)state;
    struct world w = {gpus(4), 4, json_array(), {0}, false};
    sync(&w);
    json_t *dup = json_deep_copy(json_array_get(w.server, 0));
    json_object_set_new(json_object_get(dup, "metadata"), "name",
                        json_string("00000-gpu.fakehw.example.com-node-1-dupli"));
    json_array_append_new(w.server, dup);
    sync(&w);
    assert_int_equal(count(w.plan.deletes), 1);
    assert_int_equal(w.plan.generation, 2);
    assert_int_equal(count(w.server), 1);

    /* A slice without our owner reference is updated to carry it. */
    json_object_del(json_object_get(json_array_get(w.server, 0), "metadata"), "ownerReferences");
    sync(&w);
    assert_int_equal(count(w.plan.updates), 1);
    assert_int_equal(w.plan.generation, 2);
    const json_t *refs = json_object_get(json_object_get(json_array_get(w.server, 0), "metadata"),
                                         "ownerReferences");
    assert_string_equal(s_at(json_array_get(refs, 0), "uid", NULL, NULL), NODE_UID);
    world_free(&w);
}

static void test_plan_dropped_taints_and_equivalents(void **state)
{
    (void)state;
    struct fakehw_device d[2] = {gpu(0), gpu(1)};
    d[1].healthy = false;
    struct slice_build_input in = slice_fixture_input(d, 2);
    struct slice_build_result r;
    struct error err;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    /* The server stored the slice without taints. */
    json_t *server_obj = slice_fixture_stored(json_array_get(r.slices, 0));
    json_object_del(json_array_get(devices_of(server_obj), 1), "taints");
    assert_true(slice_taints_dropped(json_array_get(r.slices, 0), server_obj));
    assert_false(slice_taints_dropped(json_array_get(r.slices, 0), json_array_get(r.slices, 0)));
    json_t *server = json_pack("[o]", server_obj);
    struct slice_sync_input sin = {.driver = DRIVER,
                                   .node = NODE,
                                   .node_uid = NODE_UID,
                                   .existing = server,
                                   .desired = r.slices};
    struct slice_sync_plan plan;
    assert_int_equal(slice_sync_plan(&sin, &plan, &err), 0);
    assert_int_equal(count(plan.updates), 1); /* would write again and again... */
    slice_sync_plan_free(&plan);
    sin.ignore_taints = true; /* ...unless taints are known to be dropped */
    assert_int_equal(slice_sync_plan(&sin, &plan, &err), 0);
    assert_true(slice_sync_plan_empty(&plan));
    slice_sync_plan_free(&plan);

    /* A server that rewrites a field: equal through a remembered pair. */
    sin.ignore_taints = false;
    json_t *spec_sent = json_deep_copy(json_object_get(json_array_get(r.slices, 0), "spec"));
    json_t *pairs =
        json_pack("[{s:o, s:O}]", "sent", spec_sent, "stored", json_object_get(server_obj, "spec"));
    sin.equivalents = pairs;
    assert_int_equal(slice_sync_plan(&sin, &plan, &err), 0);
    assert_true(slice_sync_plan_empty(&plan));
    slice_sync_plan_free(&plan);
    json_decref(pairs);
    json_decref(server);
    slice_build_result_free(&r);
}

static void test_plan_remove_policy(void **state)
{
    (void)state;
    struct world w = {gpus(3), 3, json_array(), {0}, true};
    w.devs[0].healthy = false;
    sync(&w);
    assert_int_equal(json_array_size(devices_of(json_array_get(w.server, 0))), 2);
    w.devs[0].healthy = true;
    sync(&w);
    assert_int_equal(count(w.plan.updates), 1);
    assert_int_equal(json_array_size(devices_of(json_array_get(w.server, 0))), 3);
    world_free(&w);
}

/* A dynamic-MIG GPU with partitions at n_parts placements of 3g (start
 * 0 and 4) into d (room for 1 + 2); returns the count. */
static size_t mig_gpu(struct fakehw_device *d, int i, const char *mode, size_t n_parts)
{
    d[0] = gpu(i);
    snprintf(d[0].mig_mode, sizeof(d[0].mig_mode), "%s", mode);
    for (size_t k = 0; k < n_parts; k++) {
        struct fakehw_device *p = &d[1 + k];
        *p = gpu(i);
        snprintf(p->name, sizeof(p->name), "gpu-%d-mig-3g40gb-%zu", i, k * 4);
        snprintf(p->uuid, sizeof(p->uuid), "MIG-%08x-1111-2222-3333-%012zx", i, k);
        p->index = 1000 + i * 10 + (long)k;
        p->mig_mode[0] = '\0';
        snprintf(p->parent, sizeof(p->parent), "gpu-%d", i);
        snprintf(p->mig_profile, sizeof(p->mig_profile), "3g.40gb");
        p->mig_placement[0] = (long)k * 4;
        p->mig_placement[1] = 4;
        p->memory_bytes = 40ULL << 30;
    }
    return 1 + n_parts;
}

static void test_partitions_layout(void **state)
{
    (void)state;
    /* 9 dynamic GPUs (2 partitions each), 1 static (2 instances), 1 plain. */
    struct fakehw_device d[40];
    size_t n = 0;
    for (int i = 0; i < 9; i++)
        n += mig_gpu(&d[n], i, FAKEHW_MIG_DYNAMIC, 2);
    n += mig_gpu(&d[n], 9, FAKEHW_MIG_STATIC, 2);
    d[n++] = gpu(10);
    struct slice_build_input in = slice_fixture_input(d, n);
    in.partitions = true;
    struct slice_build_result r;
    struct error err;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    /* 27 counted + 2 static instances + 1 plain; the static parent is left out. */
    assert_int_equal(r.published, 30);
    assert_int_equal(json_array_size(r.slices), 3);
    json_t *s0 = json_array_get(r.slices, 0), *s1 = json_array_get(r.slices, 1),
           *s2 = json_array_get(r.slices, 2);
    assert_int_equal(
        json_array_size(json_object_get(json_object_get(s0, "spec"), "sharedCounters")), 8);
    assert_null(json_object_get(json_object_get(s0, "spec"), "devices"));
    assert_int_equal(
        json_array_size(json_object_get(json_object_get(s1, "spec"), "sharedCounters")), 1);
    json_t *devs = json_object_get(json_object_get(s2, "spec"), "devices");
    assert_int_equal(json_array_size(devs), 30);
    assert_null(json_object_get(json_object_get(s2, "spec"), "sharedCounters"));
    assert_int_equal(i_at(s2, "spec", "pool", "resourceSliceCount"), 3);
    json_t *set = json_array_get(json_object_get(json_object_get(s0, "spec"), "sharedCounters"), 0);
    assert_string_equal(s_at(set, "name", NULL, NULL), "gpu-0-counter-set");
    assert_int_equal(json_object_size(json_object_get(set, "counters")), 9);
    assert_string_equal(s_at(json_object_get(set, "counters"), "memory", "value", NULL), "81559Mi");
    size_t i;
    json_t *dev;
    size_t counted = 0, static_seen = 0;
    json_array_foreach(devs, i, dev)
    {
        const char *name = s_at(dev, "name", NULL, NULL);
        json_t *cc = json_object_get(dev, "consumesCounters");
        assert_string_not_equal(name, "gpu-9"); /* the static parent */
        if (!strcmp(name, "gpu-3-mig-3g40gb-4")) {
            assert_string_equal(s_at(json_array_get(cc, 0), "counterSet", NULL, NULL),
                                "gpu-3-counter-set");
            json_t *c = json_object_get(json_array_get(cc, 0), "counters");
            assert_int_equal(json_object_size(c), 5);
            assert_string_equal(s_at(c, "memory", "value", NULL), "40Gi");
            assert_non_null(json_object_get(c, "memory-slice-7"));
            assert_null(json_object_get(c, "memory-slice-3"));
            assert_string_equal(s_at(dev, "attributes", "profile", "string"), "3g.40gb");
            assert_string_equal(s_at(dev, "attributes", "type", "string"), "mig");
            assert_string_equal(s_at(dev, "attributes", "parentUUID", "string"), d[9].uuid);
        }
        if (!strncmp(name, "gpu-9-mig", 9)) {
            static_seen++;
            assert_null(cc);
            assert_string_equal(s_at(dev, "attributes", "type", "string"), "mig");
        }
        counted += cc != NULL;
    }
    assert_int_equal(counted, 27);
    assert_int_equal(static_seen, 2);
    slice_build_result_free(&r);

    /* Counters refused: dynamic GPUs whole, their placements left out. */
    in.partitions = false;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    assert_int_equal(r.published, 9 + 2 + 1);
    assert_int_equal(json_array_size(r.slices), 1);
    json_array_foreach(
        json_object_get(json_object_get(json_array_get(r.slices, 0), "spec"), "devices"), i, dev)
        assert_null(json_object_get(dev, "consumesCounters"));
    slice_build_result_free(&r);

    /* 70 counted devices: device slices of at most 64. */
    struct fakehw_device *many = calloc(70, sizeof(*many));
    size_t m = 0;
    for (int g = 0; m + 3 <= 70; g++)
        m += mig_gpu(&many[m], g, FAKEHW_MIG_DYNAMIC, 2);
    many[m] = gpu(500);
    m++;
    struct slice_build_input big = slice_fixture_input(many, m);
    big.partitions = true;
    assert_int_equal(slice_build(&big, &r, &err), 0);
    json_array_foreach(r.slices, i, dev) assert_true(
        json_array_size(json_object_get(json_object_get(dev, "spec"), "devices")) <= 64);
    slice_build_result_free(&r);
    free(many);
}

/* spec.partitionTypeAttribute: on the slices with counted devices, naming
 * profile in the driver's domain, which every counted device carries (the
 * whole GPU as "full"); nowhere when not asked or nothing is counted. */
static void test_partition_type_attribute(void **state)
{
    (void)state;
    struct fakehw_device d[8];
    size_t n = mig_gpu(d, 0, FAKEHW_MIG_DYNAMIC, 2);
    n += mig_gpu(&d[n], 1, FAKEHW_MIG_STATIC, 2);
    struct slice_build_input in = slice_fixture_input(d, n);
    in.partitions = true;
    in.partition_type = true;
    struct slice_build_result r;
    struct error err;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    assert_int_equal(json_array_size(r.slices), 2);
    assert_null(json_object_get(json_object_get(json_array_get(r.slices, 0), "spec"),
                                "partitionTypeAttribute"));
    json_t *spec = json_object_get(json_array_get(r.slices, 1), "spec");
    assert_string_equal(s_at(spec, "partitionTypeAttribute", NULL, NULL), DRIVER "/profile");
    size_t i, counted = 0;
    json_t *dev;
    json_array_foreach(json_object_get(spec, "devices"), i, dev)
    {
        if (json_object_get(dev, "consumesCounters") == NULL)
            continue;
        counted++;
        const char *want = strcmp(s_at(dev, "name", NULL, NULL), "gpu-0") ? "3g.40gb" : "full";
        assert_string_equal(s_at(dev, "attributes", "profile", "string"), want);
    }
    assert_int_equal(counted, 3);
    slice_build_result_free(&r);

    /* Not asked (the server dropped it), or counters off: no field. */
    for (int k = 0; k < 2; k++) {
        in.partition_type = k == 1;
        in.partitions = k == 0;
        assert_int_equal(slice_build(&in, &r, &err), 0);
        json_array_foreach(r.slices, i, dev)
            assert_null(json_object_get(json_object_get(dev, "spec"), "partitionTypeAttribute"));
        slice_build_result_free(&r);
    }

    /* Only the static GPU: nothing consumes counters, no field. */
    in = slice_fixture_input(&d[3], 3);
    in.partitions = in.partition_type = true;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    assert_int_equal(json_array_size(r.slices), 1);
    assert_null(json_object_get(json_object_get(json_array_get(r.slices, 0), "spec"),
                                "partitionTypeAttribute"));
    slice_build_result_free(&r);
}

/* The nvidia personality: engines in the capacities and counters, the
 * whole dynamic GPU with its partitions' largest values, no uuid on a
 * placement, memorySlice<i> on a static instance, NVIDIA's attributes. */
static void set_engines(struct fakehw_device *p, long sm, long ce, long dec)
{
    p->multiprocessors = sm;
    p->copy_engines = ce;
    p->decoders = dec;
    p->mig_profile_id = 9;
}

/* A GPU bound to vfio-pci: in the nvidia personality a VFIO device with
 * addressableMemory and no memory; the fakehw personality publishes it as
 * any GPU. */
static void test_vfio_device(void **state)
{
    (void)state;
    struct fakehw_device d[2] = {gpu(0), gpu(1)};
    d[1].vfio = true;
    snprintf(d[1].name, sizeof(d[1].name), "gpu-vfio-1");
    snprintf(d[1].pci_device_id, sizeof(d[1].pci_device_id), "0x2330");
    struct slice_build_input in = slice_fixture_input(d, 2);
    in.personality = PERSONALITY_NVIDIA;
    struct slice_build_result r;
    struct error err;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    const json_t *gpu0 = json_array_get(devices_of(json_array_get(r.slices, 0)), 0);
    const json_t *vfio = json_array_get(devices_of(json_array_get(r.slices, 0)), 1);
    assert_string_equal(s_at(gpu0, "attributes", "type", "string"), "gpu");
    assert_string_equal(s_at(gpu0, "capacity", "memory", "value"), "81559Mi");
    assert_string_equal(s_at(vfio, "name", NULL, NULL), "gpu-vfio-1");
    assert_string_equal(s_at(vfio, "attributes", "type", "string"), "vfio");
    assert_string_equal(s_at(vfio, "attributes", "deviceID", "string"), "0x2330");
    const json_t *cap = json_object_get(vfio, "capacity");
    assert_int_equal(json_object_size(cap), 1);
    assert_string_equal(s_at(cap, "addressableMemory", "value", NULL), "256Gi");
    slice_build_result_free(&r);

    in.personality = PERSONALITY_FAKEHW;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    vfio = json_array_get(devices_of(json_array_get(r.slices, 0)), 1);
    assert_string_equal(s_at(vfio, "capacity", "memory", "value"), "81559Mi");
    assert_null(json_object_get(json_object_get(vfio, "attributes"), "vendorID"));
    assert_string_equal(s_at(vfio, "attributes", "uuid", "string"), d[1].uuid);
    slice_build_result_free(&r);
}

static void test_nvidia_capacities_and_counters(void **state)
{
    (void)state;
    struct fakehw_device d[6];
    size_t n = mig_gpu(d, 0, FAKEHW_MIG_DYNAMIC, 2);
    n += mig_gpu(&d[n], 1, FAKEHW_MIG_STATIC, 2);
    for (size_t k = 0; k < n; k++)
        if (d[k].parent[0])
            set_engines(&d[k], 48, 3, 2);
    d[1].multiprocessors = 60; /* gpu-0-mig-3g40gb-0: the largest of gpu-0's */
    struct slice_build_input in = slice_fixture_input(d, n);
    in.partitions = true;
    in.personality = PERSONALITY_NVIDIA;
    struct slice_build_result r;
    struct error err;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    assert_int_equal(json_array_size(r.slices), 2);
    json_t *set = json_array_get(
        json_object_get(json_object_get(json_array_get(r.slices, 0), "spec"), "sharedCounters"), 0);
    json_t *c = json_object_get(set, "counters");
    /* memory, 6 engines, 8 memory slices; memory is the largest partition's. */
    assert_int_equal(json_object_size(c), 15);
    assert_string_equal(s_at(c, "memory", "value", NULL), "40Gi");
    assert_string_equal(s_at(c, "multiprocessors", "value", NULL), "60");
    assert_string_equal(s_at(c, "copy-engines", "value", NULL), "3");
    assert_string_equal(s_at(c, "jpeg-engines", "value", NULL), "0");
    assert_string_equal(s_at(c, "ofa-engines", "value", NULL), "0");
    assert_non_null(json_object_get(c, "memory-slice-7"));
    size_t i, seen = 0;
    json_t *dev;
    json_array_foreach(devices_of(json_array_get(r.slices, 1)), i, dev)
    {
        const char *name = s_at(dev, "name", NULL, NULL);
        json_t *cap = json_object_get(dev, "capacity");
        json_t *cc = json_object_get(json_array_get(json_object_get(dev, "consumesCounters"), 0),
                                     "counters");
        assert_string_equal(s_at(dev, "attributes", "brand", "string"), "Nvidia");
        assert_null(json_object_get(json_object_get(dev, "attributes"), "index"));
        if (!strcmp(name, "gpu-0")) { /* the whole dynamic GPU */
            seen++;
            assert_int_equal(json_object_size(cap), 7);
            assert_string_equal(s_at(cap, "multiprocessors", "value", NULL), "60");
            assert_string_equal(s_at(cap, "memory", "value", NULL), "40Gi");
            assert_string_equal(s_at(cap, "decoders", "value", NULL), "2");
            assert_int_equal(json_object_size(cc), 15);
            assert_string_equal(s_at(dev, "attributes", "uuid", "string"), d[0].uuid);
        } else if (!strcmp(name, "gpu-0-mig-3g40gb-4")) { /* a placement */
            seen++;
            assert_int_equal(json_object_size(cap), 7);
            assert_string_equal(s_at(cap, "multiprocessors", "value", NULL), "48");
            assert_null(json_object_get(cap, "memorySlice4"));
            assert_null(json_object_get(json_object_get(dev, "attributes"), "uuid"));
            assert_string_equal(s_at(dev, "attributes", "parentUUID", "string"), d[0].uuid);
            assert_int_equal(json_object_size(cc), 11); /* memory, 6 engines, 4 slices */
            assert_string_equal(s_at(cc, "multiprocessors", "value", NULL), "48");
            assert_non_null(json_object_get(cc, "memory-slice-4"));
        } else if (!strcmp(name, "gpu-1-mig-3g40gb-4")) { /* a static instance */
            seen++;
            assert_null(cc);
            assert_int_equal(json_object_size(cap), 11); /* memory, 6 engines, 4 slices */
            for (int k = 4; k < 8; k++) {
                char slice[16];
                snprintf(slice, sizeof(slice), "memorySlice%d", k);
                assert_string_equal(s_at(cap, slice, "value", NULL), "1");
            }
            assert_null(json_object_get(cap, "memorySlice3"));
            assert_string_equal(s_at(dev, "attributes", "uuid", "string"), d[5].uuid);
            assert_string_equal(s_at(dev, "attributes", "type", "string"), "mig");
        }
    }
    assert_int_equal(seen, 3);
    slice_build_result_free(&r);

    /* Engines not known (multiprocessors 0): memory only. */
    for (size_t k = 0; k < n; k++)
        d[k].multiprocessors = 0;
    assert_int_equal(slice_build(&in, &r, &err), 0);
    c = json_object_get(
        json_array_get(
            json_object_get(json_object_get(json_array_get(r.slices, 0), "spec"), "sharedCounters"),
            0),
        "counters");
    assert_int_equal(json_object_size(c), 9);
    json_array_foreach(devices_of(json_array_get(r.slices, 1)), i, dev)
        assert_null(json_object_get(json_object_get(dev, "capacity"), "multiprocessors"));
    slice_build_result_free(&r);
}

static struct slice_fingerprint fingerprint(const struct slice_build_input *in, bool ignore_taints)
{
    struct slice_layout l;
    struct error err;
    struct slice_fingerprint fp;
    assert_int_equal(slice_layout_make(in, &l, &err), 0);
    assert_int_equal(slice_fingerprint_make(in, &l, ignore_taints, &fp, &err), 0);
    slice_layout_free(&l);
    return fp;
}

static void test_fingerprint(void **state)
{
    (void)state;
    struct fakehw_device *d = gpus(200); /* two slices */
    struct slice_build_input in = slice_fixture_input(d, 200);
    const struct slice_fingerprint base = fingerprint(&in, false);
    assert_true(slice_fingerprint_equal(&base, &base));

    /* What the slices do not carry changes nothing. */
    snprintf(d[150].device_path, sizeof(d[150].device_path), "/dev/fakegpu150");
    d[150].health_since = 1732252380;
    d[150].attach_failure = FAKEHW_ATTACH_FAIL_ALWAYS;
    snprintf(d[150].health_reason, sizeof(d[150].health_reason), "a reason of a healthy device");
    struct slice_fingerprint same = fingerprint(&in, false);
    assert_true(slice_fingerprint_equal(&base, &same));

    /* A taint in the second slice, a published attribute, the owner, the
     * comparison flag: each makes another digest. */
    d[150].healthy = false;
    struct slice_fingerprint tainted = fingerprint(&in, false);
    assert_false(slice_fingerprint_equal(&base, &tainted));
    d[150].healthy = true;
    same = fingerprint(&in, false);
    assert_true(slice_fingerprint_equal(&base, &same));
    snprintf(d[3].product_name, sizeof(d[3].product_name), "NVIDIA H200");
    struct slice_fingerprint renamed = fingerprint(&in, false);
    assert_false(slice_fingerprint_equal(&base, &renamed));
    snprintf(d[3].product_name, sizeof(d[3].product_name), "NVIDIA H100 80GB HBM3");
    in.node_uid = "6f9ab1a2-0000-4000-8000-000000000002";
    struct slice_fingerprint owner = fingerprint(&in, false);
    assert_false(slice_fingerprint_equal(&base, &owner));
    in.node_uid = NODE_UID;
    struct slice_fingerprint ignoring = fingerprint(&in, true);
    assert_false(slice_fingerprint_equal(&base, &ignoring));
    free(d);
}

TEST_MAIN("driver/publish", test_names, test_partition_type_attribute,
          test_nvidia_capacities_and_counters, test_vfio_device, test_semver, test_device_validate,
          test_build_one_device, test_split_at_limits, test_build_empty_and_order,
          test_build_taints_and_policies, test_build_rejects_bad_device, test_generate_names,
          test_plan_first_publish_and_steady, test_plan_single_update_keeps_generation,
          test_plan_multi_slice_change_bumps, test_plan_recreates_deleted_slice,
          test_plan_removes_stale_and_foreign, test_plan_duplicate_index_and_owner,
          test_plan_dropped_taints_and_equivalents, test_plan_remove_policy, test_partitions_layout,
          test_fingerprint)
