// SPDX-License-Identifier: Apache-2.0
/* Unit tests for kube_config_load: kubeconfig files (good and bad) and the
 * in-cluster service account (through KUBE_SERVICEACCOUNT_DIR). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube_client.h"
#include "common/tests/test_main.h"
#include "common/tests/tmp_dir.h"

#define PEM_CERT "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
#define PEM_KEY  "-----BEGIN EC PRIVATE KEY-----\nMHcfake\n-----END EC PRIVATE KEY-----\n"
/* base64 of PEM_CERT and PEM_KEY */
#define PEM_CERT_B64                                                                               \
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJmYWtlCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"
#define PEM_KEY_B64                                                                                \
    "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY2Zha2UKLS0tLS1FTkQgRUMgUFJJVkFURSBLRVktLS0tLQo="

static char dir[64];

static void write_file(const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *path_of(const char *name)
{
    static char p[256];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return p;
}

static int setup(void **state)
{
    (void)state;
    if (!tmp_dir_make(dir, sizeof(dir), "kubeconfig-test"))
        return -1;
    char sub[128];
    snprintf(sub, sizeof(sub), "%s/sub", dir);
    mkdir(sub, 0755);
    write_file("ca.crt", PEM_CERT);
    write_file("sub/client.crt", PEM_CERT);
    write_file("sub/client.key", PEM_KEY);
    write_file("token", "  file-token\n");
    write_file("not-pem", "hello\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tmp_dir_remove(dir);
}

/* Loads text as a kubeconfig; returns the rc and leaves cfg/err filled. */
static int load(const char *text, struct kube_config *cfg, struct error *err)
{
    write_file("config", text);
    return kube_config_load(path_of("config"), cfg, err);
}

static void expect_error(const char *text, const char *expected)
{
    struct kube_config cfg;
    struct error err = {{0}};
    assert_int_equal(load(text, &cfg, &err), -1);
    char want[1024];
    snprintf(want, sizeof(want), expected, path_of("config"));
    assert_string_equal(err.msg, want);
    assert_null(cfg.server); /* nothing left behind */
}

/* One text field of a config: got is want (both may be NULL). */
static void expect_text(const char *field, const char *got, const char *want)
{
    if ((got == NULL) != (want == NULL) || (got != NULL && strcmp(got, want) != 0))
        fail_msg("%s: %s%s%s, not %s%s%s", field, got ? "\"" : "", got ? got : "NULL",
                 got ? "\"" : "", want ? "\"" : "", want ? want : "NULL", want ? "\"" : "");
}

/* cfg is want in every field: NULL in want is NULL in cfg. */
static void expect_config(const struct kube_config *cfg, const struct kube_config *want)
{
#define EXPECT_TEXT(field) expect_text(#field, cfg->field, want->field)
    EXPECT_TEXT(server);
    EXPECT_TEXT(ca_file);
    EXPECT_TEXT(ca_data);
    EXPECT_TEXT(client_cert_file);
    EXPECT_TEXT(client_cert_data);
    EXPECT_TEXT(client_key_file);
    EXPECT_TEXT(client_key_data);
    EXPECT_TEXT(token);
    EXPECT_TEXT(token_file);
#undef EXPECT_TEXT
    assert_int_equal(cfg->insecure_skip_tls_verify, want->insecure_skip_tls_verify);
}

/* text loads, and as want. */
static void expect_loads(const char *text, const struct kube_config *want)
{
    struct kube_config cfg;
    struct error err = {{0}};
    if (load(text, &cfg, &err) != 0)
        fail_msg("%s", err.msg);
    expect_config(&cfg, want);
    kube_config_free(&cfg);
}

static void test_token(void **state)
{
    (void)state;
    expect_loads("apiVersion: v1\nkind: Config\ncurrent-context: dev\n"
                 "clusters:\n- name: c1\n  cluster:\n    server: https://10.0.0.1:6443/\n"
                 "    insecure-skip-tls-verify: true\n"
                 "contexts:\n- name: dev\n  context: {cluster: c1, user: u1, namespace: x}\n"
                 "users:\n- name: u1\n  user:\n    token: abc.def\n",
                 &(struct kube_config){.server = "https://10.0.0.1:6443",
                                       .token = "abc.def",
                                       .insecure_skip_tls_verify = true});
}

static void test_client_cert_data(void **state)
{
    (void)state;
    expect_loads("current-context: kind-kind\n"
                 "clusters:\n- cluster:\n    certificate-authority-data: " PEM_CERT_B64 "\n"
                 "    server: https://127.0.0.1:41233\n  name: kind-kind\n"
                 "contexts:\n- context:\n    cluster: kind-kind\n    user: kind-kind\n"
                 "  name: kind-kind\n"
                 "users:\n- name: kind-kind\n  user:\n"
                 "    client-certificate-data: " PEM_CERT_B64 "\n"
                 "    client-key-data: " PEM_KEY_B64 "\n",
                 &(struct kube_config){.server = "https://127.0.0.1:41233",
                                       .ca_data = PEM_CERT,
                                       .client_cert_data = PEM_CERT,
                                       .client_key_data = PEM_KEY});
}

static void test_relative_files(void **state)
{
    (void)state;
    char ca[256], cert[256], key[256], token[256];
    snprintf(ca, sizeof(ca), "%s/ca.crt", dir);
    snprintf(cert, sizeof(cert), "%s/sub/client.crt", dir);
    snprintf(key, sizeof(key), "%s/sub/client.key", dir);
    snprintf(token, sizeof(token), "%s/token", dir);
    expect_loads("current-context: a\n"
                 "clusters:\n- name: c\n  cluster:\n    server: 127.0.0.1:6443\n"
                 "    certificate-authority: ca.crt\n"
                 "contexts:\n- name: a\n  context:\n    cluster: c\n    user: u\n"
                 "users:\n- name: u\n  user:\n    client-certificate: sub/client.crt\n"
                 "    client-key: sub/client.key\n    tokenFile: token\n",
                 &(struct kube_config){.server = "https://127.0.0.1:6443", /* https added */
                                       .ca_file = ca,
                                       .client_cert_file = cert,
                                       .client_key_file = key,
                                       .token_file = token});
}

static void test_absolute_file_and_current_context(void **state)
{
    (void)state;
    char text[2048];
    snprintf(text, sizeof(text),
             "current-context: second\n"
             "clusters:\n- name: one\n  cluster: {server: 'http://one:1'}\n"
             "- name: two\n  cluster:\n    server: http://two:2\n"
             "    certificate-authority: %s/ca.crt\n"
             "contexts:\n- name: first\n  context: {cluster: one, user: u1}\n"
             "- name: second\n  context: {cluster: two, user: u2}\n"
             "users:\n- name: u1\n  user: {token: one}\n- name: u2\n  user: {token: two}\n",
             dir);
    struct kube_config cfg;
    struct error err = {{0}};
    assert_int_equal(load(text, &cfg, &err), 0);
    assert_string_equal(cfg.server, "http://two:2");
    assert_string_equal(cfg.token, "two");
    char want[256];
    snprintf(want, sizeof(want), "%s/ca.crt", dir);
    assert_string_equal(cfg.ca_file, want);
    kube_config_free(&cfg);
}

static void test_missing_current_context(void **state)
{
    (void)state;
    expect_error("clusters: []\ncontexts: []\n", "kubeconfig %s: current-context is not set");
}

static void test_unknown_context(void **state)
{
    (void)state;
    expect_error("current-context: prod\ncontexts:\n- name: dev\n  context: {cluster: c}\n",
                 "kubeconfig %s: current-context \"prod\": no such entry in contexts");
}

static void test_unknown_cluster_and_user(void **state)
{
    (void)state;
    expect_error("current-context: kind\ncontexts:\n- name: kind\n  context: {cluster: c}\n",
                 "kubeconfig %s: context \"kind\": cluster \"c\" not found in clusters");
    expect_error("current-context: kind\ncontexts:\n- name: kind\n  context: {cluster: c, user: "
                 "u}\nclusters:\n- name: c\n  cluster: {server: 'https://x'}\n",
                 "kubeconfig %s: context \"kind\": user \"u\" not found in users");
    expect_error("current-context: kind\ncontexts:\n- name: kind\n  context: {user: u}\n",
                 "kubeconfig %s:4: context \"kind\": cluster is not set");
}

static void test_missing_server(void **state)
{
    (void)state;
    expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n"
                 "clusters:\n- name: c\n  cluster:\n    insecure-skip-tls-verify: true\n",
                 "kubeconfig %s:8: cluster \"c\": server is not set");
}

static void test_bad_base64(void **state)
{
    (void)state;
    expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\n"
                 "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
                 "users:\n- name: u\n  user:\n    client-certificate-data: LS0t*LS0\n"
                 "    client-key-data: " PEM_KEY_B64 "\n",
                 "kubeconfig %s:11: user \"u\": client-certificate-data: invalid base64: "
                 "character '*' (0x2a) at offset 4");
    expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n"
                 "clusters:\n- name: c\n  cluster:\n    server: https://x\n"
                 "    certificate-authority-data: aGVsbG8K\n",
                 "kubeconfig %s:9: cluster \"c\": certificate-authority-data: no PEM block "
                 "(\"-----BEGIN ...\") in it");
}

