// SPDX-License-Identifier: Apache-2.0
/* Retry pacing: see retry.h. */
#include "retry.h"

#include <errno.h>
#include <sys/random.h>
#include <time.h>

uint64_t retry_random(void)
{
    static _Thread_local uint64_t state;
    if (state == 0) {
        uint64_t seed = 0;
        if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed))
            seed = (uint64_t)monotonic_ns() * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(uintptr_t)&seed;
        state = seed ? seed : 0x2545F4914F6CDD1DULL;
    }
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1DULL;
}

long retry_backoff_pick_ms(int attempt, long base_ms, long max_ms, uint64_t rnd)
{
    if (base_ms < 1)
        base_ms = 1;
    if (max_ms < base_ms)
        max_ms = base_ms;
    /* Cap the doubling before it can overflow: once past max_ms it stays there. */
    long cap = base_ms;
    for (int i = 1; i < attempt && cap < max_ms; i++)
        cap = cap > max_ms / 2 ? max_ms : cap * 2;
    long half = cap / 2;
    return half + (long)(rnd % (uint64_t)(cap - half + 1));
}

long retry_backoff_ms(int attempt, long base_ms, long max_ms)
{
    return retry_backoff_pick_ms(attempt, base_ms, max_ms, retry_random());
}

void retry_sleep_ms(long ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

int retry_cond_init(pthread_cond_t *cond)
{
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return -1;
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
    return rc == 0 ? 0 : -1;
}

void retry_cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *mutex, long long deadline_ms)
{
    if (deadline_ms < 0) {
        pthread_cond_wait(cond, mutex);
        return;
    }
    struct timespec ts = {.tv_sec = deadline_ms / 1000, .tv_nsec = (deadline_ms % 1000) * 1000000};
    pthread_cond_timedwait(cond, mutex, &ts);
}

void retry_cond_pause_until(pthread_cond_t *cond, pthread_mutex_t *mutex, const bool *stop,
                            long long deadline_ms)
{
    while (!*stop && monotonic_ms() < deadline_ms)
        retry_cond_wait_until(cond, mutex, deadline_ms);
}
