// SPDX-License-Identifier: Apache-2.0
/* Unit tests of driver/metrics: the text exposition (every sample has its
 * TYPE, histograms are cumulative and agree with _count, names and labels
 * follow the conventions, build_info), recording from many threads, the
 * address parser, and the HTTP endpoint over a real socket: bound before
 * it serves, its real URL, the port given back, and its connection limit
 * (refused at once past it; idle connections make room). */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "version.h"
#include "driver/metrics/metrics.h"
#include "driver/metrics/metrics_server.h"
#include "driver/metrics/metrics_test.h"
#include "common/tests/test_main.h"
#include "common/tests/test_must.h"

static char *render(struct metrics *m, const struct metrics_state *st)
{
    char *text;
    size_t len;
    struct error err;
    assert_int_equal(metrics_render(m, st, &text, &len, &err), 0);
    assert_int_equal(strlen(text), len);
    return text;
}

/* The value of the sample line that starts with prefix (name and labels). */
static double sample(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, prefix, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    }
    fail_msg("no sample %s in:\n%s", prefix, text);
    return -1;
}

/* A new registry, which there must be. */
static struct metrics *new_metrics(void)
{
    struct error err;
    return MUST(metrics_new(&err), err);
}

static void test_exposition_values(void **state)
{
    (void)state;
    struct metrics *m = new_metrics();
    assert_non_null(m);
    metrics_claim_op(m, METRICS_PREPARE, true, 800000);    /* 0.8 ms */
    metrics_claim_op(m, METRICS_PREPARE, true, 3000000);   /* 3 ms */
    metrics_claim_op(m, METRICS_PREPARE, false, 20000000); /* 20 ms */
    metrics_claim_op(m, METRICS_UNPREPARE, true, 100);
    metrics_api_request(m, "PATCH", 200);
    metrics_api_request(m, "PATCH", 200);
    metrics_api_request(m, "PATCH", 409);
    metrics_api_request(m, "WATCH", 0);
    metrics_api_request(m, "BREW", 418);
    metrics_health_flips(m, 2);
    metrics_latency(m, METRICS_TO_SLICE, 40000000);              /* 40 ms */
    metrics_latency(m, METRICS_TO_HEALTH_STREAM, 20000000000LL); /* 20 s: above every bucket */
    struct metrics_state st = {.claims_prepared = 2,
                               .slices = 1,
                               .devices = 4,
                               .tainted = 1,
                               .slice_syncs = 5,
                               .slice_sync_errors = 3,
                               .slice_syncs_skipped = 11,
                               .claim_status_writes = 7,
                               .claim_status_errors = 1};
    char *t = render(m, &st);

    assert_true(sample(t, "fakehw_dra_node_prepare_claims_total{result=\"success\"}") == 2);
    assert_true(sample(t, "fakehw_dra_node_prepare_claims_total{result=\"error\"}") == 1);
    assert_true(sample(t, "fakehw_dra_node_unprepare_claims_total{result=\"success\"}") == 1);
    assert_true(
        sample(
            t,
            "fakehw_dra_node_prepare_duration_seconds_bucket{result=\"success\",le=\"0.0005\"}") ==
        0);
    assert_true(
        sample(
            t,
            "fakehw_dra_node_prepare_duration_seconds_bucket{result=\"success\",le=\"0.001\"}") ==
        1);
    assert_true(
        sample(
            t,
            "fakehw_dra_node_prepare_duration_seconds_bucket{result=\"success\",le=\"0.005\"}") ==
        2);
    assert_true(
        sample(t,
               "fakehw_dra_node_prepare_duration_seconds_bucket{result=\"success\",le=\"+Inf\"}") ==
        2);
    assert_true(sample(t, "fakehw_dra_node_prepare_duration_seconds_count{result=\"success\"}") ==
                2);
    assert_float_equal(
        sample(t, "fakehw_dra_node_prepare_duration_seconds_sum{result=\"success\"}"), 0.0038,
        1e-9);
    assert_true(
        sample(t,
               "fakehw_dra_node_prepare_duration_seconds_bucket{result=\"error\",le=\"0.01\"}") ==
        0);
    assert_true(
        sample(t,
               "fakehw_dra_node_prepare_duration_seconds_bucket{result=\"error\",le=\"0.025\"}") ==
        1);
    assert_true(sample(t, "fakehw_dra_claims_prepared") == 2);
    assert_true(sample(t, "fakehw_dra_resourceslices") == 1);
    assert_true(sample(t, "fakehw_dra_devices_tainted") == 1);
    assert_true(sample(t, "fakehw_dra_resourceslice_sync_errors_total") == 3);
    assert_true(sample(t, "fakehw_dra_resourceslice_syncs_skipped_total") == 11);
    assert_true(sample(t, "fakehw_dra_claim_status_writes_total") == 7);
    assert_true(sample(t, "fakehw_dra_health_flips_total") == 2);
    assert_true(sample(t, "fakehw_dra_health_change_to_slice_seconds_bucket{le=\"0.025\"}") == 0);
    assert_true(sample(t, "fakehw_dra_health_change_to_slice_seconds_bucket{le=\"0.05\"}") == 1);
    assert_true(sample(t, "fakehw_dra_health_change_to_slice_seconds_count") == 1);
    assert_true(sample(t, "fakehw_dra_health_change_to_health_stream_seconds_bucket{le=\"10\"}") ==
                0);
    assert_true(
        sample(t, "fakehw_dra_health_change_to_health_stream_seconds_bucket{le=\"+Inf\"}") == 1);
    assert_float_equal(sample(t, "fakehw_dra_health_change_to_health_stream_seconds_sum"), 20.0,
                       1e-9);
    assert_true(sample(t, "fakehw_dra_health_change_to_claim_status_seconds_count") == 0);
    assert_true(sample(t, "fakehw_dra_api_requests_total{verb=\"PATCH\",code=\"200\"}") == 2);
    assert_true(sample(t, "fakehw_dra_api_requests_total{verb=\"PATCH\",code=\"409\"}") == 1);
    assert_true(sample(t, "fakehw_dra_api_requests_total{verb=\"WATCH\",code=\"<error>\"}") == 1);
    assert_true(sample(t, "fakehw_dra_api_requests_total{verb=\"other\",code=\"418\"}") == 1);
    /* Combinations never seen are not printed. */
    assert_null(strstr(t, "verb=\"GET\""));
    char build_info[128];
    snprintf(build_info, sizeof(build_info),
             "fakehw_dra_build_info{version=\"%s\",git_commit=\"%s\"}", FAKEHW_DRA_VERSION,
             fakehw_git_commit);
    assert_true(sample(t, build_info) == 1);
    assert_non_null(strstr(t, "\n# TYPE fakehw_dra_build_info gauge\n"));
    free(t);
    metrics_free(m);
}

