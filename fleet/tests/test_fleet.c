// SPDX-License-Identifier: Apache-2.0
/* Unit tests of fleet/: a node's devices from its section of one config,
 * its flips reaching the listener, a pool's node read from its name, the
 * binder's devices (a pool to its node, attaches by fakehw's code in that
 * node alone, the one attach timer of many nodes), and the API server's
 * limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "attacher.h"
#include "fakehw_attach.h"
#include "fleet/fleet_bind.h"
#include "fleet/fleet_limits.h"
#include "fleet/fleet_node.h"
#include "fleet/fleet_pools.h"
#include "common/tests/test_main.h"

static char *slurp(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", FLEET_TEST_CONFIGS, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 16);
    assert_non_null(buf);
    *len = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    return buf;
}

static struct fleet_node *node_of(const char *file, const char *node)
{
    size_t len;
    char *text = slurp(file, &len);
    struct error err = {{0}};
    struct fleet_node *n = fleet_node_new(text, len, file, node, PERSONALITY_FAKEHW, &err);
    free(text);
    if (n == NULL)
        fail_msg("%s", err.msg);
    return n;
}

static void test_sections(void **state)
{
    (void)state;
    struct fleet_node *a = node_of("fleet-small.yaml", "fleet-node-0");
    struct fleet_node *b = node_of("fleet-small.yaml", "fleet-node-1");
    struct error err = {{0}};
    struct device_snapshot *sa = fleet_node_snapshot(a, &err);
    struct device_snapshot *sb = fleet_node_snapshot(b, &err);
    assert_non_null(sa);
    assert_non_null(sb);
    assert_int_equal(sa->n, 8);
    assert_int_equal(sb->n, 2);
    assert_non_null(strstr(sa->devs[0].product_name, "A100"));
    assert_non_null(strstr(sb->devs[0].product_name, "H100"));
    /* UUIDs are seeded by the node name: two nodes never share one. */
    assert_string_not_equal(sa->devs[0].uuid, sb->devs[0].uuid);
    assert_int_equal(fleet_node_flips(a), 0);
    assert_int_equal(fleet_node_flips(b), 1);
    device_snapshot_put(sa);
    device_snapshot_put(sb);
    fleet_node_free(a);
    fleet_node_free(b);
}

struct seen {
    int calls;
    bool unhealthy;
    char node[64];
};

static void on_flip(void *ctx, struct fleet_node *node, struct device_snapshot *snap)
{
    struct seen *s = ctx;
    s->calls++;
    snprintf(s->node, sizeof(s->node), "%s", fleet_node_name(node));
    const struct fakehw_device *d = device_snapshot_find(snap, "gpu-0");
    s->unhealthy = d != NULL && !d->healthy;
}

static void test_flips_reach_their_node(void **state)
{
    (void)state;
    struct fleet_node *a = node_of("fleet-small.yaml", "fleet-node-0");
    struct fleet_node *b = node_of("fleet-small.yaml", "fleet-node-1");
    struct seen sa = {0}, sb = {0};
    struct error err = {{0}};
    assert_int_equal(fleet_node_start_flips(a, on_flip, &sa, &err), 0);
    assert_int_equal(fleet_node_start_flips(b, on_flip, &sb, &err), 0);
    for (int i = 0; i < 300 && sb.calls == 0; i++)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    assert_int_equal(sb.calls, 1);
    assert_true(sb.unhealthy);
    assert_string_equal(sb.node, "fleet-node-1");
    assert_int_equal(sa.calls, 0);
    fleet_node_free(a);
    fleet_node_free(b);
}

#define NODES 3

static void attach_nodes(struct fleet_node **nodes)
{
    char name[32];
    for (int i = 0; i < NODES; i++) {
        snprintf(name, sizeof(name), "fleet-node-%d", i);
        nodes[i] = node_of("fleet-attach.yaml", name);
    }
}

