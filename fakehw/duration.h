// SPDX-License-Identifier: Apache-2.0
/* Durations in the config ("30s", "500ms", "1m30s", "1.5h"), in Go's
 * time.ParseDuration syntax with the units h, m, s and ms, at millisecond
 * resolution.  "0" needs no unit; any other number does. */
#ifndef FAKEHW_DURATION_H
#define FAKEHW_DURATION_H

#include <stdint.h>

#include "error.h"

/* Longest duration accepted: 365 days. */
#define DURATION_MAX_MS (365LL * 24 * 3600 * 1000)

int duration_parse_ms(const char *text, int64_t *ms, struct error *err);

#endif