/* The format rules Prometheus' parser applies: every sample belongs to the
 * family of the TYPE line before it, a family is declared once, counters end
 * in _total, histograms have cumulative buckets ending in +Inf that equal
 * _count, and every line ends with a newline. */
static void test_exposition_format(void **state)
{
    (void)state;
    struct metrics *m = new_metrics();
    for (int i = 0; i < 50; i++)
        metrics_claim_op(m, METRICS_PREPARE, i % 7 != 0, (long long)i * 1000000);
    metrics_api_request(m, "GET", 200);
    struct metrics_state st = {0};
    char *t = render(m, &st);
    assert_true(strlen(t) > 0 && t[strlen(t) - 1] == '\n');

    char family[128] = "", type[32] = "", seen[64][128];
    size_t nseen = 0;
    unsigned long last_bucket = 0;
    bool in_buckets = false;
    char *save, *line;
    for (line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "# HELP ", 7) == 0)
            continue;
        if (strncmp(line, "# TYPE ", 7) == 0) {
            assert_int_equal(sscanf(line + 7, "%127s %31s", family, type), 2);
            assert_int_equal(strncmp(family, METRICS_PREFIX, strlen(METRICS_PREFIX)), 0);
            for (size_t i = 0; i < nseen; i++)
                assert_string_not_equal(seen[i], family);
            assert_true(nseen < 64);
            snprintf(seen[nseen++], sizeof(seen[0]), "%s", family);
            if (strcmp(type, "counter") == 0)
                assert_non_null(strstr(family, "_total"));
            if (strcmp(type, "histogram") == 0)
                assert_non_null(strstr(family, "_seconds"));
            in_buckets = false;
            continue;
        }
        assert_true(line[0] != '#');
        assert_true(family[0] != '\0');
        assert_int_equal(strncmp(line, family, strlen(family)), 0);
        const char *rest = line + strlen(family);
        assert_true(*rest == ' ' || *rest == '{' || *rest == '_');
        if (strcmp(type, "histogram") == 0) {
            unsigned long v = strtoul(strrchr(line, ' ') + 1, NULL, 10);
            if (strncmp(rest, "_bucket{", 8) == 0) {
                if (in_buckets)
                    assert_true(v >= last_bucket);
                last_bucket = v;
                in_buckets = strstr(rest, "le=\"+Inf\"") == NULL;
            } else if (strncmp(rest, "_count", 6) == 0) {
                assert_int_equal(v, last_bucket);
            } else {
                assert_int_equal(strncmp(rest, "_sum", 4), 0);
            }
        }
    }
    free(t);
    metrics_free(m);
}

