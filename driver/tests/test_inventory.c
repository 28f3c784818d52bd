// SPDX-License-Identifier: Apache-2.0
/* Tests of the plugin's inventory (driver/inventory.h) on a plain fakehw
 * tree: every listener gets the same shared snapshot (no copies), a change
 * or the tree going away makes a new snapshot and leaves the old one as it
 * was for whoever still holds it, references keep snapshots alive after
 * the inventory has moved on or stopped, a tree back within the grace
 * turns nothing unhealthy, and a stop does not wait past its deadline for
 * a thread whose read of the tree never ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "driver/inventory.h"
#include "retry.h"
#include "common/tests/test_main.h"
#include "common/tests/test_must.h"
#include "common/tests/tmp_dir.h"

#define N_DEVICES 3
#define KEPT_MAX  64
#define WAIT_MS   10000

static void put_file(const char *dir, const char *file, const char *value)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", value);
    assert_int_equal(fclose(f), 0);
}

static void make_device(const char *root, int i)
{
    char dir[PATH_MAX], v[128];
    snprintf(dir, sizeof(dir), "%s/" FAKEHW_DIR_DEVICES "/gpu-%d", root, i);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(v, sizeof(v), "gpu-%d", i);
    put_file(dir, FAKEHW_ATTR(NAME), v);
    snprintf(v, sizeof(v), "%d", i);
    put_file(dir, FAKEHW_ATTR(INDEX), v);
    put_file(dir, FAKEHW_ATTR(MINOR), v);
    snprintf(v, sizeof(v), "GPU-%08x-1111-2222-3333-444444444444", i);
    put_file(dir, FAKEHW_ATTR(UUID), v);
    put_file(dir, FAKEHW_ATTR(PRODUCT_NAME), "NVIDIA H100 80GB HBM3");
    put_file(dir, FAKEHW_ATTR(ARCHITECTURE), "Hopper");
    put_file(dir, FAKEHW_ATTR(BRAND), "NVIDIA");
    put_file(dir, FAKEHW_ATTR(MEMORY), "85520809984");
    put_file(dir, FAKEHW_ATTR(COMPUTE_CAPABILITY), "9.0");
    put_file(dir, FAKEHW_ATTR(DRIVER_VERSION), "580.95.05");
    put_file(dir, FAKEHW_ATTR(CUDA_DRIVER_VER), "13.0");
    snprintf(v, sizeof(v), "0000:%02x:00.0", 0x18 + i);
    put_file(dir, FAKEHW_ATTR(PCI_BUS_ID), v);
    put_file(dir, FAKEHW_ATTR(PCIE_ROOT), "pci0000:17");
    put_file(dir, FAKEHW_ATTR(NUMA_NODE), "0");
    put_file(dir, FAKEHW_ATTR(DEVICE_PATH), "");
    put_file(dir, FAKEHW_ATTR(HEALTH), FAKEHW_HEALTHY);
    put_file(dir, FAKEHW_ATTR(HEALTH_REASON), "");
    put_file(dir, FAKEHW_ATTR(HEALTH_SINCE), "1732252380");
}

/* A listener that keeps every snapshot it is lent (a reference each). */
struct keeper {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct device_snapshot *kept[KEPT_MAX];
    size_t n;
};

#define KEEPER_INIT                                                                                \
    {                                                                                              \
        .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER                        \
    }

static void keep(void *ctx, struct device_snapshot *snap)
{
    struct keeper *k = ctx;
    pthread_mutex_lock(&k->lock);
    if (k->n < KEPT_MAX)
        k->kept[k->n++] = device_snapshot_get(snap);
    pthread_cond_broadcast(&k->cond);
    pthread_mutex_unlock(&k->lock);
}

/* A listener that only looks: it must see the very same snapshot. */
struct peeker {
    struct device_snapshot *last; /* not a reference: only compared */
    size_t calls;
};

static void peek(void *ctx, struct device_snapshot *snap)
{
    struct peeker *p = ctx;
    p->last = snap;
    p->calls++;
}

typedef bool (*snap_pred)(const struct device_snapshot *s);

