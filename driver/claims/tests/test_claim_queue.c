// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the claim work queue (driver/claims/claim_queue.h) that the
 * claim-status writer and the binder share: work collapses per claim uid,
 * the earliest due claim comes first, and an attempt settles as done,
 * re-read, backed off or given up; work dropped in flight is not requeued. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "driver/claims/claim_queue.h"
#include "common/tests/test_main.h"

#define UID1 "00000000-0000-4000-8000-000000000001"
#define UID2 "00000000-0000-4000-8000-000000000002"

static const struct claim_ref C1 = {"default", "c1", UID1};
static const struct claim_ref C2 = {"team-a", "c2", UID2};

static void init(struct claim_queue *q, int max_attempts)
{
    const struct claim_queue_policy p = {100, 1000, max_attempts};
    claim_queue_init(q, &p);
}

/* The fixture: an empty queue of 12 attempts. */
static int setup(void **state)
{
    struct claim_queue *q = malloc(sizeof(*q));
    if (q != NULL)
        init(q, 12);
    *state = q;
    return q ? 0 : -1;
}

static int teardown(void **state)
{
    claim_queue_clear(*state);
    free(*state);
    return 0;
}

/* The work due at now, which there must be. */
static struct claim_work *pop(struct claim_queue *q, long long now)
{
    long long next;
    struct claim_work *w = claim_queue_pop_due(q, now, &next);
    if (w == NULL)
        fail_msg("no work due at %lld", now);
    return w;
}

static void test_defaults(void **state)
{
    struct claim_queue *q = *state;
    const struct claim_queue_policy none = {0, 0, 0};
    claim_queue_init(q, &none);
    assert_int_equal(q->policy.retry_base_ms, 500);
    assert_int_equal(q->policy.retry_max_ms, 30000);
    assert_int_equal(q->policy.max_attempts, 12);
    assert_true(claim_queue_idle(q));
}

/* Repeated work for one claim is one entry; the earlier due and changed
 * times win; fresh work resets the failure counts. */
static void test_collapses_per_uid(void **state)
{
    struct claim_queue *q = *state;
    claim_queue_add(q, &C1, 50, -1);
    claim_queue_add(q, &C1, 80, 30);
    claim_queue_add(q, &C2, 60, -1);
    assert_int_equal(q->n, 2);
    struct claim_work *w = claim_queue_find(q, UID1);
    assert_non_null(w);
    assert_int_equal(w->due_ms, 50);
    assert_int_equal(w->changed_ms, 30);
    assert_string_equal(w->ns, "default");
    assert_string_equal(w->name, "c1");
    w->failures = 3;
    w->conflicts = 2;
    claim_queue_add(q, &C1, 10, 40);
    assert_int_equal(w->due_ms, 10);
    assert_int_equal(w->changed_ms, 30);
    assert_int_equal(w->failures, 0);
    assert_int_equal(w->conflicts, 0);
    claim_queue_clear(q);
    assert_int_equal(q->n, 0);
    assert_null(q->items);
}

static void test_earliest_first(void **state)
{
    struct claim_queue *q = *state;
    long long next = 0;
    assert_null(claim_queue_pop_due(q, 0, &next));
    assert_int_equal(next, -1);
    claim_queue_add(q, &C1, 200, -1);
    claim_queue_add(q, &C2, 100, -1);
    assert_null(claim_queue_pop_due(q, 99, &next));
    assert_int_equal(next, 100);
    struct claim_work *w = pop(q, 150);
    assert_string_equal(w->uid, UID2);
    assert_int_equal(q->n, 1);
    assert_false(claim_queue_idle(q));
    long delay = -1;
    assert_int_equal(claim_queue_settle(q, w, CLAIM_WRITE_DONE, 150, &delay), CLAIM_SETTLE_DONE);
    w = pop(q, 250);
    assert_string_equal(w->uid, UID1);
    assert_false(claim_queue_idle(q)); /* in flight */
    assert_int_equal(claim_queue_settle(q, w, CLAIM_WRITE_DONE, 250, &delay), CLAIM_SETTLE_DONE);
    assert_true(claim_queue_idle(q));
}

