// SPDX-License-Identifier: Apache-2.0
/* The monotonic clock: see monotonic.h. */
#include "monotonic.h"

#include <time.h>

long long monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

long long monotonic_ms(void)
{
    return monotonic_ns() / 1000000;
}
