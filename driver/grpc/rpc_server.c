// SPDX-License-Identifier: Apache-2.0
/* The gRPC server: one unix socket, one completion queue drained by a
 * poller thread, worker threads for the handlers, the methods registered with
 * grpc core (their calls arrive with the request read), and shutdown.  See
 * rpc_server.h; the life of a call is in rpc_call.c.
 *
 * Threads: the poller does bookkeeping and runs only the handlers marked
 * on_poller (short, no network: unprepare), the workers decode requests and
 * run the other handlers, and any thread may send on a stream, so a slow
 * prepare never delays a health update or another call. */
#include "rpc_server.h"

#include <errno.h>
#include <stdlib.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "driver/grpc/rpc_internal.h"
#include "xalloc.h"

/* Requests kept armed: this many generic ones, and as many per registered
 * method. */
#define PENDING_REQUESTS  2
#define SHUTDOWN_GRACE_MS 400 /* unary calls may finish before being cancelled */

/* Arms one request: for a call of the registered method reg, with its request
 * message read by grpc core, or a generic one (reg NULL). */
static void request_one_call(struct rpc_server *srv, const struct rpc_registered *reg)
{
    struct rpc_stream *c = call_new(srv, reg);
    grpc_call_error rc;
    if (reg)
        rc = grpc_server_request_registered_call(srv->server, reg->handle, &c->call, &c->deadline,
                                                 &c->request_md, &c->recv_buf, srv->cq, srv->cq,
                                                 &c->t_new);
    else
        rc = grpc_server_request_call(srv->server, &c->call, &c->details, &c->request_md, srv->cq,
                                      srv->cq, &c->t_new);
    if (rc != GRPC_CALL_OK) {
        LOG_E("%s server: cannot wait for calls%s%s (grpc_call_error %d)", srv->name,
              reg ? " of " : "", reg ? reg->method->path : "", (int)rc);
        call_discard(c);
    }
}

static const struct rpc_method *find_method(const struct rpc_server *srv, const char *path)
{
    for (size_t i = 0; i < srv->n_methods; i++)
        if (!strcmp(srv->methods[i].path, path))
            return &srv->methods[i];
    return NULL;
}

/* A call arrived (poller thread). */
static void on_new_call(struct rpc_server *srv, struct rpc_stream *c, bool ok)
{
    if (!ok) { /* server shutting down: the pending request is void */
        call_discard(c);
        return;
    }
    /* Set before the call joins the live list, which shutdown walks. */
    if (c->registered) {
        c->path = xstrdup(c->method->path);
    } else {
        /* An unknown path; or a known one grpc core did not match to its
         * registration, served the generic way (see rpc_internal.h). */
        char *path = grpc_slice_to_c_string(c->details.method);
        c->path = xstrdup(path ? path : "?");
        gpr_free(path);
        c->method = find_method(srv, c->path);
    }

    size_t in_class = server_call_arrived(srv, c);
    const struct rpc_registered *reg = c->registered;
    char refusal[STATUS_MSG_MAX] = "";
    if (call_is_stream(c) && in_class > RPC_MAX_STREAMS)
        snprintf(refusal, sizeof(refusal), "too many streams open (limit %d)", RPC_MAX_STREAMS);
    else if (!call_is_stream(c) && in_class > RPC_MAX_UNARY_CALLS)
        snprintf(refusal, sizeof(refusal), "too many calls in progress (limit %d)",
                 RPC_MAX_UNARY_CALLS);
    call_start(c, refusal[0] != '\0' ? refusal : NULL);
    /* Re-armed after the call started: a unary call run on the poller has
     * been answered by now, so grpc core's work for the next request does
     * not delay this answer; the method's other armed request takes a call
     * that comes meanwhile.  (c may be gone: use reg.) */
    pthread_mutex_lock(&srv->mu);
    if (srv->state == SRV_RUNNING)
        request_one_call(srv, reg);
    pthread_mutex_unlock(&srv->mu);
}

