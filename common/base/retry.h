// SPDX-License-Identifier: Apache-2.0
/* Retry pacing for the background threads and the API client: jittered
 * exponential backoff, a signal-proof sleep, and condition-variable waits
 * until a deadline of the monotonic clock (monotonic.h). */
#ifndef FAKEHW_COMMON_RETRY_H
#define FAKEHW_COMMON_RETRY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "monotonic.h"

/* A delay in [cap/2, cap] where cap = min(max_ms, base_ms * 2^(attempt-1));
 * attempt counts from 1.  Half the delay is random so that many nodes do not
 * retry in step, and the wait never drops to zero (no hot loop). */
long retry_backoff_ms(int attempt, long base_ms, long max_ms);

/* The same delay with the random part picked by rnd (retry_random() in
 * retry_backoff_ms): the deterministic core, for tests. */
long retry_backoff_pick_ms(int attempt, long base_ms, long max_ms, uint64_t rnd);

/* A random 64-bit number (xorshift64*, one state per thread, seeded from
 * the kernel); thread-safe, not for secrets. */
uint64_t retry_random(void);

/* Sleeps ms milliseconds, restarting after signals; nothing when ms <= 0. */
void retry_sleep_ms(long ms);

/* Initialises cond to use CLOCK_MONOTONIC (for retry_cond_wait_until). */
int retry_cond_init(pthread_cond_t *cond);

/* Waits on cond (mutex held) until signalled or deadline_ms of
 * monotonic_ms(); deadline_ms < 0 waits without a deadline. */
void retry_cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *mutex, long long deadline_ms);

/* Waits on cond (mutex held) until deadline_ms of monotonic_ms() has passed
 * or *stop (guarded by mutex) is true: a background thread's pause between
 * retries that its owner can cut short. */
void retry_cond_pause_until(pthread_cond_t *cond, pthread_mutex_t *mutex, const bool *stop,
                            long long deadline_ms);

#endif
