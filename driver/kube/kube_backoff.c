// SPDX-License-Identifier: Apache-2.0
/* Retry pacing: full-jitter exponential backoff, a thread-safe random source,
 * and a signal-proof sleep. */
#include "kube_internal.h"

#include <errno.h>
#include <sys/random.h>
#include <time.h>

long kube_backoff_ms(int attempt, long base_ms, long max_ms, uint64_t rnd)
{
    if (base_ms <= 0 || max_ms <= 0)
        return 0;
    if (attempt < 1)
        attempt = 1;
    /* Cap the doubling before it can overflow: once past max_ms it stays there. */
    long cap = base_ms;
    for (int i = 1; i < attempt && cap < max_ms; i++)
        cap = cap > max_ms / 2 ? max_ms : cap * 2;
    if (cap > max_ms)
        cap = max_ms;
    return (long)(rnd % ((uint64_t)cap + 1));
}

/* xorshift64*, one state per thread, seeded from the kernel. */
static _Thread_local uint64_t rng_state;

uint64_t kube_random(void)
{
    if (rng_state == 0) {
        uint64_t seed = 0;
        if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed)) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            seed = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(uintptr_t)&seed;
        }
        rng_state = seed ? seed : 0x2545F4914F6CDD1DULL;
    }
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

void kube_sleep_ms(long ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}
