// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the client's pure helpers: query escaping, base64, token files, and the error text
 * built from API answers. */
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
#include "common/tests/test_main.h"

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

TEST_MAIN("kube_helpers", test_query_escape, test_base64, test_read_token, test_status_error_text,
          test_paths)