static enum fakehw_attach attach_of(struct fleet_node *n, const char *device)
{
    enum fakehw_attach st;
    struct error err = {{0}};
    if (fleet_node_attach_state(n, device, &st, &err) < 0)
        fail_msg("%s", err.msg);
    return st;
}

struct engaged {
    int n;
    char seen[8][64];
};

static void note_engaged(void *ctx, const char *pool, const char *device, enum fakehw_attach state)
{
    struct engaged *e = ctx;
    if (e->n < 8)
        snprintf(e->seen[e->n++], sizeof(e->seen[0]), "%s/%s %s", pool, device,
                 fakehw_attach_name(state));
}

static void test_bind_pools(void **state)
{
    (void)state;
    struct fleet_node *nodes[NODES];
    attach_nodes(nodes);
    struct fleet_bind *fb = fleet_bind_new("fleet-node-", nodes, NODES);
    assert_non_null(fb);
    assert_ptr_equal(fleet_bind_node(fb, "fleet-node-0"), nodes[0]);
    assert_ptr_equal(fleet_bind_node(fb, "fleet-node-2"), nodes[2]);
    const char *others[] = {"fleet-node-3",
                            "fleet-node-01",
                            "fleet-node-",
                            "fleet-node-1x",
                            "other-node",
                            "fleet-node--1",
                            ""};
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
        if (fleet_bind_node(fb, others[i]) != NULL)
            fail_msg("pool \"%s\" names a node", others[i]);
    struct binder_devices dev;
    fleet_bind_devices(fb, &dev);
    assert_true(dev.serves(dev.ctx, "fleet-node-1"));
    assert_false(dev.serves(dev.ctx, "other-node"));
    enum fakehw_attach st;
    assert_int_equal(dev.read_attach(dev.ctx, "fleet-node-1", "gpu-0", &st), 0);
    assert_int_equal(st, FAKEHW_ATTACH_NONE);
    assert_int_equal(dev.read_attach(dev.ctx, "fleet-node-1", "gpu-9", &st), -1);
    assert_int_equal(dev.write_attach(dev.ctx, "other-node", "gpu-2", "attach"), -1);

    /* gpu-2's first attach is scripted to fail, on its node alone. */
    assert_int_equal(dev.write_attach(dev.ctx, "fleet-node-2", "gpu-2", "attach"), 0);
    assert_int_equal(attach_of(nodes[2], "gpu-2"), FAKEHW_ATTACH_FAILED);
    for (int i = 0; i < 2; i++)
        assert_int_equal(attach_of(nodes[i], "gpu-2"), FAKEHW_ATTACH_DETACHED);
    assert_int_equal(fleet_bind_engaged_nodes(fb), 1);
    struct engaged e = {0};
    dev.each_engaged(dev.ctx, note_engaged, &e);
    assert_int_equal(e.n, 1);
    assert_string_equal(e.seen[0], "fleet-node-2/gpu-2 failed");

    /* Detached again: the next pass drops the node from the list. */
    assert_int_equal(dev.write_attach(dev.ctx, "fleet-node-2", "gpu-2", "detach"), 0);
    assert_int_equal(attach_of(nodes[2], "gpu-2"), FAKEHW_ATTACH_DETACHED);
    e.n = 0;
    dev.each_engaged(dev.ctx, note_engaged, &e);
    assert_int_equal(e.n, 0);
    assert_int_equal(fleet_bind_engaged_nodes(fb), 0);
    /* The scripted failure was for the first attach only. */
    assert_int_equal(dev.write_attach(dev.ctx, "fleet-node-2", "gpu-2", "attach"), 0);
    assert_int_equal(attach_of(nodes[2], "gpu-2"), FAKEHW_ATTACH_ATTACHED);

    fleet_bind_free(fb);
    for (int i = 0; i < NODES; i++)
        fleet_node_free(nodes[i]);
}

/* A pool's index from its name (prefix + index), for the binder and the
 * slice watch alike; the node's own name has the last word. */