static void *poller_main(void *arg)
{
    struct rpc_server *srv = arg;
    for (;;) {
        grpc_event ev =
            grpc_completion_queue_next(srv->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        if (ev.type != GRPC_OP_COMPLETE)
            continue;
        struct tag *t = ev.tag;
        switch (t->kind) {
        case TAG_NEW_CALL:
            on_new_call(srv, t->call, ev.success != 0);
            break;
        case TAG_FIRST:
            call_on_first(t->call, ev.success != 0);
            break;
        case TAG_CLOSE:
            call_on_close(t->call);
            break;
        case TAG_SEND:
            call_on_send(t->call, ev.success != 0);
            break;
        case TAG_SERVER_SHUTDOWN:
            pthread_mutex_lock(&srv->mu);
            srv->shutdown_done = true;
            pthread_cond_broadcast(&srv->cond);
            pthread_mutex_unlock(&srv->mu);
            break;
        }
    }
    return NULL;
}

static void *worker_main(void *arg)
{
    struct rpc_server *srv = arg;
    struct rpc_stream *c;
    while ((c = server_pop_job(srv)) != NULL)
        call_run(c, server_stopping(srv));
    return NULL;
}

/* ---------- lifecycle ---------- */

struct rpc_server *rpc_server_new(const struct rpc_server_config *cfg, struct error *err)
{
    if (cfg->socket_path == NULL || cfg->socket_path[0] != '/')
        return error_set(err, "rpc server %s: socket path \"%s\" is not absolute",
                         cfg->name ? cfg->name : "?", cfg->socket_path ? cfg->socket_path : ""),
               NULL;
    struct sockaddr_un sun;
    if (strlen(cfg->socket_path) >= sizeof(sun.sun_path))
        return error_set(err, "rpc server %s: socket path %s is too long (%zu bytes, at most %zu)",
                         cfg->name ? cfg->name : "?", cfg->socket_path, strlen(cfg->socket_path),
                         sizeof(sun.sun_path) - 1),
               NULL;
    if (cfg->workers < 1)
        return error_set(err, "rpc server %s: needs at least one worker thread",
                         cfg->name ? cfg->name : "?"),
               NULL;
    struct rpc_server *srv = xcalloc(1, sizeof(*srv));
    srv->name = xstrdup(cfg->name ? cfg->name : "grpc");
    srv->socket_path = xstrdup(cfg->socket_path);
    srv->nworkers = cfg->workers;
    srv->state = SRV_NEW;
    srv->shutdown_tag = (struct tag){TAG_SERVER_SHUTDOWN, NULL};
    pthread_mutex_init(&srv->mu, NULL);
    pthread_cond_init(&srv->cond, NULL);
    pthread_mutex_init(&srv->jobs_mu, NULL);
    pthread_cond_init(&srv->jobs_cond, NULL);
    return srv;
}

int rpc_server_add_method(struct rpc_server *srv, const struct rpc_method *m, struct error *err)
{
    if (srv->state != SRV_NEW)
        return error_set(err, "%s server: methods must be added before start", srv->name);
    if (m->path == NULL || m->path[0] != '/' || strchr(m->path + 1, '/') == NULL)
        return error_set(err, "%s server: method path \"%s\" is not /package.Service/Method",
                         srv->name, m->path ? m->path : "");
    if (m->request == NULL || (m->unary == NULL) == (m->stream_open == NULL))
        return error_set(err, "%s server: method %s needs a request type and exactly one handler",
                         srv->name, m->path);
    if (find_method(srv, m->path))
        return error_set(err, "%s server: method %s added twice", srv->name, m->path);
    srv->methods = xrealloc(srv->methods, (srv->n_methods + 1) * sizeof(*srv->methods));
    srv->methods[srv->n_methods++] = *m;
    return 0;
}

int rpc_server_add_methods(struct rpc_server *srv, const struct rpc_method *m, size_t n,
                           struct error *err)
{
    for (size_t i = 0; i < n; i++)
        if (rpc_server_add_method(srv, &m[i], err) < 0)
            return -1;
    return 0;
}

/* Makes the socket's directory and removes a stale socket file. */
static int prepare_socket_path(const struct rpc_server *srv, struct error *err)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", srv->socket_path);
    char *slash = strrchr(dir, '/');
    if (slash != dir) {
        *slash = '\0';
        if (mkdir_p(dir, 0750, err) < 0)
            return error_prefix(err, "%s server: socket directory", srv->name);
    }
    struct stat st;
    if (lstat(srv->socket_path, &st) < 0) {
        if (errno == ENOENT)
            return 0;
        return error_set_errno(err, errno, "%s server: %s", srv->name, srv->socket_path);
    }
    if (!S_ISSOCK(st.st_mode))
        return error_set(err, "%s server: %s exists and is not a socket; not removing it",
                         srv->name, srv->socket_path);
    if (unlink(srv->socket_path) < 0)
        return error_set_errno(err, errno, "%s server: removing the stale socket %s", srv->name,
                               srv->socket_path);
    LOG_V(1, "%s server: removed stale socket %s", srv->name, srv->socket_path);
    return 0;
}

