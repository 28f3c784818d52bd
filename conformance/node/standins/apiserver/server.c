// SPDX-License-Identifier: Apache-2.0
/* libmicrohttpd glue and the /standin/ control API; see server.h. */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "grow.h"
#include "k8s_codec.h"
#include "log.h"
#include "xalloc.h"

struct server {
    struct MHD_Daemon *daemon;
    struct api *api;
    struct faults *faults;
    struct reqlog *log;
    pthread_mutex_t token_lock;
    char *token; /* "" when no token is required */
    bool client_ca;
    bool tls;
    char *cert_pem, *key_pem, *ca_pem;
    int port;
};

/* One request in progress: its body, as it arrives. */
struct conn_req {
    char *body;
    size_t len, cap;
    bool too_large;
};

static void free_req(void *cls, struct MHD_Connection *conn, void **con_cls,
                     enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    struct conn_req *cr = *con_cls;
    if (cr) {
        free(cr->body);
        free(cr);
        *con_cls = NULL;
    }
}

static int append_body(struct conn_req *cr, const char *data, size_t n)
{
    if (cr->too_large || cr->len + n > (size_t)SERVER_MAX_BODY) {
        cr->too_large = true;
        return 0;
    }
    GROW(cr->body, cr->cap, cr->len + n + 1);
    memcpy(cr->body + cr->len, data, n);
    cr->len += n;
    cr->body[cr->len] = '\0';
    return 0;
}

/* Queues body (taken; freed by libmicrohttpd) with its type and, when
 * retry_after_s >= 0, a Retry-After header. */
static enum MHD_Result queue(struct MHD_Connection *conn, int code, void *body, size_t len,
                             const char *content_type, long retry_after_s)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (r == NULL) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", content_type);
    if (retry_after_s >= 0) {
        char b[32];
        snprintf(b, sizeof(b), "%ld", retry_after_s);
        MHD_add_response_header(r, "Retry-After", b);
    }
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_text(struct MHD_Connection *conn, int code, char *text,
                                 long retry_after_s)
{
    if (text == NULL)
        text = xstrdup("{}");
    return queue(conn, code, text, strlen(text), CODEC_JSON, retry_after_s);
}

static char *status_text(int code, const char *reason, const char *message)
{
    json_t *s = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion",
                          "v1", "metadata", "status", "Failure", "message", message, "reason",
                          reason, "code", code);
    char *t = json_dumps(s, JSON_COMPACT);
    json_decref(s);
    return t;
}

/* An API answer in the negotiated media type: JSON text as it is, or its
 * protobuf encoding (r names the kind of a list item or a bare object). */
static enum MHD_Result send_reply(struct MHD_Connection *conn, int code, char *text,
                                  long retry_after_s, enum codec_media media,
                                  const struct resource *r)
{
    if (media != CODEC_MEDIA_PROTOBUF || text == NULL)
        return send_text(conn, code, text, retry_after_s);
    struct pb_bytes body = {0};
    struct error err;
    if (codec_json_to_body(text, r, &body, &err) < 0) {
        LOG_E("encoding a %d answer as protobuf: %s", code, err.msg);
        free(text);
        pb_bytes_free(&body);
        char msg[ERROR_MSG_MAX + 64];
        snprintf(msg, sizeof(msg), "apiserver-standin: encoding the answer as protobuf: %s",
                 err.msg);
        return send_text(conn, 500, status_text(500, "InternalError", msg), -1);
    }
    free(text);
    return queue(conn, code, body.p, body.len, CODEC_PROTOBUF, retry_after_s);
}

static const char *reason_for(int code)
{
    switch (code) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 409:
        return "Conflict";
    case 410:
        return "Expired";
    case 422:
        return "Invalid";
    case 429:
        return "TooManyRequests";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    default:
        return code >= 500 ? "InternalError" : "BadRequest";
    }
}

/* ---------- query strings ---------- */

static const char *query_get(void *ctx, const char *key)
{
    return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, key);
}

struct query_buf {
    char text[1024];
    size_t len;
};

static enum MHD_Result add_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    (void)kind;
    struct query_buf *q = cls;
    if (q->len < sizeof(q->text)) {
        int n = snprintf(q->text + q->len, sizeof(q->text) - q->len, "%s%s%s%s", q->len ? "&" : "",
                         key, value ? "=" : "", value ? value : "");
        if (n > 0)
            q->len += (size_t)n;
    }
    return MHD_YES;
}

/* ---------- authentication ---------- */

/* A bearer token, or a client certificate from the client CA, when either is
 * configured; anything goes otherwise. */