static void test_pool_index(void **state)
{
    (void)state;
    struct fleet_node *nodes[2] = {node_of("fleet-small.yaml", "n10"),
                                   node_of("fleet-small.yaml", "n11")};
    assert_int_equal(fleet_pool_index("n1", nodes, 2, "n10"), 0);
    assert_int_equal(fleet_pool_index("n1", nodes, 2, "n11"), 1);
    const char *others[] = {"n12", "n1", "n100", "n1-1", "n1+1", "m10", ""};
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
        if (fleet_pool_index("n1", nodes, 2, others[i]) != -1)
            fail_msg("pool \"%s\" names a node", others[i]);
    /* Index 0 under prefix "n", but node 0 is n10. */
    assert_int_equal(fleet_pool_index("n", nodes, 2, "n0"), -1);
    for (int i = 0; i < 2; i++)
        fleet_node_free(nodes[i]);
}

/* One attach timer for every node ends a delayed attach on its node. */
static void test_attach_delay(void **state)
{
    (void)state;
    struct fleet_node *nodes[NODES];
    attach_nodes(nodes);
    struct live_inventory *invs[NODES];
    for (int i = 0; i < NODES; i++)
        invs[i] = fleet_node_inventory(nodes[i]);
    struct error err = {{0}};
    struct attacher *a = attacher_start_many(invs, NODES, &err);
    assert_non_null(a);
    assert_int_equal(fleet_node_write_attach(nodes[1], "gpu-1", "attach", &err), 0);
    assert_int_equal(fleet_node_write_attach(nodes[2], "gpu-1", "attach", &err), 0);
    assert_int_equal(attach_of(nodes[1], "gpu-1"), FAKEHW_ATTACH_ATTACHING);
    for (int i = 0; i < 300 && (attach_of(nodes[1], "gpu-1") != FAKEHW_ATTACH_ATTACHED ||
                                attach_of(nodes[2], "gpu-1") != FAKEHW_ATTACH_ATTACHED);
         i++)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    assert_int_equal(attach_of(nodes[1], "gpu-1"), FAKEHW_ATTACH_ATTACHED);
    assert_int_equal(attach_of(nodes[2], "gpu-1"), FAKEHW_ATTACH_ATTACHED);
    assert_int_equal(attach_of(nodes[0], "gpu-1"), FAKEHW_ATTACH_DETACHED);
    /* Long after the timer's first pass: only the write's wake ends it. */
    assert_int_equal(fleet_node_write_attach(nodes[1], "gpu-1", "detach", &err), 0);
    assert_int_equal(fleet_node_write_attach(nodes[1], "gpu-1", "attach", &err), 0);
    assert_int_equal(attach_of(nodes[1], "gpu-1"), FAKEHW_ATTACH_ATTACHING);
    for (int i = 0; i < 300 && attach_of(nodes[1], "gpu-1") != FAKEHW_ATTACH_ATTACHED; i++)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    assert_int_equal(attach_of(nodes[1], "gpu-1"), FAKEHW_ATTACH_ATTACHED);
    assert_int_equal(fleet_node_write_attach(nodes[0], "gpu-0", "attach", &err), -1);
    assert_non_null(strstr(err.msg, "node fleet-node-0: gpu-0"));
    attacher_stop(a);
    for (int i = 0; i < NODES; i++)
        fleet_node_free(nodes[i]);
}

static int check_node(const char *file, const char *node, struct error *err)
{
    struct fleet_node *n = node_of(file, node);
    struct device_snapshot *snap = fleet_node_snapshot(n, err);
    assert_non_null(snap);
    struct fleet_pool_check c = {.driver = "gpu.fakehw.example.com",
                                 .node = node,
                                 .personality = PERSONALITY_FAKEHW,
                                 .effect = TAINT_EFFECT_NO_SCHEDULE};
    int rc = fleet_check_pool(&c, snap, err);
    device_snapshot_put(snap);
    fleet_node_free(n);
    return rc;
}