/* Destroys a grpc server that was created but is not serving. */
static void destroy_unstarted(struct rpc_server *srv)
{
    if (srv->server) {
        grpc_server_shutdown_and_notify(srv->server, srv->cq, &srv->shutdown_tag);
        for (;;) {
            grpc_event ev =
                grpc_completion_queue_next(srv->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
            if (ev.type == GRPC_OP_COMPLETE && ev.tag == &srv->shutdown_tag)
                break;
        }
        grpc_server_destroy(srv->server);
        srv->server = NULL;
    }
    if (srv->cq) {
        grpc_completion_queue_shutdown(srv->cq);
        while (grpc_completion_queue_next(srv->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
               GRPC_QUEUE_SHUTDOWN)
            ;
        grpc_completion_queue_destroy(srv->cq);
        srv->cq = NULL;
    }
}

static void stop_workers(struct rpc_server *srv)
{
    pthread_mutex_lock(&srv->jobs_mu);
    srv->workers_stop = true;
    pthread_cond_broadcast(&srv->jobs_cond);
    pthread_mutex_unlock(&srv->jobs_mu);
    for (int i = 0; i < srv->n_workers_started; i++)
        pthread_join(srv->workers[i], NULL);
    srv->n_workers_started = 0;
}

void rpc_process_setup(void)
{
    setenv("GRPC_POLL_STRATEGY", "poll", 0);
}

/* The completion queue and the grpc server, every method registered. */
static int create_server(struct rpc_server *srv, struct error *err)
{
    srv->cq = grpc_completion_queue_create_for_next(NULL);
    /* No bandwidth-delay probe: on a unix socket it only makes the kubelet
     * answer a PING in the middle of every call. */
    grpc_arg args[] = {
        {.type = GRPC_ARG_INTEGER, .key = (char *)GRPC_ARG_HTTP2_BDP_PROBE, .value.integer = 0}};
    const grpc_channel_args server_args = {.num_args = 1, .args = args};
    srv->server = grpc_server_create(&server_args, NULL);
    grpc_server_register_completion_queue(srv->server, srv->cq, NULL);
    /* Calls of a registered method arrive with their request message read. */
    srv->registered = xcalloc(srv->n_methods, sizeof(*srv->registered));
    for (size_t i = 0; i < srv->n_methods; i++) {
        srv->registered[i].method = &srv->methods[i];
        srv->registered[i].handle = grpc_server_register_method(
            srv->server, srv->methods[i].path, NULL, GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
        if (srv->registered[i].handle == NULL)
            return error_set(err, "%s server: grpc core refused to register method %s", srv->name,
                             srv->methods[i].path);
    }
    return 0;
}

/* Binds the unix socket and makes it mode 0660. */
static int listen_socket(struct rpc_server *srv, struct error *err)
{
    char addr[4200];
    snprintf(addr, sizeof(addr), "unix:%s", srv->socket_path);
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    int port = grpc_server_add_http2_port(srv->server, addr, creds);
    grpc_server_credentials_release(creds);
    if (port == 0)
        return error_set(err, "%s server: cannot listen on %s (see the grpc log line above)",
                         srv->name, srv->socket_path);
    if (chmod(srv->socket_path, 0660) < 0)
        return error_set_errno(err, errno, "%s server: chmod %s", srv->name, srv->socket_path);
    return 0;
}

/* The workers, the pending requests, then the poller that serves them. */
static int start_threads(struct rpc_server *srv, struct error *err)
{
    srv->workers = xcalloc((size_t)srv->nworkers, sizeof(pthread_t));
    for (int i = 0; i < srv->nworkers; i++) {
        int rc = pthread_create(&srv->workers[i], NULL, worker_main, srv);
        if (rc != 0)
            return error_set_errno(err, rc, "%s server: starting worker thread", srv->name);
        srv->n_workers_started++;
    }
    pthread_mutex_lock(&srv->mu);
    srv->state = SRV_RUNNING;
    for (int i = 0; i < PENDING_REQUESTS; i++) {
        request_one_call(srv, NULL);
        for (size_t m = 0; m < srv->n_methods; m++)
            request_one_call(srv, &srv->registered[m]);
    }
    pthread_mutex_unlock(&srv->mu);
    int rc = pthread_create(&srv->poller, NULL, poller_main, srv);
    if (rc != 0) {
        pthread_mutex_lock(&srv->mu);
        srv->state = SRV_STOPPING;
        pthread_mutex_unlock(&srv->mu);
        return error_set_errno(err, rc, "%s server: starting the poller thread", srv->name);
    }
    srv->poller_running = true;
    return 0;
}

/* A started server that serves nothing yet: the pending requests fail on
 * shutdown and are freed while the queue is drained by hand. */
static void unstart(struct rpc_server *srv)
{
    stop_workers(srv);
    grpc_server_shutdown_and_notify(srv->server, srv->cq, &srv->shutdown_tag);
    grpc_server_cancel_all_calls(srv->server);
    for (;;) {
        grpc_event ev =
            grpc_completion_queue_next(srv->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type != GRPC_OP_COMPLETE)
            continue;
        struct tag *t = ev.tag;
        if (t == &srv->shutdown_tag)
            break;
        if (t->kind == TAG_NEW_CALL)
            call_discard(t->call);
    }
    grpc_server_destroy(srv->server);
    srv->server = NULL;
}

static int start_failed(struct rpc_server *srv)
{
    destroy_unstarted(srv);
    unlink(srv->socket_path);
    srv->state = SRV_STOPPED;
    return -1;
}

int rpc_server_start(struct rpc_server *srv, struct error *err)
{
    if (srv->state != SRV_NEW)
        return error_set(err, "%s server: already started", srv->name);
    if (srv->n_methods == 0)
        return error_set(err, "%s server: no methods", srv->name);
    if (prepare_socket_path(srv, err) < 0)
        return -1;
    grpc_init();
    srv->grpc_inited = true;
    if (create_server(srv, err) < 0 || listen_socket(srv, err) < 0)
        return start_failed(srv);
    grpc_server_start(srv->server);
    if (start_threads(srv, err) < 0) {
        unstart(srv);
        return start_failed(srv);
    }
    LOG_V(1, "%s server: listening on %s", srv->name, srv->socket_path);
    return 0;
}

static void timespec_add_ms(struct timespec *ts, long ms)
{
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

void rpc_server_shutdown(struct rpc_server *srv)
{
    pthread_mutex_lock(&srv->mu);
    if (srv->state != SRV_RUNNING) {
        pthread_mutex_unlock(&srv->mu);
        return;
    }
    srv->state = SRV_STOPPING;
    pthread_mutex_unlock(&srv->mu);
    LOG_V(1, "%s server: shutting down", srv->name);

    /* No new calls from here on; pending requests complete as failed. */
    grpc_server_shutdown_and_notify(srv->server, srv->cq, &srv->shutdown_tag);

    /* Streams never end by themselves: end them with a status the client
     * understands (the kubelet reconnects). */
    pthread_mutex_lock(&srv->mu);
    for (struct rpc_stream *c = srv->live; c; c = c->live_next)
        if (c->method && c->method->stream_open)
            call_shutdown_stream(c);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    timespec_add_ms(&deadline, SHUTDOWN_GRACE_MS);
    while (srv->n_live > 0) {
        if (pthread_cond_timedwait(&srv->cond, &srv->mu, &deadline) == ETIMEDOUT)
            break;
    }
    size_t left = srv->n_live;
    pthread_mutex_unlock(&srv->mu);
    if (left > 0)
        LOG_V(1, "%s server: cancelling %zu call(s) still open", srv->name, left);
    grpc_server_cancel_all_calls(srv->server);

    /* Completes once every call is released, i.e. after running handlers
     * returned. */
    pthread_mutex_lock(&srv->mu);
    while (!srv->shutdown_done)
        pthread_cond_wait(&srv->cond, &srv->mu);
    pthread_mutex_unlock(&srv->mu);

    stop_workers(srv);
    grpc_server_destroy(srv->server);
    srv->server = NULL;
    grpc_completion_queue_shutdown(srv->cq);
    pthread_join(srv->poller, NULL);
    srv->poller_running = false;
    grpc_completion_queue_destroy(srv->cq);
    srv->cq = NULL;

    struct stat st;
    if (lstat(srv->socket_path, &st) == 0 && S_ISSOCK(st.st_mode))
        unlink(srv->socket_path);
    pthread_mutex_lock(&srv->mu);
    srv->state = SRV_STOPPED;
    pthread_mutex_unlock(&srv->mu);
    LOG_V(1, "%s server: stopped", srv->name);
}

void rpc_server_free(struct rpc_server *srv)
{
    if (srv == NULL)
        return;
    rpc_server_shutdown(srv);
    if (srv->grpc_inited)
        grpc_shutdown_blocking();
    free(srv->workers);
    free(srv->registered);
    free(srv->methods);
    free(srv->name);
    free(srv->socket_path);
    pthread_mutex_destroy(&srv->mu);
    pthread_cond_destroy(&srv->cond);
    pthread_mutex_destroy(&srv->jobs_mu);
    pthread_cond_destroy(&srv->jobs_cond);
    free(srv);
}