static void test_file_not_found(void **state)
{
    (void)state;
    char want[512];
    snprintf(want, sizeof(want),
             "kubeconfig %%s:8: cluster \"c\": certificate-authority: %s/missing.crt: No such "
             "file or directory",
             dir);
    expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n"
                 "clusters:\n- name: c\n  cluster:\n    certificate-authority: missing.crt\n"
                 "    server: https://x\n",
                 want);
    struct kube_config cfg;
    struct error err = {{0}};
    assert_int_equal(kube_config_load("/nonexistent/kubeconfig", &cfg, &err), -1);
    assert_string_equal(err.msg, "kubeconfig: /nonexistent/kubeconfig: No such file or directory");
    assert_int_equal(kube_config_load("/a/config:/b/config", &cfg, &err), -1);
    assert_string_equal(err.msg, "kubeconfig (a list of files is not supported): "
                                 "/a/config:/b/config: No such file or directory");
}

static void test_other_errors(void **state)
{
    (void)state;
    expect_error("", "kubeconfig %s: the file is empty");
    expect_error("current-context: [a\n",
                 "kubeconfig %s:2:1: invalid YAML: did not find expected ',' or ']'");
    expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\n"
                 "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
                 "users:\n- name: u\n  user:\n    exec:\n      command: aws\n",
                 "kubeconfig %s:11: user \"u\": exec credentials are not supported; use a token, "
                 "tokenFile or client certificate");
    expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\n"
                 "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
                 "users:\n- name: u\n  user:\n    client-certificate: sub/client.crt\n",
                 "kubeconfig %s:11: user \"u\": client-certificate is set but client-key is not");
    expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n"
                 "clusters:\n- name: c\n  cluster:\n    server: https://x\n"
                 "    certificate-authority: ca.crt\n    certificate-authority-data: aGk=\n",
                 "kubeconfig %s:9: cluster \"c\": certificate-authority and "
                 "certificate-authority-data are both set; use one");
    expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n"
                 "clusters:\n- name: c\n  cluster:\n    server: https://x\n"
                 "    certificate-authority: ca.crt\n    insecure-skip-tls-verify: true\n",
                 "kubeconfig %s:10: cluster \"c\": insecure-skip-tls-verify cannot be combined "
                 "with a certificate authority");
    expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n"
                 "clusters:\n- name: c\n  cluster:\n    server: ftp://x\n",
                 "kubeconfig %s:8: cluster \"c\": server \"ftp://x\" is not an http(s) URL");
    expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n"
                 "clusters:\n- name: c\n  cluster:\n    server: https://x\n"
                 "    insecure-skip-tls-verify: maybe\n",
                 "kubeconfig %s:9: cluster \"c\": insecure-skip-tls-verify: \"maybe\" is not true "
                 "or false");
    expect_error("current-context: a\ncontexts: {a: b}\n",
                 "kubeconfig %s:2: contexts must be a list");
}

