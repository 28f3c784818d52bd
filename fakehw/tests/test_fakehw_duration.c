// SPDX-License-Identifier: Apache-2.0
/* Unit tests for config durations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "duration.h"
#include "common/tests/parse_cases.h"
#include "common/tests/test_main.h"

static void test_good(void **state)
{
    (void)state;
    static const struct parse_good cases[] = {
        {"0", 0},
        {"0s", 0},
        {"30s", 30000},
        {"500ms", 500},
        {"1m30s", 90000},
        {"1.5h", 5400000},
        {"2h45m", 9900000},
        {"0.5s", 500},
        {"1ms", 1},
        {"1.25s", 1250},
        {"8760h", DURATION_MAX_MS},
    };
    CHECK_PARSE_GOOD(duration_parse_ms, cases);
}

static void test_bad(void **state)
{
    (void)state;
    static const struct parse_bad cases[] = {
        {"30", "\"30\" is not a valid duration: a unit is missing (e.g. 30s, 500ms, 1m30s)"},
        {"", "\"\" is not a valid duration: it is empty (e.g. 30s, 500ms, 1m30s)"},
        {"-1s", "\"-1s\" is not a valid duration: it is negative (e.g. 30s, 500ms, 1m30s)"},
        {"5x", "\"5x\" is not a valid duration: unknown unit (use h, m, s or ms) (e.g. 30s, "
               "500ms, 1m30s)"},
        {"2d", "\"2d\" is not a valid duration: unknown unit (use h, m, s or ms) (e.g. 30s, "
               "500ms, 1m30s)"},
        {"s", "\"s\" is not a valid duration: a number is missing (e.g. 30s, 500ms, 1m30s)"},
        {"1.0005s", "\"1.0005s\" is not a valid duration: it is finer than a millisecond (e.g. "
                    "30s, 500ms, 1m30s)"},
        {"1m30", "\"1m30\" is not a valid duration: a unit is missing (e.g. 30s, 500ms, 1m30s)"},
        {"8761h", "\"8761h\" is not a valid duration: it is longer than 365 days (e.g. 30s, "
                  "500ms, 1m30s)"},
        {"99999999999999999999s", "\"99999999999999999999s\" is not a valid duration: it is "
                                  "longer than 365 days (e.g. 30s, 500ms, 1m30s)"},
    };
    CHECK_PARSE_BAD(duration_parse_ms, cases);
}

TEST_MAIN("fakehw duration", test_good, test_bad)
