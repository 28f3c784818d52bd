// SPDX-License-Identifier: Apache-2.0
/* The metrics HTTP endpoint on libmicrohttpd (metrics_server.h). */
#include "metrics_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "metrics_test.h"
#include "xalloc.h"

#define MAX_CONNECTIONS    16
#define CONNECTION_TIMEOUT 10 /* seconds */

struct metrics_server {
    struct MHD_Daemon *daemon;
    struct metrics *m;
    metrics_state_fn state;
    void *state_ctx;
    unsigned port;
};

int metrics_parse_address(const char *address, struct sockaddr_storage *addr, socklen_t *len,
                          struct error *err)
{
    memset(addr, 0, sizeof(*addr));
    const char *colon = address ? strrchr(address, ':') : NULL;
    if (colon == NULL)
        return error_set(err,
                         "metrics address \"%s\": want HOST:PORT, e.g. :8080 or 127.0.0.1:8080",
                         address ? address : "");
    char host[64];
    size_t hlen = (size_t)(colon - address);
    if (hlen >= 2 && address[0] == '[' && address[hlen - 1] == ']') {
        address++; /* [v6]:port */
        hlen -= 2;
    }
    if (hlen >= sizeof(host))
        return error_set(err, "metrics address \"%s\": the host is too long", address);
    memcpy(host, address, hlen);
    host[hlen] = '\0';
    char *end;
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || errno != 0 || port < 0 || port > 65535)
        return error_set(err, "metrics address \"%s\": the port must be 0..65535", colon + 1);

    struct sockaddr_in *v4 = (struct sockaddr_in *)addr;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)addr;
    if (host[0] == '\0') {
        v4->sin_family = AF_INET;
        v4->sin_addr.s_addr = htonl(INADDR_ANY);
    } else if (strcmp(host, "localhost") == 0) {
        v4->sin_family = AF_INET;
        v4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    } else if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
    } else {
        return error_set(err, "metrics address: \"%s\" is not an IP address (or localhost)", host);
    }
    if (addr->ss_family == AF_INET) {
        v4->sin_port = htons((uint16_t)port);
        *len = sizeof(*v4);
    } else {
        v6->sin6_port = htons((uint16_t)port);
        *len = sizeof(*v6);
    }
    return 0;
}

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned status, const char *ctype,
                              char *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
    if (r == NULL) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    enum MHD_Result rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **req_ctx)
{
    (void)version;
    (void)upload;
    struct metrics_server *s = cls;
    /* The first call only announces the request; answer on the second. */
    if (*req_ctx == NULL) {
        *req_ctx = s;
        return MHD_YES;
    }
    if (*upload_size != 0) {
        *upload_size = 0; /* a body is ignored; the answer comes once it is read */
        return MHD_YES;
    }
    static char not_found[] = "404 page not found: the metrics are at /metrics\n";
    static char not_allowed[] = "405 method not allowed: GET /metrics\n";
    if (strcmp(url, "/metrics") != 0)
        return answer(conn, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", not_found,
                      sizeof(not_found) - 1, MHD_RESPMEM_PERSISTENT);
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return answer(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", not_allowed,
                      sizeof(not_allowed) - 1, MHD_RESPMEM_PERSISTENT);
    struct metrics_state st = {0};
    if (s->state != NULL)
        s->state(s->state_ctx, &st);
    char *text;
    size_t len;
    struct error err;
    if (metrics_render(s->m, &st, &text, &len, &err) < 0) {
        LOG_E("%s", err.msg);
        static char failed[] = "500 cannot render the metrics\n";
        return answer(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", failed,
                      sizeof(failed) - 1, MHD_RESPMEM_PERSISTENT);
    }
    return answer(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text, len,
                  MHD_RESPMEM_MUST_FREE);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    size_t n = strlen(msg);
    while (n > 0 && msg[n - 1] == '\n')
        msg[--n] = '\0';
    LOG_W("metrics server: %s", msg);
}

struct metrics_server *metrics_server_start(const char *address, struct metrics *m,
                                            metrics_state_fn state, void *state_ctx,
                                            struct error *err)
{
    struct sockaddr_storage addr;
    socklen_t alen;
    if (metrics_parse_address(address, &addr, &alen, err) < 0)
        return NULL;
    struct metrics_server *s = xcalloc(1, sizeof(*s));
    *s = (struct metrics_server){.m = m, .state = state, .state_ctx = state_ctx};
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG;
    if (addr.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER,
                                 mhd_log, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT,
                                 MHD_OPTION_END);
    if (s->daemon == NULL) {
        error_set(err,
                  "metrics server: cannot listen on %s (in use, or not an address of this "
                  "host?)",
                  address);
        free(s);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : 0;
    return s;
}

unsigned metrics_server_port(const struct metrics_server *s)
{
    return s->port;
}

void metrics_server_stop(struct metrics_server *s)
{
    if (s == NULL)
        return;
    MHD_stop_daemon(s->daemon);
    free(s);
}