#define USER_CONFIG(user_body)                                                                     \
    "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\n"                 \
    "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"                                     \
    "users:\n- name: u\n  user:\n" user_body

/* Every value and file of a kubeconfig is checked alike: a token inline or
 * in a file (size, control characters), files of any kind (regular files
 * only: a FIFO would block the start in open(2)), *-data sizes. */
static void test_untrusted_values(void **state)
{
    (void)state;
    /* A CR LF in a token would add a header line to every request. */
    expect_error(USER_CONFIG("    token: \"abc\\r\\nX-Injected: 1\"\n"),
                 "kubeconfig %s:11: user \"u\": token: the token contains a control character "
                 "(0x0d) at byte 3");
    size_t big = 3u << 20;
    char *text = malloc(big + 512);
    assert_non_null(text);
    int n = snprintf(text, 512, USER_CONFIG("    token: "));
    memset(text + n, 'a', big);
    snprintf(text + n + big, 16, "\n");
    expect_error(text, "kubeconfig %s:11: user \"u\": token: the token has 3145728 bytes, more "
                       "than the limit of 65536");
    /* A token file past the limit: its size is named. */
    memset(text, 'a', 70000);
    text[70000] = '\0';
    write_file("big-token", text);
    char want[1024];
    snprintf(want, sizeof(want),
             "kubeconfig %%s:11: user \"u\": tokenFile: %s/big-token: 70000 bytes, more than the "
             "limit of 65536",
             dir);
    expect_error(USER_CONFIG("    tokenFile: big-token\n"), want);
    /* certificate-authority-data decoded past the PEM file limit. */
    size_t raw = (1u << 20) + 3, b64 = raw / 3 * 4;
    n = snprintf(text, 512,
                 "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n"
                 "clusters:\n- name: c\n  cluster:\n    server: https://x\n"
                 "    certificate-authority-data: ");
    char *big_text = realloc(text, (size_t)n + b64 + 16);
    assert_non_null(big_text);
    text = big_text;
    memset(text + n, 'A', b64);
    snprintf(text + n + b64, 16, "\n");
    expect_error(text, "kubeconfig %s:9: cluster \"c\": certificate-authority-data: 1048578 "
                       "bytes decoded, more than the limit of 1048576");
    free(text);
    expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n"
                 "clusters:\n- name: c\n  cluster:\n    server: \"https://x\\r\\nHost: y\"\n",
                 "kubeconfig %s:8: cluster \"c\": server contains a control character (0x0d) at "
                 "byte 9");

    /* FIFOs and directories: refused at once, never opened for a blocking
     * read (the alarm ends the test if one blocks). */
    char fifo[256];
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    alarm(10);
    snprintf(want, sizeof(want),
             "kubeconfig %%s:11: user \"u\": tokenFile: %s/fifo: a FIFO, not a regular file", dir);
    expect_error(USER_CONFIG("    tokenFile: fifo\n"), want);
    snprintf(want, sizeof(want),
             "kubeconfig %%s:8: cluster \"c\": certificate-authority: %s/fifo: a FIFO, not a "
             "regular file",
             dir);
    expect_error("current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\n"
                 "clusters:\n- name: c\n  cluster:\n    certificate-authority: fifo\n"
                 "    server: https://x\n",
                 want);
    snprintf(want, sizeof(want),
             "kubeconfig %%s:11: user \"u\": client-certificate: %s/sub: a directory, not a "
             "regular file",
             dir);
    expect_error(USER_CONFIG("    client-certificate: sub\n    client-key: sub/client.key\n"),
                 want);
    struct kube_config cfg;
    struct error err = {{0}};
    assert_int_equal(kube_config_load(fifo, &cfg, &err), -1);
    snprintf(want, sizeof(want), "kubeconfig: %s: a FIFO, not a regular file", fifo);
    assert_string_equal(err.msg, want);
    alarm(0);
    unlink(fifo);
}

