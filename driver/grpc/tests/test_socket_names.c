// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the socket names of a plugin instance (socket_names.h).
 * The hashed names were computed independently, with Go's crypto/sha256 and
 * base64.RawURLEncoding as RollingUpdateRegistrarSocketFile uses them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "driver/grpc/socket_names.h"
#include "common/tests/test_main.h"

#define DRIVER  "gpu.fakehw.example.com"
#define UID     "8e1f6a2c-3b4d-4e5f-9a0b-1c2d3e4f5a6b"
#define PLUGINS "/var/lib/kubelet/plugins/" DRIVER

/* A registrar directory of exactly len bytes: "/ddd...". */
static const char *dir_of_len(char *buf, size_t len)
{
    buf[0] = '/';
    memset(buf + 1, 'd', len - 1);
    buf[len] = '\0';
    return buf;
}

static void test_without_rolling_update(void **state)
{
    (void)state;
    struct socket_names n;
    struct error err;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(socket_names_build("/var/lib/kubelet/plugins_registry", PLUGINS, DRIVER,
                                            i ? "" : NULL, &n, &err),
                         0);
        assert_string_equal(n.registration,
                            "/var/lib/kubelet/plugins_registry/" DRIVER "-reg.sock");
        assert_string_equal(n.dra, PLUGINS "/dra.sock");
    }
}

static void test_rolling_update_full_uid(void **state)
{
    (void)state;
    struct socket_names n;
    struct error err;
    assert_int_equal(
        socket_names_build("/var/lib/kubelet/plugins_registry", PLUGINS, DRIVER, UID, &n, &err), 0);
    assert_string_equal(n.registration,
                        "/var/lib/kubelet/plugins_registry/" DRIVER "-" UID "-reg.sock");
    assert_string_equal(n.dra, PLUGINS "/dra-" UID ".sock");
}

/* The candidates in order, at the boundaries of SOCKET_PATH_MAX: the first
 * basename is 68 bytes, the second 43, the third 35. */
static void test_rolling_update_fallbacks(void **state)
{
    (void)state;
    static const struct {
        size_t dir_len;
        const char *basename;
    } cases[] = {
        {38, DRIVER "-" UID "-reg.sock"},            /* 107 bytes: fits */
        {39, DRIVER "-P5T46vi7NbE-reg.sock"},        /* 108: the UID's hash */
        {63, DRIVER "-P5T46vi7NbE-reg.sock"},        /* 107 */
        {64, "dra-pa0JImvTaBUxmTUETH4bcA-reg.sock"}, /* the driver's and UID's hash */
        {71, "dra-pa0JImvTaBUxmTUETH4bcA-reg.sock"}, /* 107 */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char dir[128], want[256];
        struct socket_names n;
        struct error err;
        dir_of_len(dir, cases[i].dir_len);
        assert_int_equal(socket_names_build(dir, PLUGINS, DRIVER, UID, &n, &err), 0);
        snprintf(want, sizeof(want), "%s/%s", dir, cases[i].basename);
        assert_string_equal(n.registration, want);
        assert_true(strlen(n.registration) <= SOCKET_PATH_MAX);
    }
}

static void test_too_long(void **state)
{
    (void)state;
    char dir[128];
    struct socket_names n;
    struct error err;
    /* Even the shortest registration name does not fit. */
    assert_int_equal(socket_names_build(dir_of_len(dir, 72), PLUGINS, DRIVER, UID, &n, &err), -1);
    assert_non_null(strstr(err.msg, "is 108 bytes long, longer than 107"));
    /* The DRA socket is checked too. */
    assert_int_equal(socket_names_build("/r", dir_of_len(dir, 70), DRIVER, UID, &n, &err), -1);
    assert_non_null(strstr(err.msg, "/dra-" UID ".sock"));
    assert_int_equal(socket_names_build("/r", dir_of_len(dir, 98), DRIVER, NULL, &n, &err), 0);
    assert_int_equal(socket_names_build("/r", dir_of_len(dir, 99), DRIVER, NULL, &n, &err), -1);
}

static void test_bad_uid(void **state)
{
    (void)state;
    struct socket_names n;
    struct error err;
    assert_int_equal(socket_names_build("/r", "/p", DRIVER, "../x", &n, &err), -1);
    assert_string_equal(err.msg,
                        "\"../x\": character 3 ('/') is not a letter, digit, '-', '_' or '.'");
    char long_uid[ROLLING_UPDATE_UID_MAX + 2];
    memset(long_uid, 'a', sizeof(long_uid) - 1);
    long_uid[sizeof(long_uid) - 1] = '\0';
    assert_int_equal(socket_names_check_uid(long_uid, &err), -1);
    assert_non_null(strstr(err.msg, "want 1 to 128 characters"));
    long_uid[ROLLING_UPDATE_UID_MAX] = '\0';
    assert_int_equal(socket_names_check_uid(long_uid, &err), 0);
    assert_int_equal(socket_names_check_uid("a b", &err), -1);
    assert_int_equal(socket_names_check_uid(UID, &err), 0);
}

TEST_MAIN("driver/grpc socket_names", test_without_rolling_update, test_rolling_update_full_uid,
          test_rolling_update_fallbacks, test_too_long, test_bad_uid)