struct recorder {
    struct metrics *m;
    int n;
};

static void *record(void *arg)
{
    struct recorder *r = arg;
    for (int i = 0; i < r->n; i++) {
        metrics_claim_op(r->m, METRICS_PREPARE, true, 1000);
        metrics_api_request(r->m, "GET", 200);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    struct metrics *m = new_metrics();
    pthread_t th[4];
    struct recorder r = {m, 10000};
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, record, &r), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    struct metrics_state st = {0};
    char *t = render(m, &st);
    assert_true(sample(t, "fakehw_dra_node_prepare_claims_total{result=\"success\"}") == 40000);
    assert_true(sample(t, "fakehw_dra_api_requests_total{verb=\"GET\",code=\"200\"}") == 40000);
    free(t);
    metrics_free(m);
}

static void test_addresses(void **state)
{
    (void)state;
    struct sockaddr_storage a;
    socklen_t len;
    struct error err;
    assert_int_equal(metrics_parse_address(":8080", &a, &len, &err), 0);
    assert_int_equal(a.ss_family, AF_INET);
    assert_int_equal(ntohs(((struct sockaddr_in *)&a)->sin_port), 8080);
    assert_int_equal(((struct sockaddr_in *)&a)->sin_addr.s_addr, htonl(INADDR_ANY));
    assert_int_equal(metrics_parse_address("127.0.0.1:0", &a, &len, &err), 0);
    assert_int_equal(((struct sockaddr_in *)&a)->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
    assert_int_equal(metrics_parse_address("localhost:9400", &a, &len, &err), 0);
    assert_int_equal(((struct sockaddr_in *)&a)->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
    assert_int_equal(metrics_parse_address("[::1]:9400", &a, &len, &err), 0);
    assert_int_equal(a.ss_family, AF_INET6);
    assert_int_equal(len, sizeof(struct sockaddr_in6));

    assert_int_equal(metrics_parse_address("8080", &a, &len, &err), -1);
    assert_non_null(strstr(err.msg, "want HOST:PORT"));
    assert_int_equal(metrics_parse_address("0.0.0.0:80x", &a, &len, &err), -1);
    assert_non_null(strstr(err.msg, "the port must be 0..65535"));
    assert_int_equal(metrics_parse_address(":65536", &a, &len, &err), -1);
    assert_int_equal(metrics_parse_address("metrics.example.com:80", &a, &len, &err), -1);
    assert_non_null(strstr(err.msg, "is not an IP address"));
}

/* One HTTP/1.0 request to 127.0.0.1:port; the whole answer. */
static char *http(unsigned port, const char *request)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(write(fd, request, strlen(request)), (ssize_t)strlen(request));
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    ssize_t n;
    while ((n = read(fd, buf + len, cap - 1 - len)) > 0)
        len += (size_t)n;
    buf[len] = '\0';
    close(fd);
    return buf;
}

static void fill_state(void *ctx, struct metrics_state *st)
{
    st->claims_prepared = *(size_t *)ctx;
}

/* Bound and not serving yet: a connection waits in the listen queue, the
 * URL names the port the kernel picked, and stop gives the port back. */
static void test_bind_before_serving(void **state)
{
    (void)state;
    struct error err;
    struct metrics_server *s = metrics_server_bind("127.0.0.1:0", &err);
    assert_non_null(s);
    unsigned port = metrics_server_port(s);
    assert_true(port > 0);
    char want[64];
    snprintf(want, sizeof(want), "http://127.0.0.1:%u/metrics", port);
    assert_string_equal(metrics_server_url(s), want);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    close(fd);

    /* Taken: a second bind names the address and the reason. */
    char addr[32];
    snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
    assert_null(metrics_server_bind(addr, &err));
    assert_non_null(strstr(err.msg, "cannot listen on 127.0.0.1:"));
    assert_non_null(strstr(err.msg, strerror(EADDRINUSE)));
    metrics_server_stop(s);
    s = metrics_server_bind(addr, &err);
    assert_non_null(s);
    metrics_server_stop(s);

    /* Every interface: the URL says 0.0.0.0; IPv6 in brackets. */
    s = metrics_server_bind(":0", &err);
    assert_non_null(s);
    snprintf(want, sizeof(want), "http://0.0.0.0:%u/metrics", metrics_server_port(s));
    assert_string_equal(metrics_server_url(s), want);
    metrics_server_stop(s);
    s = metrics_server_bind("[::1]:0", &err);
    if (s != NULL) { /* hosts without IPv6 have no ::1 */
        snprintf(want, sizeof(want), "http://[::1]:%u/metrics", metrics_server_port(s));
        assert_string_equal(metrics_server_url(s), want);
        metrics_server_stop(s);
    }
    assert_null(metrics_server_bind("9400", &err));
    assert_non_null(strstr(err.msg, "want HOST:PORT"));
}

static void test_server(void **state)
{
    (void)state;
    struct metrics *m = new_metrics();
    struct error err;
    size_t prepared = 3;
    metrics_health_flips(m, 1);
    struct metrics_server *s = metrics_server_bind("127.0.0.1:0", &err);
    assert_non_null(s);
    assert_int_equal(metrics_server_serve(s, m, fill_state, &prepared, &err), 0);
    unsigned port = metrics_server_port(s);
    assert_true(port > 0);

    char *r = http(port, "GET /metrics HTTP/1.0\r\n\r\n");
    assert_non_null(strstr(r, " 200 OK\r\n"));
    assert_non_null(strstr(r, "Content-Type: text/plain; version=0.0.4; charset=utf-8"));
    assert_non_null(strstr(r, "\nfakehw_dra_claims_prepared 3\n"));
    assert_non_null(strstr(r, "\nfakehw_dra_health_flips_total 1\n"));
    free(r);
    r = http(port, "GET / HTTP/1.0\r\n\r\n");
    assert_non_null(strstr(r, " 404 "));
    free(r);
    r = http(port, "POST /metrics HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi");
    assert_non_null(strstr(r, " 405 "));
    free(r);

    /* Stopping a server that served closes its socket too. */
    char addr[32];
    snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
    metrics_server_stop(s);
    s = metrics_server_bind(addr, &err);
    assert_non_null(s);
    metrics_server_stop(s);
    metrics_free(m);
}

/* A connection that sent half a request and waits. */
static int half_request(unsigned port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    static const char half[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
    assert_int_equal(write(fd, half, sizeof(half) - 1), (ssize_t)(sizeof(half) - 1));
    return fd;
}

/* Whether the server closed fd, waiting up to ms: 1 closed (end of stream
 * or reset), 0 still open. */
static int closed_within(int fd, long ms)
{
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    char c;
    ssize_t n = read(fd, &c, 1);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Past the limit a new connection is refused at once (closed, not queued)
 * while the others are fresh; once one has been idle long enough it makes
 * room, and a scrape is answered. */
static void test_server_connection_limit(void **state)
{
    (void)state;
    struct metrics *m = new_metrics();
    struct error err;
    struct metrics_server *s = metrics_server_bind("127.0.0.1:0", &err);
    assert_non_null(s);
    metrics_server_test_limits(s, 4, 60000);
    assert_int_equal(metrics_server_serve(s, m, NULL, NULL, &err), 0);
    unsigned port = metrics_server_port(s);
    int held[4];
    for (int i = 0; i < 4; i++)
        held[i] = half_request(port);
    int extra = half_request(port);
    assert_true(closed_within(extra, 5000));
    close(extra);
    assert_false(closed_within(held[0], 100));
    for (int i = 0; i < 4; i++)
        close(held[i]);
    metrics_server_stop(s);

    s = metrics_server_bind("127.0.0.1:0", &err);
    assert_non_null(s);
    metrics_server_test_limits(s, 4, 200);
    assert_int_equal(metrics_server_serve(s, m, NULL, NULL, &err), 0);
    port = metrics_server_port(s);
    for (int i = 0; i < 4; i++)
        held[i] = half_request(port);
    sleep_ms(300);
    char *r = http(port, "GET /metrics HTTP/1.0\r\n\r\n");
    assert_non_null(strstr(r, " 200 OK\r\n"));
    free(r);
    int evicted = 0;
    for (int i = 0; i < 4; i++) {
        evicted += closed_within(held[i], 100);
        close(held[i]);
    }
    assert_int_equal(evicted, 1);
    metrics_server_stop(s);
    metrics_free(m);
}

TEST_MAIN("driver/metrics", test_exposition_values, test_exposition_format, test_threads,
          test_addresses, test_bind_before_serving, test_server, test_server_connection_limit)