/* Nesting and anchors are bounded before libyaml's loader sees the file:
 * its scanner is quadratic in flow nesting, its loader in anchors. */
static void test_yaml_bounds(void **state)
{
    (void)state;
    size_t depth = 100000, size = 2 * depth + 64;
    char *text = malloc(size);
    assert_non_null(text);
    size_t used = (size_t)snprintf(text, size, "current-context: ");
    memset(text + used, '[', depth);
    memset(text + used + depth, ']', depth);
    snprintf(text + used + 2 * depth, size - used - 2 * depth, "\n");
    expect_error(text, "kubeconfig %s:1:81: YAML nested deeper than 64 levels of mappings and "
                       "lists (a kubeconfig needs 4)");
    used = (size_t)snprintf(text, size, "x: [");
    for (int i = 0; i < 129; i++)
        used += (size_t)snprintf(text + used, size - used, "&a%03d 1, ", i);
    snprintf(text + used, size - used, "]\n");
    expect_error(text, "kubeconfig %s:1:1157: more than 128 YAML anchors (&name)");
    free(text);
}

/* ---------- in-cluster ---------- */

static void set_in_cluster(const char *host, const char *port, const char *sa_dir)
{
    setenv("KUBERNETES_SERVICE_HOST", host, 1);
    setenv("KUBERNETES_SERVICE_PORT", port, 1);
    setenv("KUBE_SERVICEACCOUNT_DIR", sa_dir, 1);
}