/* Waits until a kept snapshot after the first `after` satisfies pred. */
static struct device_snapshot *wait_for(struct keeper *k, size_t after, snap_pred pred)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += WAIT_MS / 1000;
    struct device_snapshot *found = NULL;
    pthread_mutex_lock(&k->lock);
    while (found == NULL) {
        for (size_t i = after; i < k->n && found == NULL; i++) {
            if (pred(k->kept[i]))
                found = k->kept[i];
        }
        if (found == NULL && pthread_cond_timedwait(&k->cond, &k->lock, &deadline) != 0)
            break;
    }
    pthread_mutex_unlock(&k->lock);
    if (found == NULL)
        fail_msg("no matching snapshot within %d ms", WAIT_MS);
    return found;
}

static bool gpu1_unhealthy(const struct device_snapshot *s)
{
    return s->tree_up && s->n == N_DEVICES && !s->devs[1].healthy;
}

static bool tree_gone(const struct device_snapshot *s)
{
    return !s->tree_up;
}

static bool tree_back(const struct device_snapshot *s)
{
    return s->tree_up && s->n == N_DEVICES;
}

/* A plain tree of N_DEVICES healthy devices in a new directory root: its
 * devices directory, and where move_away renames that. */
struct tree {
    char root[PATH_MAX], devices[PATH_MAX], moved[PATH_MAX];
};

static void make_tree(struct tree *t)
{
    assert_true(tmp_dir_make(t->root, sizeof(t->root), "test-inventory"));
    snprintf(t->devices, sizeof(t->devices), "%s/" FAKEHW_DIR_DEVICES, t->root);
    snprintf(t->moved, sizeof(t->moved), "%s/devices-away", t->root);
    assert_int_equal(mkdir(t->devices, 0755), 0);
    put_file(t->root, FAKEHW_FILE_NODE, "node-1");
    put_file(t->root, FAKEHW_FILE_GENERATION, "1");
    for (int i = 0; i < N_DEVICES; i++)
        make_device(t->root, i);
}

/* The devices directory renamed away (the tree is gone), and back. */
static void move_away(const struct tree *t)
{
    assert_int_equal(rename(t->devices, t->moved), 0);
}

static void move_back(const struct tree *t)
{
    assert_int_equal(rename(t->moved, t->devices), 0);
}

static void remove_tree(const struct tree *t)
{
    assert_int_equal(tmp_dir_remove(t->root), 0);
}

static size_t kept_count(struct keeper *k)
{
    pthread_mutex_lock(&k->lock);
    size_t n = k->n;
    pthread_mutex_unlock(&k->lock);
    return n;
}

/* Lets go of every snapshot k kept (the inventory must be stopped). */
static void keeper_release(struct keeper *k)
{
    pthread_mutex_lock(&k->lock);
    for (size_t i = 0; i < k->n; i++)
        device_snapshot_put(k->kept[i]);
    pthread_mutex_unlock(&k->lock);
    pthread_cond_destroy(&k->cond);
    pthread_mutex_destroy(&k->lock);
}

/* An inventory of opts whose one listener is k. */
/* An inventory on opts that tells listeners[0..n), which must start. */
static struct tree_inventory *start(const struct inventory_options *opts,
                                    const struct inventory_listener *listeners, size_t n)
{
    struct error err;
    return MUST(inventory_start(opts, listeners, n, &err), err);
}

static struct tree_inventory *start_keeping(const struct inventory_options *opts, struct keeper *k)
{
    struct inventory_listener l = {keep, k};
    return start(opts, &l, 1);
}

