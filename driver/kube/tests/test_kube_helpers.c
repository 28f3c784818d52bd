// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the client's pure helpers: backoff bounds, query escaping,
 * base64, token files, and the error text built from API answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "kube_internal.h"
#include "kube_paths.h"

static long cap_of(int attempt, long base, long max)
{
    long cap = base;
    for (int i = 1; i < attempt && cap < max; i++)
        cap *= 2;
    return cap < max ? cap : max;
}

static void test_backoff_bounds(void **state)
{
    (void)state;
    const uint64_t rnds[] = {0, 1, 99, 100, 101, 4999, 5000, 123456789, UINT64_MAX, UINT64_MAX - 1};
    for (int attempt = 1; attempt <= 200; attempt++) {
        long cap = cap_of(attempt, 100, 5000);
        for (size_t i = 0; i < sizeof(rnds) / sizeof(rnds[0]); i++) {
            long d = kube_backoff_ms(attempt, 100, 5000, rnds[i]);
            assert_true(d >= 0);
            assert_true(d <= cap);
        }
        /* Full jitter reaches both ends of [0, cap]. */
        assert_int_equal(kube_backoff_ms(attempt, 100, 5000, 0), 0);
        assert_int_equal(kube_backoff_ms(attempt, 100, 5000, (uint64_t)cap), cap);
    }
    assert_int_equal(cap_of(1, 100, 5000), 100);
    assert_int_equal(cap_of(3, 100, 5000), 400);
    assert_int_equal(kube_backoff_ms(1, 100, 5000, 100), 100);
    assert_int_equal(kube_backoff_ms(3, 100, 5000, 400), 400);
    assert_int_equal(kube_backoff_ms(7, 100, 5000, 5000), 5000); /* capped: 6400 > 5000 */
    assert_int_equal(kube_backoff_ms(1000, 100, 5000, 5000), 5000);
    /* Huge values cannot overflow the doubling. */
    assert_true(kube_backoff_ms(70, LONG_MAX / 2, LONG_MAX, UINT64_MAX) <= LONG_MAX);
    assert_int_equal(kube_backoff_ms(0, 100, 5000, 100), 100); /* attempt < 1 is attempt 1 */
    assert_int_equal(kube_backoff_ms(3, 0, 5000, 77), 0);
    /* Random numbers differ between calls (a 2^-64 chance to fail). */
    assert_true(kube_random() != kube_random());
}

static void test_query_escape(void **state)
{
    (void)state;
    char *e = kube_query_escape("spec.nodeName=node 1,spec.driver=gpu.example.com");
    assert_string_equal(e, "spec.nodeName%3Dnode%201%2Cspec.driver%3Dgpu.example.com");
    free(e);
    e = kube_query_escape("a~b_c-d.e/f?g&h#i+j%\xc3\xa9");
    assert_string_equal(e, "a~b_c-d.e%2Ff%3Fg%26h%23i%2Bj%25%C3%A9");
    free(e);
    e = kube_query_escape("");
    assert_string_equal(e, "");
    free(e);
}

static void test_base64(void **state)
{
    (void)state;
    char *out;
    size_t len;
    struct error err = {{0}};
    assert_int_equal(kube_base64_decode("aGVsbG8=", &out, &len, &err), 0);
    assert_int_equal(len, 5);
    assert_string_equal(out, "hello");
    free(out);
    assert_int_equal(kube_base64_decode("aGVsbG8", &out, &len, &err), 0); /* no padding */
    assert_string_equal(out, "hello");
    free(out);
    assert_int_equal(kube_base64_decode("aGVs\nbG8h\n", &out, &len, &err), 0);
    assert_string_equal(out, "hello!");
    free(out);
    assert_int_equal(kube_base64_decode("", &out, &len, &err), 0);
    assert_int_equal(len, 0);
    free(out);
    assert_int_equal(kube_base64_decode("aGV-bG8=", &out, &len, &err), -1);
    assert_string_equal(err.msg, "invalid base64: character '-' (0x2d) at offset 3");
    assert_int_equal(kube_base64_decode("aGVsb", &out, &len, &err), -1);
    assert_string_equal(err.msg, "invalid base64: truncated (5 digits)");
    assert_int_equal(kube_base64_decode("aG=Vs", &out, &len, &err), -1);
    assert_string_equal(err.msg, "invalid base64: data after the '=' padding at offset 3");
    assert_int_equal(kube_base64_decode("aGVsbA===", &out, &len, &err), -1);
    assert_string_equal(err.msg, "invalid base64: wrong padding");
}