static void test_in_cluster(void **state)
{
    (void)state;
    char sa[128];
    snprintf(sa, sizeof(sa), "%s/sa", dir);
    mkdir(sa, 0755);
    write_file("sa/token", "eyJhbGciOi.payload.sig\n");
    write_file("sa/ca.crt", PEM_CERT);
    set_in_cluster("10.96.0.1", "443", sa);
    struct kube_config cfg;
    struct error err = {{0}};
    assert_int_equal(kube_config_load(NULL, &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://10.96.0.1:443");
    char want[256];
    snprintf(want, sizeof(want), "%s/token", sa);
    assert_string_equal(cfg.token_file, want);
    assert_null(cfg.token); /* read per request, never cached */
    snprintf(want, sizeof(want), "%s/ca.crt", sa);
    assert_string_equal(cfg.ca_file, want);
    kube_config_free(&cfg);

    set_in_cluster("fd00:10:96::1", "6443", sa);
    assert_int_equal(kube_config_load("", &cfg, &err), 0);
    assert_string_equal(cfg.server, "https://[fd00:10:96::1]:6443");
    kube_config_free(&cfg);
}

static void test_in_cluster_errors(void **state)
{
    (void)state;
    char sa[128];
    snprintf(sa, sizeof(sa), "%s/sa-empty", dir);
    mkdir(sa, 0755);
    struct kube_config cfg;
    struct error err = {{0}};

    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(kube_config_load(NULL, &cfg, &err), -1);
    assert_string_equal(err.msg, "in-cluster config: KUBERNETES_SERVICE_HOST and "
                                 "KUBERNETES_SERVICE_PORT are not set (not running in a pod? "
                                 "give a kubeconfig instead)");

    set_in_cluster("10.96.0.1", "https", sa);
    assert_int_equal(kube_config_load(NULL, &cfg, &err), -1);
    assert_string_equal(err.msg, "in-cluster config: KUBERNETES_SERVICE_PORT \"https\" is not a "
                                 "port");

    set_in_cluster("10.96.0.1", "443", sa);
    assert_int_equal(kube_config_load(NULL, &cfg, &err), -1);
    char want[512];
    snprintf(want, sizeof(want),
             "in-cluster config: service account token: %s/token: No such file or directory", sa);
    assert_string_equal(err.msg, want);
    assert_null(cfg.server);

    write_file("sa-empty/token", " \n");
    assert_int_equal(kube_config_load(NULL, &cfg, &err), -1);
    snprintf(want, sizeof(want),
             "in-cluster config: service account token: %s/token: the token file is empty", sa);
    assert_string_equal(err.msg, want);

    write_file("sa-empty/token", "t\n");
    assert_int_equal(kube_config_load(NULL, &cfg, &err), -1);
    snprintf(want, sizeof(want),
             "in-cluster config: service account CA: %s/ca.crt: No such file or directory", sa);
    assert_string_equal(err.msg, want);
    unsetenv("KUBE_SERVICEACCOUNT_DIR");
}

TEST_MAIN_GROUP_FIXTURE("kube_config", setup, teardown, test_token, test_client_cert_data,
                        test_relative_files, test_absolute_file_and_current_context,
                        test_missing_current_context, test_unknown_context,
                        test_unknown_cluster_and_user, test_missing_server, test_bad_base64,
                        test_file_not_found, test_other_errors, test_yaml_bounds,
                        test_untrusted_values, test_in_cluster, test_in_cluster_errors)