static void test_shared_immutable_snapshots(void **state)
{
    (void)state;
    struct tree t;
    make_tree(&t);

    struct keeper k = KEEPER_INIT;
    struct peeker pk = {0};
    struct inventory_listener listeners[] = {{keep, &k}, {peek, &pk}};
    struct inventory_options opts = {.root = t.root, .retry_ms = 50};
    struct tree_inventory *inv = start(&opts, listeners, 2);

    /* The first snapshot: one object for everyone. */
    pthread_mutex_lock(&k.lock);
    assert_int_equal(k.n, 1);
    struct device_snapshot *s0 = k.kept[0];
    pthread_mutex_unlock(&k.lock);
    assert_ptr_equal(pk.last, s0);
    assert_int_equal(s0->n, N_DEVICES);
    assert_true(s0->tree_up);
    assert_true(s0->devs[1].healthy);
    struct device_snapshot *cur = inventory_current(inv);
    assert_ptr_equal(cur, s0);
    device_snapshot_put(cur);

    /* The prepare path's lookups copy one device. */
    struct fakehw_device one;
    struct error err;
    assert_int_equal(inventory_lookup(inv, "gpu-2", &one, &err), 0);
    assert_string_equal(one.uuid, "GPU-00000002-1111-2222-3333-444444444444");
    assert_int_equal(inventory_lookup(inv, "gpu-7", &one, &err), -1);
    assert_non_null(strstr(err.msg, "device gpu-7 is not in the fakehw tree"));

    /* A flip makes a new snapshot; the old one does not change, and only its
     * holders keep it (the inventory let go). */
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/gpu-1", t.devices);
    put_file(dir, FAKEHW_ATTR(HEALTH_REASON), "XID 79");
    put_file(dir, FAKEHW_ATTR(HEALTH), FAKEHW_UNHEALTHY);
    struct device_snapshot *s1 = wait_for(&k, 1, gpu1_unhealthy);
    assert_true(s1 != s0);
    assert_true(s0->devs[1].healthy);
    assert_string_equal(s0->devs[1].health_reason, "");
    assert_string_equal(s1->devs[1].health_reason, "XID 79");
    assert_int_equal(device_snapshot_refs(s0), 1);
    assert_false(inventory_lookup(inv, "gpu-1", &one, &err) < 0 || one.healthy);

    /* The tree goes away: a new snapshot marks everything unhealthy; the
     * one before it is untouched. */
    pthread_mutex_lock(&k.lock);
    size_t before_gone = k.n;
    struct device_snapshot *last_up = k.kept[k.n - 1];
    pthread_mutex_unlock(&k.lock);
    move_away(&t);
    struct device_snapshot *sg = wait_for(&k, before_gone, tree_gone);
    assert_int_equal(sg->n, N_DEVICES);
    for (size_t i = 0; i < sg->n; i++) {
        assert_false(sg->devs[i].healthy);
        assert_non_null(strstr(sg->devs[i].health_reason, "fakehw is not serving"));
    }
    assert_true(last_up->tree_up);
    assert_true(last_up->devs[0].healthy);
    assert_string_equal(last_up->devs[0].health_reason, "");
    assert_false(inventory_tree_up(inv));

    /* And comes back. */
    pthread_mutex_lock(&k.lock);
    size_t before_back = k.n;
    pthread_mutex_unlock(&k.lock);
    move_back(&t);
    struct device_snapshot *sb = wait_for(&k, before_back, tree_back);
    assert_true(sb->devs[0].healthy);
    assert_false(sb->devs[1].healthy);
    assert_true(inventory_tree_up(inv));

    /* Every snapshot the keeper holds outlives the inventory. */
    inventory_stop(inv);
    pthread_mutex_lock(&k.lock);
    for (size_t i = 0; i < k.n; i++) {
        assert_int_equal(device_snapshot_refs(k.kept[i]), 1);
        assert_string_equal(k.kept[i]->devs[0].name, "gpu-0");
    }
    pthread_mutex_unlock(&k.lock);
    assert_true(pk.calls >= 4);
    keeper_release(&k);
    remove_tree(&t);
}

