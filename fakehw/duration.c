// SPDX-License-Identifier: Apache-2.0
/* Config durations: see duration.h. */
#include "duration.h"

#include <stdbool.h>
#include <string.h>

struct unit {
    const char *text;
    int64_t ms;
};

/* "ms" before "m" so the longer unit wins. */
static const struct unit units[] = {{"ms", 1}, {"h", 3600000}, {"m", 60000}, {"s", 1000}};

static int invalid(struct error *err, const char *text, const char *why)
{
    return error_set(err, "\"%.64s\" is not a valid duration: %s (e.g. 30s, 500ms, 1m30s)", text,
                     why);
}

int duration_parse_ms(const char *text, int64_t *ms, struct error *err)
{
    if (!strcmp(text, "0")) {
        *ms = 0;
        return 0;
    }
    if (*text == '\0')
        return invalid(err, text, "it is empty");
    if (*text == '-')
        return invalid(err, text, "it is negative");
    int64_t total = 0;
    const char *p = text;
    while (*p != '\0') {
        /* One <number><unit> term; the number as whole + fraction/10^frac_digits. */
        int64_t whole = 0, frac = 0, frac_scale = 1;
        int digits = 0;
        for (; *p >= '0' && *p <= '9'; p++, digits++) {
            if (whole > DURATION_MAX_MS)
                return invalid(err, text, "it is longer than 365 days");
            whole = whole * 10 + (*p - '0');
        }
        if (*p == '.') {
            for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
                if (frac_scale < 1000000000) {
                    frac = frac * 10 + (*p - '0');
                    frac_scale *= 10;
                } else if (*p != '0') {
                    return invalid(err, text, "it is finer than a millisecond");
                }
            }
        }
        if (digits == 0)
            return invalid(err, text, "a number is missing");
        const struct unit *u = NULL;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t n = strlen(units[i].text);
            if (!strncmp(p, units[i].text, n)) {
                u = &units[i];
                p += n;
                break;
            }
        }
        if (u == NULL)
            return invalid(err, text,
                           *p ? "unknown unit (use h, m, s or ms)" : "a unit is missing");
        int64_t term = whole * u->ms;
        if (frac != 0) {
            if ((frac * u->ms) % frac_scale != 0)
                return invalid(err, text, "it is finer than a millisecond");
            term += frac * u->ms / frac_scale;
        }
        total += term;
        if (whole > DURATION_MAX_MS || total > DURATION_MAX_MS)
            return invalid(err, text, "it is longer than 365 days");
    }
    *ms = total;
    return 0;
}
