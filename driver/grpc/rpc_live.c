// SPDX-License-Identifier: Apache-2.0
/* A server's calls in progress and the job queue of its workers: see
 * rpc_internal.h.  The server adds each call that arrives, the call leaves
 * when it is over; a call's handler run is queued here for a worker. */
#include "driver/grpc/rpc_internal.h"

size_t server_call_arrived(struct rpc_server *srv, struct rpc_stream *c)
{
    size_t in_class;
    pthread_mutex_lock(&srv->mu);
    c->live_next = srv->live;
    if (srv->live)
        srv->live->live_prev = c;
    srv->live = c;
    ++srv->n_live;
    if (call_is_stream(c))
        in_class = ++srv->n_live_streams;
    else
        in_class = srv->n_live - srv->n_live_streams;
    pthread_mutex_unlock(&srv->mu);
    return in_class;
}

void server_push_job(struct rpc_server *srv, struct rpc_stream *c)
{
    pthread_mutex_lock(&srv->jobs_mu);
    c->next_job = NULL;
    if (srv->jobs_tail)
        srv->jobs_tail->next_job = c;
    else
        srv->jobs_head = c;
    srv->jobs_tail = c;
    pthread_cond_signal(&srv->jobs_cond);
    pthread_mutex_unlock(&srv->jobs_mu);
}

bool server_stopping(struct rpc_server *srv)
{
    pthread_mutex_lock(&srv->mu);
    bool stopping = srv->state != SRV_RUNNING;
    pthread_mutex_unlock(&srv->mu);
    return stopping;
}

size_t server_unary_calls(struct rpc_server *srv)
{
    pthread_mutex_lock(&srv->mu);
    size_t n = srv->n_live - srv->n_live_streams;
    pthread_mutex_unlock(&srv->mu);
    return n;
}

void server_call_over(struct rpc_server *srv, struct rpc_stream *c)
{
    pthread_mutex_lock(&srv->mu);
    if (c->live_prev)
        c->live_prev->live_next = c->live_next;
    else
        srv->live = c->live_next;
    if (c->live_next)
        c->live_next->live_prev = c->live_prev;
    srv->n_live--;
    if (call_is_stream(c))
        srv->n_live_streams--;
    pthread_cond_broadcast(&srv->cond);
    pthread_mutex_unlock(&srv->mu);
}

struct rpc_stream *server_pop_job(struct rpc_server *srv)
{
    pthread_mutex_lock(&srv->jobs_mu);
    while (srv->jobs_head == NULL && !srv->workers_stop)
        pthread_cond_wait(&srv->jobs_cond, &srv->jobs_mu);
    struct rpc_stream *c = srv->jobs_head;
    if (c != NULL) {
        srv->jobs_head = c->next_job;
        if (srv->jobs_head == NULL)
            srv->jobs_tail = NULL;
    }
    pthread_mutex_unlock(&srv->jobs_mu);
    return c; /* NULL: stop requested and nothing left */
}
