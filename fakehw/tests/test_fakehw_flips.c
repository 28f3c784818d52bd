// SPDX-License-Identifier: Apache-2.0
/* Unit tests for flip scheduling: the plan, and the scheduler thread
 * applying it to an inventory (timing bounds are generous on purpose). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flips.h"
#include "log.h"
#include "common/tests/test_main.h"

static struct flip make_flip(const char *device, int64_t after, bool healthy, int64_t for_ms,
                             const char *reason)
{
    struct flip f;
    memset(&f, 0, sizeof(f));
    snprintf(f.device, sizeof(f.device), "%s", device);
    f.after_ms = after;
    f.has_state = true;
    f.healthy = healthy;
    f.for_ms = for_ms;
    snprintf(f.reason, sizeof(f.reason), "%s", reason);
    return f;
}

/* The events flips_plan makes of flips; there must be want of them. */
static struct flip_event *plan(const struct flip *flips, size_t nflips, size_t want)
{
    struct flip_event *ev;
    size_t n;
    struct error err;
    if (flips_plan(flips, nflips, &ev, &n, &err) != 0)
        fail_msg("flips_plan: %s", err.msg);
    if (n != want)
        fail_msg("flips_plan: %zu events, not %zu", n, want);
    return ev;
}

static void test_plan(void **state)
{
    (void)state;
    struct flip flips[] = {
        make_flip("gpu-1", 30000, false, 60000, "XID 79"),
        make_flip("all", 10000, false, 0, "maintenance"),
        make_flip("gpu-0", 90000, false, 0, "same time as gpu-1's return"),
        make_flip("gpu-2", 0, true, 5000, "repaired"),
    };
    struct flip_event *ev = plan(flips, 4, 6);
    const struct {
        int64_t at;
        const char *device;
        bool healthy;
        const char *reason;
    } want[] = {
        {0, "gpu-2", true, "repaired"},
        {5000, "gpu-2", false, ""}, /* back to the other state, reason cleared */
        {10000, "all", false, "maintenance"},
        {30000, "gpu-1", false, "XID 79"},
        {90000, "gpu-1", true, ""}, /* ties keep config order */
        {90000, "gpu-0", false, "same time as gpu-1's return"},
    };
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(ev[i].at_ms, want[i].at);
        assert_string_equal(ev[i].device, want[i].device);
        assert_int_equal(ev[i].healthy, want[i].healthy);
        assert_string_equal(ev[i].reason, want[i].reason);
    }
    free(ev);
    free(plan(NULL, 0, 0));
}

/* XID flips: reported at after, cleared after + for; a flip with a state
 * and an XID changes both, one without a state leaves health alone. */
static void test_plan_xid(void **state)
{
    (void)state;
    struct flip flips[] = {
        make_flip("gpu-1", 1000, false, 0, ""),
        make_flip("gpu-0", 2000, false, 3000, "XID 79"),
    };
    flips[0].has_state = false;
    flips[0].xid = 43;
    flips[1].xid = 79;
    struct flip_event *ev = plan(flips, 2, 3);
    const struct {
        int64_t at;
        const char *device;
        bool has_state, healthy;
        long xid;
    } want[] = {
        {1000, "gpu-1", false, false, 43},
        {2000, "gpu-0", true, false, 79},
        {5000, "gpu-0", true, true, 0},
    };
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(ev[i].at_ms, want[i].at);
        assert_string_equal(ev[i].device, want[i].device);
        assert_int_equal(ev[i].has_state, want[i].has_state);
        if (want[i].has_state)
            assert_int_equal(ev[i].healthy, want[i].healthy);
        assert_int_equal(ev[i].xid, want[i].xid);
    }
    free(ev);
    /* A health flip leaves the XID as it is. */
    struct flip plain = make_flip("gpu-2", 0, false, 100, "");
    ev = plan(&plain, 1, 2);
    assert_int_equal(ev[0].xid, FLIP_XID_KEEP);
    assert_int_equal(ev[1].xid, FLIP_XID_KEEP);
    free(ev);
}

static struct live_inventory *two_gpus(void)
{
    struct gpu_device d[2];
    memset(d, 0, sizeof(d));
    for (int i = 0; i < 2; i++) {
        snprintf(d[i].name, sizeof(d[i].name), "gpu-%d", i);
        d[i].index = d[i].minor = i;
        d[i].healthy = true;
    }
    struct error err;
    struct live_inventory *inv = inventory_new("n", "", d, 2, &err);
    assert_non_null(inv);
    return inv;
}

static void read_health(struct live_inventory *inv, const char *dev, char *buf, size_t size)
{
    size_t len;
    int64_t mtime;
    uint64_t gen;
    struct error err;
    assert_int_equal(inventory_read_file(inv, dev, "health", buf, size, &len, &mtime, &gen, &err),
                     0);
}

/* Records each state gpu-0 goes through, with the time since start. */
struct recorder {
    struct live_inventory *inv;
    struct timespec start;
    int nstates;
    char states[8][16];
    int64_t at_ms[8];
};