static long long elapsed_ms(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000LL + (now.tv_nsec - since->tv_nsec) / 1000000;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

#define GRACE_MS 1000

/* With a grace, a tree back in time only makes a reload (every snapshot
 * says up and healthy); one gone for longer turns the devices unhealthy
 * after the grace, not before; a stop during the grace is prompt. */
static void test_gone_grace(void **state)
{
    (void)state;
    struct tree t;
    make_tree(&t);
    struct keeper k = KEEPER_INIT;
    struct inventory_options opts = {.root = t.root, .retry_ms = 50, .gone_grace_ms = GRACE_MS};
    struct tree_inventory *inv = start_keeping(&opts, &k);

    /* Gone for 300 ms: a reload when it is back, nothing unhealthy. */
    size_t before = kept_count(&k);
    move_away(&t);
    sleep_ms(300);
    assert_true(inventory_tree_up(inv));
    assert_int_equal(kept_count(&k), before);
    move_back(&t);
    wait_for(&k, before, tree_back);
    pthread_mutex_lock(&k.lock);
    for (size_t i = 0; i < k.n; i++) {
        assert_true(k.kept[i]->tree_up);
        assert_true(k.kept[i]->devs[0].healthy);
    }
    pthread_mutex_unlock(&k.lock);

    /* Gone for good: unhealthy once the grace has passed. */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    before = kept_count(&k);
    move_away(&t);
    struct device_snapshot *sg = wait_for(&k, before, tree_gone);
    assert_true(elapsed_ms(&t0) >= GRACE_MS);
    assert_false(sg->devs[0].healthy);
    assert_non_null(strstr(sg->devs[0].health_reason, "fakehw is not serving"));

    /* Back, gone again, and stopped within the grace: no waiting it out. */
    before = kept_count(&k);
    move_back(&t);
    wait_for(&k, before, tree_back);
    move_away(&t);
    sleep_ms(200);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    inventory_stop(inv);
    assert_true(elapsed_ms(&t0) < GRACE_MS / 2);

    keeper_release(&k);
    remove_tree(&t);
}

/* No tree yet: the listeners still get a snapshot (empty, tree down). */
static void test_tree_missing_at_start(void **state)
{
    (void)state;
    char root[] = "/tmp/test-inventory-XXXXXX";
    assert_non_null(mkdtemp(root));
    struct keeper k = KEEPER_INIT;
    struct inventory_options opts = {.root = root, .retry_ms = 50};
    struct tree_inventory *inv = start_keeping(&opts, &k);
    pthread_mutex_lock(&k.lock);
    assert_int_equal(k.n, 1);
    assert_int_equal(k.kept[0]->n, 0);
    assert_false(k.kept[0]->tree_up);
    pthread_mutex_unlock(&k.lock);
    assert_false(inventory_tree_up(inv));
    inventory_stop(inv);
    keeper_release(&k);
    rmdir(root);
}

/* The threads of this process, from /proc/self/status. */
static int threads_now(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    assert_non_null(f);
    char line[256];
    int n = -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    fclose(f);
    return n;
}

/* A read of the tree that never ends, as from a FUSE mount whose fakehw is
 * stopped (here the snapshot file is a FIFO: its reader waits for a
 * writer, then for data): the stop leaves the thread behind at its
 * deadline, no listener runs after it, and the thread frees the inventory
 * itself once its read ends. */
static void test_stop_leaves_a_stuck_reader_behind(void **state)
{
    (void)state;
    struct tree t;
    char fifo[PATH_MAX], dir[PATH_MAX];
    make_tree(&t);
    int threads_before = threads_now();
    struct keeper k = KEEPER_INIT;
    struct inventory_options opts = {.root = t.root, .retry_ms = 50};
    struct tree_inventory *inv = start_keeping(&opts, &k);

    snprintf(fifo, sizeof(fifo), "%s/" FAKEHW_FILE_SNAPSHOT, t.root);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    snprintf(dir, sizeof(dir), "%s/gpu-1", t.devices);
    put_file(dir, FAKEHW_ATTR(HEALTH), FAKEHW_UNHEALTHY);
    /* A writer can open the FIFO without blocking once the reader waits in
     * its open; then the reader waits in read(2) for as long as it stays. */
    int w = -1;
    long long give_up = monotonic_ms() + WAIT_MS;
    while ((w = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0 && errno == ENXIO &&
           monotonic_ms() < give_up)
        sleep_ms(10);
    assert_true(w >= 0);
    size_t seen = kept_count(&k);

    assert_int_equal(inventory_stop_by(inv, monotonic_ms() + 200), -1);
    close(w); /* the read ends (an empty snapshot: an error), then the thread */
    give_up = monotonic_ms() + WAIT_MS;
    while (threads_now() > threads_before && monotonic_ms() < give_up)
        sleep_ms(10);
    assert_int_equal(threads_now(), threads_before);
    assert_int_equal(kept_count(&k), seen);

    keeper_release(&k);
    remove_tree(&t);
}

TEST_MAIN("driver inventory", test_shared_immutable_snapshots, test_tree_missing_at_start,
          test_gone_grace, test_stop_leaves_a_stuck_reader_behind)
