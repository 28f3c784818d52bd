// SPDX-License-Identifier: Apache-2.0
/* Retry pacing for the background threads of the plugin (publish/, health/,
 * bind/): jittered exponential backoff, and condition-variable waits until a
 * deadline of the monotonic clock (monotonic.h). */
#ifndef FAKEHW_COMMON_RETRY_H
#define FAKEHW_COMMON_RETRY_H

#include <pthread.h>

#include "monotonic.h"

/* A delay in [cap/2, cap] where cap = min(max_ms, base_ms * 2^(attempt-1));
 * attempt counts from 1.  Half the delay is random so that many nodes do not
 * retry in step, and the wait never drops to zero (no hot loop). */
long retry_backoff_ms(int attempt, long base_ms, long max_ms);

/* Initialises cond to use CLOCK_MONOTONIC (for retry_cond_wait_until). */
int retry_cond_init(pthread_cond_t *cond);

/* Waits on cond (mutex held) until signalled or deadline_ms of
 * monotonic_ms(); deadline_ms < 0 waits without a deadline. */
void retry_cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *mutex, long long deadline_ms);

#endif