static int64_t elapsed_ms(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

static void record(void *ctx, uint64_t generation)
{
    (void)generation;
    struct recorder *r = ctx;
    if (r->nstates < 8) {
        read_health(r->inv, "gpu-0", r->states[r->nstates], sizeof(r->states[0]));
        r->at_ms[r->nstates] = elapsed_ms(&r->start);
        r->nstates++;
    }
}

static void wait_applied(struct flip_scheduler *s, size_t n)
{
    for (int i = 0; i < 1000 && flip_scheduler_applied(s) < n; i++) {
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(flip_scheduler_applied(s), n);
}

static void test_scheduler_flips_and_returns(void **state)
{
    (void)state;
    struct recorder r = {0};
    r.inv = two_gpus();
    inventory_set_listener(r.inv, record, &r);
    clock_gettime(CLOCK_MONOTONIC, &r.start);
    struct flip flips[] = {make_flip("gpu-0", 50, false, 100, "XID 79")};
    struct error err;
    struct flip_scheduler *s = flip_scheduler_start(r.inv, flips, 1, &err);
    assert_non_null(s);
    wait_applied(s, 2);
    flip_scheduler_stop(s);
    assert_int_equal(r.nstates, 2);
    assert_string_equal(r.states[0], "unhealthy\n");
    assert_string_equal(r.states[1], "healthy\n");
    /* Never early; late only by scheduling noise (bounded loosely). */
    assert_true(r.at_ms[0] >= 50 && r.at_ms[0] < 5000);
    assert_true(r.at_ms[1] >= 150 && r.at_ms[1] < 10000);
    assert_int_equal(inventory_generation(r.inv), 3);
    inventory_free(r.inv);
}

static void test_scheduler_all_and_unknown(void **state)
{
    (void)state;
    struct live_inventory *inv = two_gpus();
    int saved = log_verbosity;
    struct flip flips[] = {
        make_flip("all", 0, false, 0, "maintenance"),
        make_flip("gpu-9", 0, false, 0, "device went away in a reload"),
    };
    struct error err;
    struct flip_scheduler *s = flip_scheduler_start(inv, flips, 2, &err);
    assert_non_null(s);
    wait_applied(s, 2); /* the unknown device is logged, not fatal */
    flip_scheduler_stop(s);
    log_verbosity = saved;
    char buf[32];
    read_health(inv, "gpu-1", buf, sizeof(buf));
    assert_string_equal(buf, "unhealthy\n");
    assert_int_equal(inventory_generation(inv), 2);
    inventory_free(inv);
}

static void read_file(struct live_inventory *inv, const char *dev, const char *file, char *buf,
                      size_t size)
{
    size_t len;
    int64_t mtime;
    uint64_t gen;
    struct error err;
    assert_int_equal(inventory_read_file(inv, dev, file, buf, size, &len, &mtime, &gen, &err), 0);
}

/* Records each value gpu-1's xid goes through. */
struct xid_recorder {
    struct live_inventory *inv;
    int n;
    char values[4][16];
};

static void record_xid(void *ctx, uint64_t generation)
{
    (void)generation;
    struct xid_recorder *r = ctx;
    if (r->n < 4)
        read_file(r->inv, "gpu-1", "xid", r->values[r->n++], sizeof(r->values[0]));
}

/* An XID flip with `for`: reported, then cleared; health stays healthy. */
static void test_scheduler_xid(void **state)
{
    (void)state;
    struct live_inventory *inv = two_gpus();
    struct flip f = make_flip("gpu-1", 0, true, 50, "");
    f.has_state = false;
    f.xid = 79;
    struct xid_recorder r = {.inv = inv};
    inventory_set_listener(inv, record_xid, &r);
    struct error err;
    struct flip_scheduler *s = flip_scheduler_start(inv, &f, 1, &err);
    assert_non_null(s);
    wait_applied(s, 2);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.values[0], "79\n");
    assert_string_equal(r.values[1], "0\n");
    char buf[32];
    flip_scheduler_stop(s);
    read_file(inv, "gpu-1", "xid", buf, sizeof(buf));
    assert_string_equal(buf, "0\n");
    read_health(inv, "gpu-1", buf, sizeof(buf));
    assert_string_equal(buf, "healthy\n");
    assert_int_equal(inventory_generation(inv), 3);
    inventory_free(inv);
}

static void test_scheduler_replace_and_stop(void **state)
{
    (void)state;
    struct live_inventory *inv = two_gpus();
    struct flip later[] = {make_flip("gpu-1", 3600000, false, 0, "an hour away")};
    struct error err;
    struct flip_scheduler *s = flip_scheduler_start(inv, later, 1, &err);
    assert_non_null(s);
    /* A reload drops the pending hour-away flip and counts from now. */
    struct flip now[] = {make_flip("gpu-0", 0, false, 0, "reloaded")};
    assert_int_equal(flip_scheduler_replace(s, now, 1, &err), 0);
    wait_applied(s, 1);
    char buf[32];
    read_health(inv, "gpu-0", buf, sizeof(buf));
    assert_string_equal(buf, "unhealthy\n");
    read_health(inv, "gpu-1", buf, sizeof(buf));
    assert_string_equal(buf, "healthy\n");
    /* Stopping with an event pending an hour away returns at once. */
    assert_int_equal(flip_scheduler_replace(s, later, 1, &err), 0);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    flip_scheduler_stop(s);
    assert_true(elapsed_ms(&start) < 5000);
    flip_scheduler_stop(NULL);
    inventory_free(inv);
}

TEST_MAIN("fakehw flips", test_plan, test_plan_xid, test_scheduler_xid,
          test_scheduler_flips_and_returns, test_scheduler_all_and_unknown,
          test_scheduler_replace_and_stop)