/* 409s are re-read at once five times, then back off like failures. */
static void test_conflicts_reread_then_back_off(void **state)
{
    struct claim_queue *q = *state;
    claim_queue_add(q, &C1, 0, -1);
    long delay = -1;
    for (int i = 1; i <= 5; i++) {
        struct claim_work *w = pop(q, 1000);
        assert_int_equal(claim_queue_settle(q, w, CLAIM_WRITE_CONFLICT, 1000, &delay),
                         CLAIM_SETTLE_REREAD);
        assert_int_equal(w->due_ms, 1000);
        assert_int_equal(w->failures, 0);
    }
    struct claim_work *w = pop(q, 1000);
    assert_int_equal(claim_queue_settle(q, w, CLAIM_WRITE_CONFLICT, 1000, &delay),
                     CLAIM_SETTLE_BACKOFF);
    assert_int_equal(w->failures, 1);
    assert_in_range(delay, 50, 100);
    assert_int_equal(w->due_ms, 1000 + delay);
    assert_int_equal(q->conflicts, 6);
    assert_int_equal(q->failures, 0);
    /* A failure that is not a conflict resets the run of conflicts. */
    w = pop(q, 5000);
    assert_int_equal(claim_queue_settle(q, w, CLAIM_WRITE_RETRY, 5000, &delay),
                     CLAIM_SETTLE_BACKOFF);
    assert_int_equal(w->conflicts, 0);
    assert_int_equal(w->failures, 2);
    assert_int_equal(q->failures, 1);
    claim_queue_clear(q);
}

static void test_gives_up(void **state)
{
    struct claim_queue *q = *state;
    init(q, 3);
    claim_queue_add(q, &C1, 0, -1);
    long delay;
    for (int i = 1; i < 3; i++) {
        struct claim_work *w = pop(q, 1LL << 40);
        assert_int_equal(claim_queue_settle(q, w, CLAIM_WRITE_RETRY, 0, &delay),
                         CLAIM_SETTLE_BACKOFF);
    }
    struct claim_work *w = pop(q, 1LL << 40);
    assert_int_equal(claim_queue_settle(q, w, CLAIM_WRITE_RETRY, 0, &delay), CLAIM_SETTLE_GIVEN_UP);
    assert_int_equal(w->failures, 3);
    assert_int_equal(q->given_up, 1);
    assert_true(claim_queue_idle(q));
    claim_work_free(w);
}

/* Work dropped while its claim is written, or superseded by newer work,
 * is not requeued. */
static void test_dropped_or_superseded_in_flight(void **state)
{
    struct claim_queue *q = *state;
    long delay;
    claim_queue_add(q, &C1, 0, -1);
    struct claim_work *w = pop(q, 0);
    claim_queue_drop(q, UID1);
    assert_int_equal(claim_queue_settle(q, w, CLAIM_WRITE_RETRY, 0, &delay), CLAIM_SETTLE_DONE);
    assert_true(claim_queue_idle(q));

    claim_queue_add(q, &C1, 0, -1);
    w = pop(q, 0);
    claim_queue_add(q, &C1, 5, -1); /* news while in flight */
    assert_int_equal(claim_queue_settle(q, w, CLAIM_WRITE_CONFLICT, 0, &delay), CLAIM_SETTLE_DONE);
    assert_int_equal(q->n, 1);
    assert_int_equal(q->conflicts, 0);

    claim_queue_drop(q, UID1);
    assert_true(claim_queue_idle(q));
    claim_queue_drop(q, UID2); /* unknown: nothing */
}

static void test_path(void **state)
{
    struct claim_queue *q = *state;
    char path[256];
    claim_queue_add(q, &C2, 0, -1);
    assert_true(claim_work_path(q->items, path, sizeof(path)));
    assert_string_equal(path, "/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims/c2");
    const struct claim_ref bad = {"default", "../x", UID1};
    claim_queue_add(q, &bad, 0, -1);
    assert_false(claim_work_path(claim_queue_find(q, UID1), path, sizeof(path)));
    assert_false(claim_work_path(claim_queue_find(q, UID2), path, 20)); /* too small */
    claim_queue_clear(q);
}

TEST_MAIN_FIXTURE("driver/claims claim_queue", setup, teardown, test_defaults,
                  test_collapses_per_uid, test_earliest_first, test_conflicts_reread_then_back_off,
                  test_gives_up, test_dropped_or_superseded_in_flight, test_path)