static bool authenticated(struct server *s, struct MHD_Connection *conn)
{
    pthread_mutex_lock(&s->token_lock);
    bool ok = !s->token[0] && !s->client_ca;
    if (!ok && s->token[0]) {
        const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
        ok = auth && !strncmp(auth, "Bearer ", 7) && !strcmp(auth + 7, s->token);
    }
    pthread_mutex_unlock(&s->token_lock);
    if (!ok && s->client_ca) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
        unsigned int verify = 0;
        ok = ci && ci->tls_session &&
             gnutls_certificate_verify_peers2((gnutls_session_t)ci->tls_session, &verify) ==
                 GNUTLS_E_SUCCESS &&
             verify == 0;
    }
    return ok;
}

/* ---------- /standin/ ---------- */

static enum MHD_Result control(struct server *s, struct MHD_Connection *conn, const char *url,
                               const char *method, struct conn_req *cr)
{
    json_error_t jerr;
    if (!strcmp(url, "/standin/requests")) {
        if (!strcmp(method, "GET"))
            return send_text(conn, 200, reqlog_dump(s->log), -1);
        if (!strcmp(method, "DELETE")) {
            reqlog_clear(s->log);
            return send_text(conn, 200, xstrdup("{}"), -1);
        }
    } else if (!strcmp(url, "/standin/faults")) {
        if (!strcmp(method, "GET")) {
            json_t *l = faults_list(s->faults);
            char *t = json_dumps(l, JSON_COMPACT);
            json_decref(l);
            return send_text(conn, 200, t, -1);
        }
        if (!strcmp(method, "DELETE")) {
            faults_clear(s->faults);
            return send_text(conn, 200, xstrdup("{}"), -1);
        }
        if (!strcmp(method, "POST")) {
            json_t *spec = cr->len ? json_loadb(cr->body, cr->len, 0, &jerr) : NULL;
            json_t *added = NULL;
            char msg[300] = "fault: the body is not valid JSON";
            int rc = spec ? faults_add(s->faults, spec, &added, msg, sizeof(msg)) : -1;
            json_decref(spec);
            if (rc < 0)
                return send_text(conn, 400, status_text(400, "BadRequest", msg), -1);
            LOG_V(1, "fault added: %s", cr->body);
            char *t = json_dumps(added, JSON_COMPACT);
            json_decref(added);
            return send_text(conn, 201, t, -1);
        }
    } else if (!strcmp(url, "/standin/token")) {
        if (!strcmp(method, "PUT")) {
            json_t *b = cr->len ? json_loadb(cr->body, cr->len, 0, &jerr) : NULL;
            const char *t = json_string_value(json_object_get(b, "token"));
            if (t == NULL) {
                json_decref(b);
                return send_text(
                    conn, 400,
                    status_text(400, "BadRequest", "token: the body must be {\"token\":\"...\"}"),
                    -1);
            }
            char *copy = xstrdup(t);
            json_decref(b);
            pthread_mutex_lock(&s->token_lock);
            free(s->token);
            s->token = copy;
            pthread_mutex_unlock(&s->token_lock);
            return send_text(conn, 200, xstrdup("{}"), -1);
        }
    } else {
        return send_text(conn, 404, status_text(404, "NotFound", "no such /standin/ endpoint"), -1);
    }
    return send_text(conn, 405,
                     status_text(405, "MethodNotAllowed",
                                 "the server does not allow this method on the requested resource"),
                     -1);
}

/* ---------- API requests ---------- */

static ssize_t watch_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    ssize_t n = watch_read(cls, buf, max);
    return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : n;
}

static void watch_done(void *cls)
{
    watch_free(cls);
}

/* A fault the control API set for this request: its delay slept, then the
 * connection dropped or the status sent (*ret, true).  false when the
 * request goes on (with no fault, a delay, or a drop after handling). */
