// SPDX-License-Identifier: Apache-2.0
/* Retry pacing: see retry.h. */
#include "retry.h"

#include <stdint.h>
#include <sys/random.h>
#include <time.h>

/* xorshift64*, one state per thread, seeded from the kernel. */
static uint64_t next_random(void)
{
    static _Thread_local uint64_t state;
    if (state == 0) {
        uint64_t seed = 0;
        if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed))
            seed = (uint64_t)monotonic_ms() * 0x9E3779B97F4A7C15ULL;
        state = seed ? seed : 0x2545F4914F6CDD1DULL;
    }
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1DULL;
}

long retry_backoff_ms(int attempt, long base_ms, long max_ms)
{
    if (base_ms < 1)
        base_ms = 1;
    if (max_ms < base_ms)
        max_ms = base_ms;
    long cap = base_ms;
    for (int i = 1; i < attempt && cap < max_ms; i++)
        cap = cap > max_ms / 2 ? max_ms : cap * 2;
    long half = cap / 2;
    return half + (long)(next_random() % (uint64_t)(cap - half + 1));
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
