// SPDX-License-Identifier: Apache-2.0
/* Unit tests for common/base/quantity: Kubernetes quantities as byte counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "quantity.h"
#include "common/tests/parse_cases.h"
#include "common/tests/test_main.h"

/* quantity_parse_bytes as the table takes it: the counts it accepts fit an
 * int64_t (at most 2^63-1 bytes). */
static int parse_bytes(const char *text, int64_t *value, struct error *err)
{
    uint64_t v = (uint64_t)*value;
    int rc = quantity_parse_bytes(text, &v, err);
    *value = (int64_t)v;
    return rc;
}

static void test_parse_good(void **state)
{
    (void)state;
    static const struct parse_good cases[] = {
        {"80Gi", 85899345920ULL},
        {"81920Mi", 85899345920ULL},
        {"40G", 40000000000ULL},
        {"1024", 1024},
        {"0", 0},
        {"1.5Gi", 1610612736ULL},
        {"0.5Ki", 512},
        {".5Ki", 512},
        {"1.Ki", 1024},
        {"+5Ki", 5120},
        {"100k", 100000},
        {"1e3", 1000},
        {"1E9", 1000000000ULL},
        {"2.5e2", 250},
        {"1000m", 1},
        {"7Ei", 7ULL << 60},
        {"1Ti", 1ULL << 40},
        {"3P", 3000000000000000ULL},
        {"9223372036854775807", 9223372036854775807ULL},
        {"0000000000000000000000001Ki", 1024},
    };
    CHECK_PARSE_GOOD(parse_bytes, cases);
}

static void test_parse_bad(void **state)
{
    (void)state;
    static const struct parse_bad cases[] = {
        {"80Gx", "\"80Gx\" is not a valid quantity: unknown suffix \"Gx\" (use Ki, Mi, Gi, Ti, "
                 "Pi, Ei, k, M, G, T, P, E or an exponent like e9)"},
        {"", "\"\" is not a valid quantity: it is empty"},
        {"-1Gi", "\"-1Gi\" is not a valid quantity: a byte count cannot be negative"},
        {"Gi", "\"Gi\" is not a valid quantity: it does not start with a number"},
        {" 1Gi", "\" 1Gi\" is not a valid quantity: it does not start with a number"},
        {"1.5", "\"1.5\" is not a valid quantity: it is not a whole number of bytes"},
        {"1m", "\"1m\" is not a valid quantity: it is not a whole number of bytes"},
        {"8Ei", "\"8Ei\" is not a valid quantity: it is larger than 2^63-1 bytes"},
        {"9223372036854775808", "\"9223372036854775808\" is not a valid quantity: it is larger "
                                "than 2^63-1 bytes"},
        {"1e40", "\"1e40\" is not a valid quantity: it is larger than 2^63-1 bytes"},
        {"123456789012345678901", "\"123456789012345678901\" is not a valid quantity: too many "
                                  "digits"},
        {"1..2", "\"1..2\" is not a valid quantity: unknown suffix \".2\" (use Ki, Mi, Gi, Ti, Pi, "
                 "Ei, k, M, G, T, P, E or an exponent like e9)"},
        {"1e", "\"1e\" is not a valid quantity: unknown suffix \"e\" (use Ki, Mi, Gi, Ti, Pi, Ei, "
               "k, M, G, T, P, E or an exponent like e9)"},
        {"1gi", "\"1gi\" is not a valid quantity: unknown suffix \"gi\" (use Ki, Mi, Gi, Ti, Pi, "
                "Ei, k, M, G, T, P, E or an exponent like e9)"},
    };
    CHECK_PARSE_BAD(parse_bytes, cases);
}

static void test_format(void **state)
{
    (void)state;
    static const struct {
        uint64_t bytes;
        const char *text;
    } cases[] = {
        {85899345920ULL, "80Gi"},
        {81559ULL << 20, "81559Mi"},
        {143771ULL << 20, "143771Mi"},
        {15360ULL << 20, "15Gi"},
        {1536, "1536"},
        {1024, "1Ki"},
        {1025, "1025"},
        {1000, "1k"},
        {999, "999"},
        {0, "0"},
        {40000000000ULL, "39062500Ki"},
        {1ULL << 60, "1Ei"},
        {1ULL << 62, "4Ei"},
        {UINT64_MAX, "9223372036854775807"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[QUANTITY_STR_MAX];
        int n = quantity_format_bytes(cases[i].bytes, buf, sizeof(buf));
        assert_string_equal(buf, cases[i].text);
        assert_int_equal(n, (int)strlen(cases[i].text));
    }
    char small[4];
    assert_int_equal(quantity_format_bytes(85899345920ULL, small, sizeof(small)), -1);
    assert_string_equal(small, "");
}

/* Whatever format prints, parse reads back to the same number. */
static void test_round_trip(void **state)
{
    (void)state;
    uint64_t v = 1;
    for (int i = 0; i < 2000; i++) {
        char buf[QUANTITY_STR_MAX];
        uint64_t back = 0;
        struct error err;
        assert_true(quantity_format_bytes(v, buf, sizeof(buf)) > 0);
        if (quantity_parse_bytes(buf, &back, &err) != 0)
            fail_msg("%s: %s", buf, err.msg);
        assert_true(back == v);
        v = (v * 6364136223846793005ULL + 1442695040888963407ULL) >> (i % 40 + 1);
        if (i % 3 == 0)
            v <<= 20; /* a share of values with binary suffixes */
        v &= (uint64_t)INT64_MAX;
    }
}

TEST_MAIN("quantity", test_parse_good, test_parse_bad, test_format, test_round_trip)
