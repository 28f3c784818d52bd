// SPDX-License-Identifier: Apache-2.0
#include "health_service.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "log.h"
#include "xalloc.h"

struct health_service {
    pthread_mutex_t mu; /* taken before any stream's lock */
    uint8_t *packed;    /* the current list, packed once for all streams */
    size_t packed_len;
    size_t n_devices;
    struct rpc_stream **streams;
    size_t n_streams, cap_streams;
};

static void on_open(void *ctx, const ProtobufCMessage *req, struct rpc_stream *s)
{
    (void)req;
    struct health_service *svc = ctx;
    struct error err;
    pthread_mutex_lock(&svc->mu);
    GROW(svc->streams, svc->cap_streams, svc->n_streams + 1);
    rpc_stream_ref(s);
    svc->streams[svc->n_streams++] = s;
    /* Under the lock: no update can slip in between, so the first message is
     * the list as of the open and later ones follow in order. */
    if (rpc_stream_send_latest(s, svc->packed, svc->packed_len, &err) < 0)
        LOG_V(2, "health stream: %s", err.msg);
    size_t n = svc->n_devices, open = svc->n_streams;
    pthread_mutex_unlock(&svc->mu);
    LOG_V(1, "health stream opened (%zu open), sent %zu device(s)", open, n);
}

static void on_closed(void *ctx, struct rpc_stream *s)
{
    struct health_service *svc = ctx;
    bool found = false;
    pthread_mutex_lock(&svc->mu);
    for (size_t i = 0; i < svc->n_streams; i++) {
        if (svc->streams[i] == s) {
            svc->streams[i] = svc->streams[--svc->n_streams];
            found = true;
            break;
        }
    }
    size_t open = svc->n_streams;
    pthread_mutex_unlock(&svc->mu);
    if (found)
        rpc_stream_unref(s);
    LOG_V(1, "health stream closed (%zu open)", open);
}

struct health_service *health_service_new(struct error *err)
{
    struct health_service *svc = xcalloc(1, sizeof(*svc));
    pthread_mutex_init(&svc->mu, NULL);
    if (health_encode(NULL, 0, &svc->packed, &svc->packed_len, err) < 0) {
        health_service_free(svc);
        return NULL;
    }
    return svc;
}

int health_service_register(struct health_service *svc, struct rpc_server *srv, struct error *err)
{
    /* Both versions share the stream list and the packed message: a kubelet
     * 1.37+ opens v1, older ones v1alpha1. */
    const struct rpc_method methods[] = {
        {.path = HEALTH_V1_WATCH_METHOD,
         .request = health_watch_request_type(HEALTH_API_V1),
         .stream_open = on_open,
         .stream_closed = on_closed,
         .ctx = svc},
        {.path = HEALTH_V1ALPHA1_WATCH_METHOD,
         .request = health_watch_request_type(HEALTH_API_V1ALPHA1),
         .stream_open = on_open,
         .stream_closed = on_closed,
         .ctx = svc},
    };
    return rpc_server_add_methods(srv, methods, sizeof(methods) / sizeof(methods[0]), err);
}

int health_service_update(struct health_service *svc, const struct health_entry *list, size_t n,
                          struct error *err)
{
    uint8_t *packed;
    size_t len;
    if (health_encode(list, n, &packed, &len, err) < 0)
        return error_prefix(err, "health update");
    pthread_mutex_lock(&svc->mu);
    free(svc->packed);
    svc->packed = packed;
    svc->packed_len = len;
    svc->n_devices = n;
    size_t sent = 0;
    for (size_t i = 0; i < svc->n_streams; i++) {
        struct error serr;
        if (rpc_stream_send_latest(svc->streams[i], packed, len, &serr) == 0)
            sent++;
        else
            LOG_V(2, "health stream: %s", serr.msg);
    }
    pthread_mutex_unlock(&svc->mu);
    LOG_V(3, "health update: %zu device(s) sent to %zu stream(s)", n, sent);
    return 0;
}

void health_service_free(struct health_service *svc)
{
    if (svc == NULL)
        return;
    for (size_t i = 0; i < svc->n_streams; i++)
        rpc_stream_unref(svc->streams[i]);
    free(svc->streams);
    free(svc->packed);
    pthread_mutex_destroy(&svc->mu);
    free(svc);
}
