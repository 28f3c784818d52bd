// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the shared device snapshot (driver/device/device_snapshot.h):
 * ownership of the device array, reference counting from one and from many
 * threads, lookups.  A snapshot freed too early shows up as a use after free
 * under ASan and valgrind; one never freed as a leak. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/device/device_snapshot.h"
#include "driver/device/tests/test_gpus.h"
#include "common/tests/test_main.h"

/* n GPUs, gpu-0 ... gpu-<n-1>, the odd ones unhealthy. */
static struct fakehw_device *devices(size_t n)
{
    struct fakehw_device *d = test_h100s(n);
    assert_non_null(d);
    for (size_t i = 0; i < n; i++)
        d[i].healthy = i % 2 == 0;
    return d;
}

static void test_new_takes_the_array(void **state)
{
    (void)state;
    struct error err;
    struct device_snapshot *s = device_snapshot_new(devices(3), 3, true, &err);
    assert_non_null(s);
    assert_int_equal(s->n, 3);
    assert_true(s->tree_up);
    assert_int_equal(device_snapshot_refs(s), 1);
    assert_string_equal(s->devs[2].name, "gpu-2");
    device_snapshot_put(s);

    /* No devices: an array handed over anyway is freed, devs is NULL. */
    s = device_snapshot_new(devices(1), 0, false, &err);
    assert_non_null(s);
    assert_null(s->devs);
    assert_false(s->tree_up);
    device_snapshot_put(s);
    s = device_snapshot_new(NULL, 0, true, &err);
    assert_non_null(s);
    device_snapshot_put(s);

    /* NULL is fine everywhere. */
    assert_null(device_snapshot_get(NULL));
    device_snapshot_put(NULL);
    assert_int_equal(device_snapshot_refs(NULL), 0);
    assert_null(device_snapshot_find(NULL, "gpu-0"));
}

static void test_get_put_keep_it_alive(void **state)
{
    (void)state;
    struct error err;
    struct device_snapshot *s = device_snapshot_new(devices(4), 4, true, &err);
    assert_ptr_equal(device_snapshot_get(s), s);
    assert_ptr_equal(device_snapshot_get(s), s);
    assert_int_equal(device_snapshot_refs(s), 3);
    device_snapshot_put(s); /* the maker lets go; two holders remain */
    assert_int_equal(device_snapshot_refs(s), 2);
    assert_string_equal(s->devs[3].name, "gpu-3"); /* still readable */
    device_snapshot_put(s);
    assert_int_equal(device_snapshot_refs(s), 1);
    assert_string_equal(s->devs[0].name, "gpu-0");
    device_snapshot_put(s); /* the last one frees it (a leak otherwise) */
}

static void test_find(void **state)
{
    (void)state;
    struct error err;
    struct device_snapshot *s = device_snapshot_new(devices(5), 5, true, &err);
    const struct fakehw_device *d = device_snapshot_find(s, "gpu-3");
    assert_non_null(d);
    assert_int_equal(d->index, 3);
    assert_ptr_equal(d, &s->devs[3]); /* a pointer into the snapshot, not a copy */
    assert_null(device_snapshot_find(s, "gpu-9"));
    device_snapshot_put(s);
}

#define THREADS 4
#define ROUNDS  200000

static void *churn(void *arg)
{
    struct device_snapshot *s = arg;
    for (int i = 0; i < ROUNDS; i++) {
        device_snapshot_get(s);
        if (s->devs[1].index != 1) /* read while holding a reference */
            return (void *)1;
        device_snapshot_put(s);
    }
    return NULL;
}

/* Many threads taking and dropping references at once: with a count that is
 * not atomic, increments get lost and the count ends wrong (or the snapshot
 * is freed under a holder). */
static void test_concurrent_references(void **state)
{
    (void)state;
    struct error err;
    struct device_snapshot *s = device_snapshot_new(devices(2), 2, true, &err);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn, s), 0);
    for (int i = 0; i < THREADS; i++) {
        void *bad;
        pthread_join(t[i], &bad);
        assert_null(bad);
    }
    assert_int_equal(device_snapshot_refs(s), 1);
    device_snapshot_put(s);
}

/* Reads a device of the snapshot arg and drops its reference; returns the
 * index it read. */
static void *last_holder(void *arg)
{
    struct device_snapshot *s = arg;
    intptr_t seen = s->devs[2].index;
    device_snapshot_put(s); /* the last reference goes on another thread */
    return (void *)seen;
}

static void test_last_put_on_another_thread(void **state)
{
    (void)state;
    struct error err;
    struct device_snapshot *s = device_snapshot_new(devices(3), 3, true, &err);
    device_snapshot_get(s); /* the thread's reference */
    device_snapshot_put(s); /* ours */
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, last_holder, s), 0);
    void *seen;
    pthread_join(t, &seen);
    assert_int_equal((intptr_t)seen, 2);
}

TEST_MAIN("driver/health device_snapshot", test_new_takes_the_array, test_get_put_keep_it_alive,
          test_find, test_concurrent_references, test_last_put_on_another_thread)
