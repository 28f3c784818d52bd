// SPDX-License-Identifier: Apache-2.0
/* The metrics HTTP endpoint on libmicrohttpd (metrics_server.h). */
#include "metrics_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "metrics_test.h"
#include "retry.h"
#include "xalloc.h"

/* Connections served at once.  One past it is refused at once (closed as
 * soon as it is accepted) rather than left in the listen queue, where a
 * burst of idle connections kept scrapes waiting for minutes. */
#define MAX_CONNECTIONS 16
/* A connection without a request in progress for this long (one that sent
 * half a request and stopped, or a keep-alive between scrapes) is closed
 * to make room for a new one, whatever it still trickles in. */
#define IDLE_EVICT_MS 1000
/* libmicrohttpd closes a connection idle this long by itself (seconds). */
#define CONNECTION_TIMEOUT 2

/* One accepted connection; the server's thread alone touches these. */
struct conn {
    struct conn *next;
    int fd;
    long long idle_since; /* monotonic_ms: accepted, or its last answer done */
    bool busy;            /* a request has come in and is not answered yet */
    bool closing;         /* shut down to make room */
};

struct metrics_server {
    int listen_fd;
    struct MHD_Daemon *daemon; /* NULL until serving */
    struct metrics *m;
    metrics_state_fn state;
    void *state_ctx;
    unsigned port;
    char url[96];
    unsigned max_connections;
    long idle_evict_ms;
    struct conn *conns; /* the server's thread only */
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

/* --- the connection limit --- */

static struct conn *conn_of(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci != NULL ? ci->socket_context : NULL;
}

/* Accept policy: called for every new connection before it counts.  Past
 * the limit, the connection idle the longest makes room if it has been
 * idle long enough; otherwise the new one is refused (closed at once). */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    (void)addr;
    (void)addrlen;
    struct metrics_server *s = cls;
    unsigned live = 0;
    struct conn *oldest = NULL;
    for (struct conn *c = s->conns; c != NULL; c = c->next) {
        if (c->closing)
            continue;
        live++;
        if (!c->busy && (oldest == NULL || c->idle_since < oldest->idle_since))
            oldest = c;
    }
    if (live < s->max_connections)
        return MHD_YES;
    if (oldest == NULL || monotonic_ms() - oldest->idle_since < s->idle_evict_ms)
        return MHD_NO;
    /* The server sees the end of the stream and closes it, as if the
     * client had. */
    shutdown(oldest->fd, SHUT_RDWR);
    oldest->closing = true;
    return MHD_YES;
}

static void on_connection(void *cls, struct MHD_Connection *connection, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode code)
{
    struct metrics_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct conn *c = xcalloc(1, sizeof(*c));
        *c = (struct conn){.next = s->conns,
                           .fd = ci != NULL ? (int)ci->connect_fd : -1,
                           .idle_since = monotonic_ms()};
        s->conns = c;
        *socket_ctx = c;
        return;
    }
    struct conn *gone = *socket_ctx;
    for (struct conn **at = &s->conns; *at != NULL; at = &(*at)->next) {
        if (*at == gone) {
            *at = gone->next;
            free(gone);
            break;
        }
    }
    *socket_ctx = NULL;
}

static void on_completed(void *cls, struct MHD_Connection *connection, void **req_ctx,
                         enum MHD_RequestTerminationCode code)
{
    (void)cls;
    (void)req_ctx;
    (void)code;
    struct conn *c = conn_of(connection);
    if (c != NULL) {
        c->busy = false;
        c->idle_since = monotonic_ms();
    }
}

/* --- requests --- */

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
        struct conn *c = conn_of(conn);
        if (c != NULL)
            c->busy = true; /* its headers are in: not idle */
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
    LOG_W("metrics server: %s", log_vmessage(msg, sizeof(msg), fmt, ap));
}

/* A listening TCP socket bound to addr; -1 with err. */
static int listen_on(const struct sockaddr_storage *addr, socklen_t alen, const char *address,
                     struct error *err)
{
    int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return error_set_errno(err, errno, "metrics server: cannot listen on %s", address);
    int on = 1;
    /* As libmicrohttpd sets them on the sockets it opens itself. */
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (addr->ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
    if (bind(fd, (const struct sockaddr *)addr, alen) < 0 || listen(fd, SOMAXCONN) < 0) {
        int e = errno;
        close(fd);
        return error_set_errno(err, e,
                               "metrics server: cannot listen on %s (in use, or not an address of "
                               "this host?)",
                               address);
    }
    return fd;
}

struct metrics_server *metrics_server_bind(const char *address, struct error *err)
{
    struct sockaddr_storage addr;
    socklen_t alen;
    if (metrics_parse_address(address, &addr, &alen, err) < 0)
        return NULL;
    int fd = listen_on(&addr, alen, address, err);
    if (fd < 0)
        return NULL;
    struct sockaddr_storage bound;
    socklen_t blen = sizeof(bound);
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (getsockname(fd, (struct sockaddr *)&bound, &blen) == 0) {
        if (bound.ss_family == AF_INET6) {
            const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&bound;
            inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof(host));
            port = ntohs(v6->sin6_port);
        } else {
            const struct sockaddr_in *v4 = (const struct sockaddr_in *)&bound;
            inet_ntop(AF_INET, &v4->sin_addr, host, sizeof(host));
            port = ntohs(v4->sin_port);
        }
    }
    struct metrics_server *s = xcalloc(1, sizeof(*s));
    *s = (struct metrics_server){.listen_fd = fd,
                                 .port = port,
                                 .max_connections = MAX_CONNECTIONS,
                                 .idle_evict_ms = IDLE_EVICT_MS};
    snprintf(s->url, sizeof(s->url), "http://%s%s%s:%u/metrics",
             bound.ss_family == AF_INET6 ? "[" : "", host, bound.ss_family == AF_INET6 ? "]" : "",
             port);
    return s;
}

int metrics_server_serve(struct metrics_server *s, struct metrics *m, metrics_state_fn state,
                         void *state_ctx, struct error *err)
{
    s->m = m;
    s->state = state;
    s->state_ctx = state_ctx;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG;
    s->daemon = MHD_start_daemon(
        flags, 0, on_accept, s, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        /* libmicrohttpd's own limit, never reached: it leaves room for the
         * connections closed to make room until it has seen them go. */
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)s->listen_fd, MHD_OPTION_CONNECTION_LIMIT,
        2 * s->max_connections, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
        s, MHD_OPTION_END);
    if (s->daemon == NULL) {
        /* Whether libmicrohttpd closed the socket is not documented: never
         * close it twice (the plugin exits after this failure anyway). */
        s->listen_fd = -1;
        return error_set(err, "metrics server: cannot start serving %s", s->url);
    }
    return 0;
}

unsigned metrics_server_port(const struct metrics_server *s)
{
    return s->port;
}

const char *metrics_server_url(const struct metrics_server *s)
{
    return s->url;
}

void metrics_server_test_limits(struct metrics_server *s, unsigned max_connections,
                                long idle_evict_ms)
{
    s->max_connections = max_connections;
    s->idle_evict_ms = idle_evict_ms;
}

void metrics_server_stop(struct metrics_server *s)
{
    if (s == NULL)
        return;
    /* A running daemon closes the socket it was given (and every
     * connection, each with its notification); else it is ours. */
    if (s->daemon != NULL)
        MHD_stop_daemon(s->daemon);
    else if (s->listen_fd >= 0)
        close(s->listen_fd);
    free(s);
}