static void test_read_token(void **state)
{
    (void)state;
    char path[] = "/tmp/kube-token.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "\n  tok.en-1 \r\n", 14), 14);
    close(fd);
    char *t;
    struct error err = {{0}};
    assert_int_equal(kube_read_token(path, &t, &err), 0);
    assert_string_equal(t, "tok.en-1");
    free(t);
    FILE *f = fopen(path, "w");
    fputs("a\x01"
          "b",
          f);
    fclose(f);
    assert_int_equal(kube_read_token(path, &t, &err), -1);
    char want[256];
    snprintf(want, sizeof(want), "%s: the token contains a control character (0x01) at byte 1",
             path);
    assert_string_equal(err.msg, want);
    unlink(path);
    assert_int_equal(kube_read_token(path, &t, &err), -1);
    snprintf(want, sizeof(want), "%s: No such file or directory", path);
    assert_string_equal(err.msg, want);
}

static void test_status_error_text(void **state)
{
    (void)state;
    struct error err = {{0}};
    json_t *st = json_pack("{s:s, s:s, s:s, s:i}", "kind", "Status", "message",
                           "resourceclaims.resource.k8s.io \"c1\" not found", "reason", "NotFound",
                           "code", 404);
    kube_http_status_error(&err, "GET", "/apis/resource.k8s.io/v1/namespaces/d/resourceclaims/c1",
                           404, st, NULL, 0);
    assert_string_equal(err.msg, "GET /apis/resource.k8s.io/v1/namespaces/d/resourceclaims/c1: "
                                 "404 Not Found: resourceclaims.resource.k8s.io \"c1\" not found");
    json_decref(st);
    const char *page = "<html>bad gateway</html>\nmore";
    kube_http_status_error(&err, "PUT", "/x", 502, NULL, page, strlen(page));
    assert_string_equal(err.msg, "PUT /x: 502 Bad Gateway: <html>bad gateway</html>");
    kube_http_status_error(&err, "DELETE", "/x", 418, NULL, NULL, 0);
    assert_string_equal(err.msg, "DELETE /x: 418");
    assert_string_equal(kube_http_reason(409), "Conflict");
    assert_string_equal(kube_http_reason(422), "Unprocessable Entity");
}

static void test_paths(void **state)
{
    (void)state;
    char p[KUBE_PATH_MAX];
    assert_int_equal(kube_path_resourceclaim(p, sizeof(p), "default", "c1"), 0);
    assert_string_equal(p, "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c1");
    assert_int_equal(kube_path_resourceslice(p, sizeof(p), "00-gpu.example.com-n1-x7k2p"), 0);
    assert_string_equal(p, KUBE_PATH_RESOURCESLICES "/00-gpu.example.com-n1-x7k2p");
    assert_int_equal(kube_path_node(p, sizeof(p), "kind-worker"), 0);
    assert_string_equal(p, "/api/v1/nodes/kind-worker");

    /* The longest valid names fit KUBE_PATH_MAX. */
    char ns[64], name[254];
    memset(ns, 'n', sizeof(ns) - 1);
    ns[sizeof(ns) - 1] = '\0';
    memset(name, 'c', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    assert_int_equal(kube_path_resourceclaim(p, sizeof(p), ns, name), 0);
    assert_int_equal(strlen(p), strlen("/apis/resource.k8s.io/v1/namespaces//resourceclaims/") +
                                    strlen(ns) + strlen(name));

    /* A path that does not fit is an error, never a cut path. */
    char small[16];
    errno = 0;
    assert_int_equal(kube_path_node(small, sizeof(small), "kind-worker"), -1);
    assert_int_equal(errno, ENAMETOOLONG);
    assert_string_equal(small, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff_bounds),
        cmocka_unit_test(test_query_escape),
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_read_token),
        cmocka_unit_test(test_status_error_text),
        cmocka_unit_test(test_paths),
    };
    return cmocka_run_group_tests_name("kube_helpers", tests, NULL, NULL);
}