static bool take_fault(struct server *s, struct MHD_Connection *conn, const char *method,
                       const char *url, const struct query_buf *qb, enum codec_media media,
                       struct fault *f, enum MHD_Result *ret)
{
    if (!faults_take(s->faults, method, url, f))
        return false;
    if (f->delay_ms > 0) {
        struct timespec ts = {f->delay_ms / 1000, (f->delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (f->close && !f->after) {
        reqlog_add(s->log, realtime_ns(), method, url, qb->text, 0, "close");
        LOG_V(1, "%s %s: fault: connection dropped", method, url);
        *ret = MHD_NO;
        return true;
    }
    if (f->status) {
        char msg[128];
        snprintf(msg, sizeof(msg), "apiserver-standin: injected fault (status %d)", f->status);
        reqlog_add(s->log, realtime_ns(), method, url, qb->text, f->status, "status");
        LOG_V(1, "%s %s: fault: status %d", method, url, f->status);
        *ret = send_reply(conn, f->status, status_text(f->status, reason_for(f->status), msg),
                          f->retry_after_s, media, NULL);
        return true;
    }
    return false;
}

/* A client that did not authenticate, or a body over the limit: answered
 * before the API sees the request (*ret, true). */
static bool refuse(struct server *s, struct MHD_Connection *conn, const char *method,
                   const char *url, const struct query_buf *qb, const struct conn_req *cr,
                   enum codec_media media, enum MHD_Result *ret)
{
    if (!authenticated(s, conn)) {
        reqlog_add(s->log, realtime_ns(), method, url, qb->text, 401, NULL);
        *ret = send_reply(conn, 401, status_text(401, "Unauthorized", "Unauthorized"), -1, media,
                          NULL);
        return true;
    }
    if (cr->too_large) {
        char msg[128];
        snprintf(msg, sizeof(msg), "Request entity too large: limit is %ld", SERVER_MAX_BODY);
        reqlog_add(s->log, realtime_ns(), method, url, qb->text, 413, NULL);
        *ret =
            send_reply(conn, 413, status_text(413, "RequestEntityTooLarge", msg), -1, media, NULL);
        return true;
    }
    return false;
}

/* A protobuf body is read as the JSON it stands for (into *json_body, which
 * the caller frees); a patch is JSON by definition, and api_handle answers
 * a protobuf one with 415.  false with the 400 sent (*ret) when the body
 * cannot be read. */
static bool body_as_json(struct server *s, struct MHD_Connection *conn, const char *method,
                         const char *url, const struct query_buf *qb, enum codec_media media,
                         struct api_request *rq, char **json_body, enum MHD_Result *ret)
{
    if (!codec_is_protobuf(rq->content_type) || rq->body_len == 0 || !strcmp(method, "PATCH"))
        return true;
    struct error err;
    *json_body = codec_body_to_json((const uint8_t *)rq->body, rq->body_len, &err);
    if (*json_body == NULL) {
        char msg[ERROR_MSG_MAX + 64];
        snprintf(msg, sizeof(msg), "the protobuf request body cannot be read: %s", err.msg);
        reqlog_add(s->log, realtime_ns(), method, url, qb->text, 400, NULL);
        LOG_V(1, "%s %s: %s", method, url, msg);
        *ret = send_reply(conn, 400, status_text(400, "BadRequest", msg), -1, media, NULL);
        return false;
    }
    rq->body = *json_body;
    rq->body_len = strlen(*json_body);
    rq->content_type = CODEC_JSON;
    return true;
}

/* A watch's answer: its events streamed until it ends. */
static enum MHD_Result send_watch(struct MHD_Connection *conn, struct watch_stream *w,
                                  enum codec_media media)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci)
        watch_set_fd(w, ci->connect_fd);
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, watch_reader, w, watch_done);
    if (r == NULL) {
        watch_free(w);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type",
                            media == CODEC_MEDIA_PROTOBUF ? CODEC_PROTOBUF_WATCH : CODEC_JSON);
    enum MHD_Result ret = MHD_queue_response(conn, 200, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result api_request(struct server *s, struct MHD_Connection *conn, const char *url,
                                   const char *method, struct conn_req *cr)
{
    struct query_buf qb = {.len = 0};
    qb.text[0] = '\0';
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, add_query, &qb);

    /* Content negotiation first: every answer below is in this media type. */
    enum codec_media media;
    if (codec_negotiate(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept"), &media) < 0) {
        reqlog_add(s->log, realtime_ns(), method, url, qb.text, 406, NULL);
        return send_text(conn, 406,
                         status_text(406, "NotAcceptable",
                                     "only the following media types are accepted: "
                                     "application/json, application/vnd.kubernetes.protobuf"),
                         -1);
    }
    struct fault f = {0}; /* stays all-zero when no fault applies */
    enum MHD_Result ret;
    if (take_fault(s, conn, method, url, &qb, media, &f, &ret) ||
        refuse(s, conn, method, url, &qb, cr, media, &ret))
        return ret;
    struct api_request rq = {
        .method = method,
        .path = url,
        .content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type"),
        .body = cr->body,
        .body_len = cr->len,
        .protobuf = media == CODEC_MEDIA_PROTOBUF,
        .query = query_get,
        .query_ctx = conn,
    };
    cleanup_free char *json_body = NULL;
    if (!body_as_json(s, conn, method, url, &qb, media, &rq, &json_body, &ret))
        return ret;
    struct api_reply rp;
    api_handle(s->api, &rq, &rp);
    int64_t t = realtime_ns();
    const char *fault = f.close && f.after ? "close-after" : f.delay_ms ? "delay" : NULL;
    reqlog_add(s->log, t, method, url, qb.text, rp.code, fault);
    if (rp.mutating)
        reqlog_event(s->log, t, method, url, rp.code, rp.res ? rp.res->plural : "", rp.ns, rp.name,
                     rp.code >= 200 && rp.code < 300 ? rp.text : NULL);
    LOG_V(2, "%s %s%s%s: %d", method, url, qb.len ? "?" : "", qb.text, rp.code);
    if (f.close && f.after) {
        /* The request took effect; the client never hears about it. */
        LOG_V(1, "%s %s: fault: connection dropped after handling", method, url);
        free(rp.text);
        watch_free(rp.watch);
        return MHD_NO;
    }
    if (rp.watch)
        return send_watch(conn, rp.watch, media);
    return send_reply(conn, rp.code, rp.text, -1, media, rp.res);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)version;
    struct server *s = cls;
    struct conn_req *cr = *con_cls;
    if (cr == NULL) {
        cr = xcalloc(1, sizeof(*cr));
        *con_cls = cr;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        if (append_body(cr, upload_data, *upload_data_size) < 0)
            return MHD_NO;
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (!strncmp(url, "/standin/", 9))
        return control(s, conn, url, method, cr);
    return api_request(s, conn, url, method, cr);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char buf[512];
    LOG_V(1, "libmicrohttpd: %s", log_vmessage(buf, sizeof(buf), fmt, ap));
}

static int read_pem(const char *path, const char *flag, char **out, struct error *err)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return error_set_errno(err, errno, "%s %s", flag, path);
    cleanup_free char *buf = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&buf, &size);
    if (m == NULL) // a memory stream fails only when out of memory
        xalloc_die();
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        fwrite(chunk, 1, n, m);
    fclose(f);
    if (fclose(m) != 0)
        xalloc_die();
    if (strstr(buf, "-----BEGIN ") == NULL)
        return error_set(err, "%s %s: no PEM block in it", flag, path);
    *out = steal_pointer(&buf);
    return 0;
}

