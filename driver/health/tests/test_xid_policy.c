// SPDX-License-Identifier: Apache-2.0
/* Unit tests for driver/health/xid_policy.h: NVIDIA's ignored XIDs and the
 * additional list in the real driver's format, table-driven. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/health/xid_policy.h"
#include "common/tests/test_main.h"

/* The real driver's list (device_health.go, xidsToSkip). */
static const long nvidia_ignored[] = {13, 31, 43, 45, 68, 109};

static void test_defaults(void **state)
{
    (void)state;
    struct xid_policy p;
    struct error err;
    assert_int_equal(xid_policy_init(&p, NULL, &err), 0);
    assert_int_equal(p.n, sizeof(nvidia_ignored) / sizeof(nvidia_ignored[0]));
    for (size_t i = 0; i < p.n; i++)
        assert_int_equal(p.ignored[i], nvidia_ignored[i]);
    /* The static default is the same list, in order (bsearch needs it). */
    const struct xid_policy *d = xid_policy_default();
    assert_int_equal(d->n, p.n);
    assert_memory_equal(d->ignored, p.ignored, p.n * sizeof(p.ignored[0]));
    char buf[128];
    xid_policy_format(&p, buf, sizeof(buf));
    assert_string_equal(buf, "13, 31, 43, 45, 68, 109");
    assert_string_equal(xid_policy_ignored_what(43), "GPU stopped processing");
    assert_null(xid_policy_ignored_what(79));
}

/* Which codes are ignored: every row against one policy each. */
static void test_ignored(void **state)
{
    (void)state;
    const struct {
        const char *additional;
        long xid;
        bool ignored;
    } rows[] = {
        {NULL, 13, true},      {NULL, 31, true},  {NULL, 43, true},       {NULL, 45, true},
        {NULL, 68, true},      {NULL, 109, true}, {NULL, 79, false},      {NULL, 48, false},
        {NULL, 63, false},     {NULL, 94, false}, {NULL, 119, false},     {NULL, 0, false},
        {"", 79, false},       {"79", 79, true},  {"79", 13, true},       {" 48 , 63 ", 63, true},
        {"48,,63,", 48, true}, {",", 79, false},  {"99999", 99999, true}, {"1", 2, false},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct xid_policy p;
        struct error err;
        assert_int_equal(xid_policy_init(&p, rows[i].additional, &err), 0);
        print_message("row %zu: \"%s\" %ld\n", i, rows[i].additional ? rows[i].additional : "",
                      rows[i].xid);
        assert_int_equal(xid_policy_ignored(&p, rows[i].xid), rows[i].ignored);
        if (rows[i].additional == NULL)
            assert_int_equal(xid_policy_ignored(NULL, rows[i].xid), rows[i].ignored);
    }
}

/* Duplicates collapse, the list stays sorted. */
static void test_merge(void **state)
{
    (void)state;
    struct xid_policy p;
    struct error err;
    assert_int_equal(xid_policy_init(&p, "109, 48, 13, 48, 1", &err), 0);
    char buf[128];
    xid_policy_format(&p, buf, sizeof(buf));
    assert_string_equal(buf, "1, 13, 31, 43, 45, 48, 68, 109");
}

/* Malformed items are refused (the real driver skips them), by position. */
static void test_refused(void **state)
{
    (void)state;
    const struct {
        const char *additional, *message;
    } rows[] = {
        {"48,x", "item 2 \"x\" is not an XID (a decimal 1..99999)"},
        {"0", "item 1 \"0\" is not an XID (a decimal 1..99999)"},
        {"-5", "item 1 \"-5\" is not an XID (a decimal 1..99999)"},
        {"100000", "item 1 \"100000\" is not an XID (a decimal 1..99999)"},
        {"48;63", "item 1 \"48;63\" is not an XID (a decimal 1..99999)"},
        {"4 8", "item 1 \"4 8\" is not an XID (a decimal 1..99999)"},
        {"0x30", "item 1 \"0x30\" is not an XID (a decimal 1..99999)"},
        {"12345678901234567890",
         "item 1 \"1234567890123456...\" is not an XID (a decimal 1..99999)"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct xid_policy p;
        struct error err;
        if (xid_policy_init(&p, rows[i].additional, &err) != -1)
            fail_msg("\"%s\" is accepted", rows[i].additional);
        assert_string_equal(err.msg, rows[i].message);
    }
}

/* At most XID_POLICY_ADDITIONAL_MAX items: bounded work for any input. */
static void test_bounded(void **state)
{
    (void)state;
    char list[XID_POLICY_ADDITIONAL_MAX * 8 + 16] = "";
    size_t len = 0;
    for (int i = 0; i < XID_POLICY_ADDITIONAL_MAX; i++)
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", i ? "," : "", 1000 + i);
    struct xid_policy p;
    struct error err;
    assert_int_equal(xid_policy_init(&p, list, &err), 0);
    assert_int_equal(p.n, XID_POLICY_ADDITIONAL_MAX + 6);
    assert_true(xid_policy_ignored(&p, 1000 + XID_POLICY_ADDITIONAL_MAX - 1));
    snprintf(list + len, sizeof(list) - len, ",7");
    assert_int_equal(xid_policy_init(&p, list, &err), -1);
    assert_string_equal(err.msg, "more than 256 XIDs");
}

TEST_MAIN("driver/health xid_policy", test_defaults, test_ignored, test_merge, test_refused,
          test_bounded)
