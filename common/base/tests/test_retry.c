// SPDX-License-Identifier: Apache-2.0
/* Unit tests for retry pacing and the monotonic clock: the backoff's bounds,
 * its random source, the signal-proof sleep and deadline waits; and the
 * background threads of worker.h that wait on such a clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <pthread.h>
#include <signal.h>

#include "monotonic.h"
#include "retry.h"
#include "worker.h"

/* min(max, base * 2^(attempt-1)), the longest delay of an attempt. */
static long cap_of(int attempt, long base, long max)
{
    long cap = base;
    for (int i = 1; i < attempt && cap < max; i++)
        cap *= 2;
    return cap < max ? cap : max;
}

static void test_backoff_bounds(void **state)
{
    (void)state;
    const uint64_t rnds[] = {0, 1, 99, 100, 101, 4999, 5000, 123456789, UINT64_MAX, UINT64_MAX - 1};
    for (int attempt = 1; attempt <= 200; attempt++) {
        long cap = cap_of(attempt, 100, 5000);
        for (size_t i = 0; i < sizeof(rnds) / sizeof(rnds[0]); i++) {
            long d = retry_backoff_pick_ms(attempt, 100, 5000, rnds[i]);
            assert_true(d >= cap / 2);
            assert_true(d <= cap);
        }
        /* The jitter reaches both ends of [cap/2, cap]. */
        assert_int_equal(retry_backoff_pick_ms(attempt, 100, 5000, 0), cap / 2);
        assert_int_equal(retry_backoff_pick_ms(attempt, 100, 5000, (uint64_t)(cap - cap / 2)), cap);
    }
    assert_int_equal(cap_of(1, 100, 5000), 100);
    assert_int_equal(cap_of(3, 100, 5000), 400);
    assert_int_equal(retry_backoff_pick_ms(7, 100, 5000, 2500), 5000); /* capped: 6400 > 5000 */
    assert_int_equal(retry_backoff_pick_ms(1000, 100, 5000, 2500), 5000);
    /* Huge values cannot overflow the doubling. */
    assert_true(retry_backoff_pick_ms(70, LONG_MAX / 2, LONG_MAX, UINT64_MAX) <= LONG_MAX);
    assert_int_equal(retry_backoff_pick_ms(0, 100, 5000, 50), 100); /* attempt < 1 is attempt 1 */
    /* A base below 1 ms is 1 ms, and max below base is base: never a hot loop. */
    assert_int_equal(retry_backoff_pick_ms(3, 0, 5000, 0), 2);
    assert_int_equal(retry_backoff_pick_ms(3, 100, 10, 50), 100);
    for (int attempt = 1; attempt <= 10; attempt++) {
        long d = retry_backoff_ms(attempt, 100, 5000);
        assert_true(d >= cap_of(attempt, 100, 5000) / 2 && d <= cap_of(attempt, 100, 5000));
    }
    /* Random numbers differ between calls (a 2^-64 chance to fail). */
    assert_true(retry_random() != retry_random());
}

static void test_monotonic_clock(void **state)
{
    (void)state;
    long long ms = monotonic_ms(), ns = monotonic_ns();
    assert_true(ms > 0);
    /* One clock: the two readings agree to the millisecond they were taken in. */
    assert_true(ns / 1000000 >= ms && ns / 1000000 - ms < 1000);
    retry_sleep_ms(20);
    assert_true(monotonic_ms() - ms >= 20);
    retry_sleep_ms(0);
    retry_sleep_ms(-5);
}

static void test_cond_wait_until_deadline(void **state)
{
    (void)state;
    pthread_cond_t cond;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    assert_int_equal(retry_cond_init(&cond), 0);
    long long t0 = monotonic_ms();
    pthread_mutex_lock(&lock);
    while (monotonic_ms() < t0 + 30)
        retry_cond_wait_until(&cond, &lock, t0 + 30);
    pthread_mutex_unlock(&lock);
    assert_true(monotonic_ms() - t0 >= 30);
    pthread_cond_destroy(&cond);
}

struct probe {
    struct worker worker;
    bool usr1_blocked, ended;
};

/* Notes its signal mask, then waits until it is told to stop. */
static void *probe_run(void *arg)
{
    struct probe *p = arg;
    sigset_t mask;
    pthread_sigmask(SIG_SETMASK, NULL, &mask);
    pthread_mutex_lock(&p->worker.lock);
    p->usr1_blocked = sigismember(&mask, SIGUSR1);
    while (!p->worker.stop)
        pthread_cond_wait(&p->worker.cond, &p->worker.lock);
    p->ended = true;
    pthread_mutex_unlock(&p->worker.lock);
    return NULL;
}

/* The thread starts with signals blocked (not so its starter), and
 * worker_stop returns once it has ended. */
static void test_worker(void **state)
{
    (void)state;
    sigset_t mine;
    pthread_sigmask(SIG_SETMASK, NULL, &mine);
    assert_false(sigismember(&mine, SIGUSR1));
    struct probe p = {0};
    worker_init(&p.worker);
    assert_int_equal(worker_start(&p.worker, probe_run, &p), 0);
    worker_stop(&p.worker);
    assert_true(p.ended);
    assert_true(p.usr1_blocked);
    worker_destroy(&p.worker);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff_bounds),
        cmocka_unit_test(test_monotonic_clock),
        cmocka_unit_test(test_cond_wait_until_deadline),
        cmocka_unit_test(test_worker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
