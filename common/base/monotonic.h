// SPDX-License-Identifier: Apache-2.0
/* The one clock of deadlines, timeouts and durations: CLOCK_MONOTONIC, which
 * no settimeofday or NTP step moves.  Condition variables that wait for its
 * deadlines are in retry.h. */
#ifndef FAKEHW_COMMON_MONOTONIC_H
#define FAKEHW_COMMON_MONOTONIC_H

/* Milliseconds since an arbitrary start (boot, on Linux). */
long long monotonic_ms(void);

/* Nanoseconds on the same clock: for durations that milliseconds would round
 * to zero, and for due times that must not fire early by a rounding. */
long long monotonic_ns(void);

#endif
