// SPDX-License-Identifier: Apache-2.0
/* Unit tests of the sync gate (sync_gate.h): never more holders than
 * slots, slots handed out in the order they were asked for, a waiter that
 * gives up when its flag is set and it is woken, and no limit without a
 * gate.  Every wait has a deadline: a broken gate fails, it does not hang. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "driver/publish/sync_gate.h"
#include "monotonic.h"
#include "retry.h"

#define DEADLINE_MS 5000

/* One thread that asks for a slot, holds it hold_ms and gives it back. */
struct asker {
    struct sync_gate *g;
    atomic_bool abort;
    int id;
    long hold_ms;
    atomic_int result; /* -1 while waiting, then 0 (gave up) or 1 (held) */
    atomic_int *order; /* ids in the order they got a slot */
    atomic_int *next;
};

static void *ask(void *arg)
{
    struct asker *a = arg;
    bool held = sync_gate_enter(a->g, &a->abort);
    if (held) {
        if (a->order != NULL)
            a->order[atomic_fetch_add(a->next, 1)] = a->id;
        retry_sleep_ms(a->hold_ms);
        sync_gate_leave(a->g);
    }
    atomic_store(&a->result, held ? 1 : 0);
    return NULL;
}

/* Waits until cond(ctx) holds, failing the test after DEADLINE_MS. */
static void wait_until(bool (*cond)(void *ctx), void *ctx, const char *what)
{
    long long deadline = monotonic_ms() + DEADLINE_MS;
    while (!cond(ctx)) {
        if (monotonic_ms() > deadline)
            fail_msg("still not %s after %d ms", what, DEADLINE_MS);
        retry_sleep_ms(2);
    }
}

struct count {
    struct sync_gate *g;
    unsigned n;
};

static bool waiting_is(void *ctx)
{
    struct count *c = ctx;
    return sync_gate_waiting(c->g) == c->n;
}

static bool done(void *ctx)
{
    return atomic_load(&((struct asker *)ctx)->result) >= 0;
}

static void start(pthread_t *t, struct asker *a, struct sync_gate *g, int id)
{
    a->g = g;
    a->id = id;
    atomic_init(&a->abort, false);
    atomic_init(&a->result, -1);
    assert_int_equal(pthread_create(t, NULL, ask, a), 0);
}

/* Three threads queue behind a held slot: they get it first come, first
 * served, one after the other. */
static void test_first_come_first_served(void **state)
{
    (void)state;
    struct sync_gate *g = sync_gate_new(1);
    assert_non_null(g);
    assert_true(sync_gate_enter(g, NULL));
    atomic_int order[3] = {-1, -1, -1};
    atomic_int next = 0;
    pthread_t t[3];
    struct asker a[3] = {{0}};
    for (int i = 0; i < 3; i++) {
        a[i].order = order;
        a[i].next = &next;
        a[i].hold_ms = 5;
        start(&t[i], &a[i], g, i);
        struct count c = {g, (unsigned)i + 1};
        wait_until(waiting_is, &c, "queued");
    }
    sync_gate_leave(g);
    for (int i = 0; i < 3; i++) {
        wait_until(done, &a[i], "served");
        pthread_join(t[i], NULL);
        assert_int_equal(atomic_load(&a[i].result), 1);
    }
    for (int i = 0; i < 3; i++)
        assert_int_equal(order[i], i);
    assert_int_equal(sync_gate_peak(g), 1);
    sync_gate_free(g);
}

struct crowd {
    struct sync_gate *g;
    atomic_int inside, most;
    atomic_bool refused; /* an enter without an abort flag came back empty */
};

static void *crowd_member(void *arg)
{
    struct crowd *c = arg;
    for (int i = 0; i < 40; i++) {
        if (!sync_gate_enter(c->g, NULL)) {
            atomic_store(&c->refused, true);
            return NULL;
        }
        int now = atomic_fetch_add(&c->inside, 1) + 1;
        int most = atomic_load(&c->most);
        while (now > most && !atomic_compare_exchange_weak(&c->most, &most, now))
            ;
        retry_sleep_ms(1);
        atomic_fetch_sub(&c->inside, 1);
        sync_gate_leave(c->g);
    }
    return NULL;
}

/* Eight threads, two slots: never more than two inside at once. */
static void test_never_more_than_slots(void **state)
{
    (void)state;
    struct crowd c = {.g = sync_gate_new(2)};
    assert_non_null(c.g);
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_create(&t[i], NULL, crowd_member, &c), 0);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    assert_false(atomic_load(&c.refused));
    assert_true(atomic_load(&c.most) <= 2);
    assert_true(sync_gate_peak(c.g) <= 2);
    assert_true(sync_gate_peak(c.g) >= 1);
    assert_int_equal(sync_gate_waiting(c.g), 0);
    sync_gate_free(c.g);
}

/* A waiter whose flag is set and who is woken leaves without a slot; the
 * slot it waited for is not lost. */
static void test_waiter_gives_up(void **state)
{
    (void)state;
    struct sync_gate *g = sync_gate_new(1);
    assert_non_null(g);
    assert_true(sync_gate_enter(g, NULL));
    pthread_t t;
    struct asker a = {0};
    start(&t, &a, g, 0);
    struct count one = {g, 1}, none = {g, 0};
    wait_until(waiting_is, &one, "queued");
    atomic_store(&a.abort, true);
    sync_gate_wake(g, &a.abort);
    wait_until(done, &a, "given up");
    pthread_join(t, NULL);
    assert_int_equal(atomic_load(&a.result), 0);
    wait_until(waiting_is, &none, "dequeued");
    sync_gate_leave(g);
    /* Free again: taken at once; a set flag gets none. */
    assert_true(sync_gate_enter(g, NULL));
    sync_gate_leave(g);
    assert_false(sync_gate_enter(g, &a.abort));
    sync_gate_free(g);
}

/* No gate, no limit; no slots, no gate. */
static void test_no_gate(void **state)
{
    (void)state;
    assert_null(sync_gate_new(0));
    for (int i = 0; i < 3; i++)
        assert_true(sync_gate_enter(NULL, NULL));
    sync_gate_leave(NULL);
    sync_gate_wake(NULL, NULL);
    sync_gate_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_come_first_served),
        cmocka_unit_test(test_never_more_than_slots),
        cmocka_unit_test(test_waiter_gives_up),
        cmocka_unit_test(test_no_gate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