/* A server not yet started is stopped (freed) when start fails. */
CLEANUP_FUNC(struct server, server_stop)
#define cleanup_server __attribute__((cleanup(server_stopp)))

struct server *server_start(struct api *api, struct faults *faults, struct reqlog *log,
                            const struct server_config *cfg, struct error *err)
{
    cleanup_server struct server *s = xcalloc(1, sizeof(*s));
    s->api = api;
    s->faults = faults;
    s->log = log;
    pthread_mutex_init(&s->token_lock, NULL);
    s->token = xstrdup(cfg->token ? cfg->token : "");
    s->tls = cfg->tls_cert_file && cfg->tls_cert_file[0];
    if (s->tls && (read_pem(cfg->tls_cert_file, "--tls-cert-file", &s->cert_pem, err) < 0 ||
                   read_pem(cfg->tls_key_file, "--tls-key-file", &s->key_pem, err) < 0))
        return NULL;
    s->client_ca = cfg->client_ca_file && cfg->client_ca_file[0];
    if (s->client_ca && read_pem(cfg->client_ca_file, "--client-ca-file", &s->ca_pem, err) < 0)
        return NULL;

    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)cfg->port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_ERROR_LOG | (s->tls ? MHD_USE_TLS : 0);
    struct MHD_OptionItem tls_opts[] = {
        {s->tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, s->cert_pem},
        {s->tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, s->key_pem},
        {s->client_ca ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0, s->ca_pem},
        {MHD_OPTION_END, 0, NULL},
    };
    /* MHD stops at the first END: move the set entries to the front. */
    struct MHD_OptionItem opts[4];
    size_t n = 0;
    for (size_t i = 0; i < 4; i++)
        if (tls_opts[i].option != MHD_OPTION_END)
            opts[n++] = tls_opts[i];
    opts[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    s->daemon = MHD_start_daemon(
        flags, (uint16_t)cfg->port, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log,
        NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_NOTIFY_COMPLETED, free_req,
        NULL, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120, MHD_OPTION_LISTENING_ADDRESS_REUSE,
        (unsigned)1, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    if (s->daemon == NULL)
        return error_set(err, "cannot listen on 127.0.0.1:%ld (port in use? TLS files wrong?)",
                         cfg->port),
               NULL;
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : (int)cfg->port;
    return steal_pointer(&s);
}

int server_port(const struct server *s)
{
    return s->port;
}

void server_stop(struct server *s)
{
    if (s == NULL)
        return;
    if (s->daemon)
        MHD_stop_daemon(s->daemon);
    pthread_mutex_destroy(&s->token_lock);
    free(s->token);
    free(s->cert_pem);
    free(s->key_pem);
    free(s->ca_pem);
    free(s);
}
