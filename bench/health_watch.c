// SPDX-License-Identifier: Apache-2.0
#include "health_watch.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conformance/node/standins/kubelet/grpc_client.h"
#include "proc.h"
#include "proto/dra_health_v1alpha1.pb-c.h"

#define WATCH_METHOD "/v1alpha1.DRAResourceHealth/NodeWatchResources"

struct dev_state {
    char name[64];
    bool healthy;
    int64_t changed_ns; /* arrival of the first message that showed this state */
};

struct health_watch {
    struct rpc_client *client;
    struct rpc_client_stream *stream;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct dev_state *devs;
    size_t n_devs, cap;
    size_t messages;
    bool ended;
    char end_reason[256];
};

static struct dev_state *find_dev(struct health_watch *w, const char *name, bool add)
{
    for (size_t i = 0; i < w->n_devs; i++)
        if (!strcmp(w->devs[i].name, name))
            return &w->devs[i];
    if (!add)
        return NULL;
    if (w->n_devs == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        struct dev_state *nd = realloc(w->devs, cap * sizeof(*nd));
        if (nd == NULL)
            return NULL;
        w->devs = nd;
        w->cap = cap;
    }
    struct dev_state *d = &w->devs[w->n_devs++];
    memset(d, 0, sizeof(*d));
    snprintf(d->name, sizeof(d->name), "%s", name);
    d->healthy = true;
    return d;
}

static void record(struct health_watch *w, const V1alpha1__NodeWatchResourcesResponse *m, int64_t t)
{
    pthread_mutex_lock(&w->lock);
    for (size_t i = 0; i < m->n_devices; i++) {
        const V1alpha1__DeviceHealth *dh = m->devices[i];
        if (dh->device == NULL)
            continue;
        bool healthy = dh->health == V1ALPHA1__HEALTH_STATUS__HEALTHY;
        struct dev_state *d = find_dev(w, dh->device->device_name, false);
        if (d == NULL) {
            d = find_dev(w, dh->device->device_name, true);
            if (d == NULL)
                continue;
            d->healthy = healthy;
            d->changed_ns = t;
        } else if (d->healthy != healthy) {
            d->healthy = healthy;
            d->changed_ns = t;
        }
    }
    w->messages++;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static void *reader(void *arg)
{
    struct health_watch *w = arg;
    for (;;) {
        uint8_t *data;
        size_t len;
        if (rpc_client_stream_next(w->stream, &data, &len) == 0)
            break;
        int64_t t = now_real_ns();
        V1alpha1__NodeWatchResourcesResponse *m =
            v1alpha1__node_watch_resources_response__unpack(NULL, len, data);
        free(data);
        if (m == NULL) {
            pthread_mutex_lock(&w->lock);
            snprintf(w->end_reason, sizeof(w->end_reason),
                     "a health message (%zu bytes) does not decode", len);
            pthread_mutex_unlock(&w->lock);
            break;
        }
        record(w, m, t);
        v1alpha1__node_watch_resources_response__free_unpacked(m, NULL);
    }
    const char *details;
    grpc_status_code code = rpc_client_stream_status(w->stream, &details);
    pthread_mutex_lock(&w->lock);
    if (!w->end_reason[0])
        snprintf(w->end_reason, sizeof(w->end_reason), "the health stream ended: %s: %s",
                 wire_status_name(code), details);
    w->ended = true;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

static void deadline_in(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000;
    if (ts->tv_nsec >= 1000000000) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000;
    }
}

struct health_watch *health_watch_start(const char *dra_socket, double timeout_s, struct error *err)
{
    struct health_watch *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return error_set(err, "out of memory"), NULL;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    if ((w->client = rpc_client_new(dra_socket, err)) != NULL &&
        (w->stream = rpc_client_stream_open(w->client, WATCH_METHOD, "", 0, timeout_s, err)) !=
            NULL) {
        if (pthread_create(&w->thread, NULL, reader, w) == 0)
            return w;
        error_set(err, "cannot start the health stream reader");
    }
    rpc_client_stream_close(w->stream);
    rpc_client_free(w->client);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    free(w);
    return NULL;
}

int health_watch_wait(struct health_watch *w, const char *device, bool healthy, int64_t since_ns,
                      int timeout_ms, int64_t *t_ns, struct error *err)
{
    struct timespec ts;
    deadline_in(&ts, timeout_ms);
    int rc = -1;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        struct dev_state *d = find_dev(w, device, false);
        if (d && d->healthy == healthy && d->changed_ns >= since_ns) {
            *t_ns = d->changed_ns;
            rc = 0;
            break;
        }
        if (w->ended) {
            error_set(err, "waiting for %s %s on the health stream: %s", device,
                      healthy ? "healthy" : "unhealthy", w->end_reason);
            break;
        }
        if (pthread_cond_timedwait(&w->cond, &w->lock, &ts) == ETIMEDOUT) {
            error_set(err, "the health stream did not show %s %s within %d ms (%s)", device,
                      healthy ? "healthy" : "unhealthy", timeout_ms,
                      d ? "device listed" : "device never listed");
            break;
        }
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

int health_watch_wait_first(struct health_watch *w, int timeout_ms, struct error *err)
{
    struct timespec ts;
    deadline_in(&ts, timeout_ms);
    pthread_mutex_lock(&w->lock);
    while (w->messages == 0 && !w->ended)
        if (pthread_cond_timedwait(&w->cond, &w->lock, &ts) == ETIMEDOUT)
            break;
    int rc = w->messages > 0 ? 0 : -1;
    if (rc < 0)
        error_set(err, "no first message on the health stream: %s",
                  w->ended ? w->end_reason : "none in time");
    pthread_mutex_unlock(&w->lock);
    return rc;
}

void health_watch_stop(struct health_watch *w)
{
    if (w == NULL)
        return;
    pthread_join(w->thread, NULL);
    rpc_client_stream_close(w->stream);
    rpc_client_free(w->client);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    free(w->devs);
    free(w);
}