static void test_pool_check(void **state)
{
    (void)state;
    struct error err = {{0}};
    assert_int_equal(check_node("fleet-small.yaml", "fleet-node-0", &err), 0);
    assert_int_equal(check_node("fleet-bad-attribute.yaml", "fleet-node-0", &err), 0);
    assert_int_equal(check_node("fleet-bad-attribute.yaml", "fleet-node-2", &err), -1);
    assert_non_null(strstr(err.msg, "node fleet-node-2: device gpu-0"));
    assert_non_null(strstr(err.msg, "64"));
}

/* A slice of n devices, each with the given numbers of taints,
 * consumptions and attributes, and sets counter sets. */
static json_t *slice_of(size_t n, size_t taints, size_t consumptions, size_t attrs, size_t sets)
{
    json_t *devs = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *d = json_pack("{s:s+}", "name", "gpu-", "x");
        json_t *t = json_array(), *cc = json_array(), *a = json_object();
        for (size_t k = 0; k < taints; k++)
            json_array_append_new(t, json_pack("{s:s}", "key", "k"));
        for (size_t k = 0; k < consumptions; k++)
            json_array_append_new(cc, json_pack("{s:s, s:{}}", "counterSet", "s", "counters"));
        for (size_t k = 0; k < attrs; k++) {
            char key[16];
            snprintf(key, sizeof(key), "a%zu", k);
            json_object_set_new(a, key, json_pack("{s:i}", "int", 1));
        }
        json_object_set_new(d, "taints", t);
        json_object_set_new(d, "consumesCounters", cc);
        json_object_set_new(d, "attributes", a);
        json_array_append_new(devs, d);
    }
    json_t *sc = json_array();
    for (size_t k = 0; k < sets; k++)
        json_array_append_new(sc, json_pack("{s:s, s:{}}", "name", "set", "counters"));
    json_t *spec = json_pack("{s:o}", "devices", devs);
    if (sets > 0)
        json_object_set_new(spec, "sharedCounters", sc);
    else
        json_decref(sc);
    return json_pack("{s:o}", "spec", spec);
}

static void expect_limit(json_t *slice, const char *limit)
{
    struct error err = {{0}};
    int rc = fleet_check_slice("fleet-node-7", 3, slice, &err);
    json_decref(slice);
    if (limit == NULL) {
        assert_int_equal(rc, 0);
        return;
    }
    assert_int_equal(rc, -1);
    if (strstr(err.msg, limit) == NULL ||
        strstr(err.msg, "node fleet-node-7: ResourceSlice 3") == NULL)
        fail_msg("\"%s\" does not name %s", err.msg, limit);
}

static void test_slice_limits(void **state)
{
    (void)state;
    expect_limit(slice_of(128, 0, 0, 32, 0), NULL);
    expect_limit(slice_of(129, 0, 0, 1, 0), "ResourceSliceMaxDevices");
    expect_limit(slice_of(64, 16, 2, 1, 0), NULL);
    expect_limit(slice_of(65, 1, 0, 1, 0), "ResourceSliceMaxDevicesWithAdvancedFeatures");
    expect_limit(slice_of(65, 0, 1, 1, 0), "ResourceSliceMaxDevicesWithAdvancedFeatures");
    expect_limit(slice_of(1, 17, 0, 1, 0), "DeviceTaintsMaxLength");
    expect_limit(slice_of(1, 0, 3, 1, 0), "ResourceSliceMaxDeviceCounterConsumptionsPerDevice");
    expect_limit(slice_of(1, 0, 0, 33, 0), "ResourceSliceMaxAttributesAndCapacitiesPerDevice");
    expect_limit(slice_of(0, 0, 0, 0, 8), NULL);
    expect_limit(slice_of(0, 0, 0, 0, 9), "ResourceSliceMaxCounterSets");
}

TEST_MAIN("fleet", test_sections, test_flips_reach_their_node, test_bind_pools, test_pool_index,
          test_attach_delay, test_pool_check, test_slice_limits)
