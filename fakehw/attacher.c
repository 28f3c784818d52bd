// SPDX-License-Identifier: Apache-2.0
/* The attach timer: see attacher.h. */
#include "attacher.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "monotonic.h"
#include "retry.h"

struct attacher {
    struct live_inventory *inv;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* on CLOCK_MONOTONIC, like the due times */
    bool kicked, stopping;
};

static void wake(void *ctx)
{
    struct attacher *a = ctx;
    pthread_mutex_lock(&a->lock);
    a->kicked = true;
    pthread_cond_signal(&a->cond);
    pthread_mutex_unlock(&a->lock);
}

static void *run(void *arg)
{
    struct attacher *a = arg;
    pthread_mutex_lock(&a->lock);
    while (!a->stopping) {
        a->kicked = false;
        pthread_mutex_unlock(&a->lock);
        int64_t next = inventory_attach_tick(a->inv, monotonic_ms());
        pthread_mutex_lock(&a->lock);
        while (!a->stopping && !a->kicked) {
            if (next < 0) {
                pthread_cond_wait(&a->cond, &a->lock);
                continue;
            }
            struct timespec ts = {.tv_sec = next / 1000, .tv_nsec = (next % 1000) * 1000000};
            if (pthread_cond_timedwait(&a->cond, &a->lock, &ts) == ETIMEDOUT)
                break;
        }
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

struct attacher *attacher_start(struct live_inventory *inv, struct error *err)
{
    struct attacher *a = calloc(1, sizeof(*a));
    if (a == NULL) {
        error_set(err, "attach timer: out of memory");
        return NULL;
    }
    a->inv = inv;
    pthread_mutex_init(&a->lock, NULL);
    retry_cond_init(&a->cond);
    inventory_set_attach_waker(inv, wake, a);
    if (pthread_create(&a->thread, NULL, run, a) != 0) {
        inventory_set_attach_waker(inv, NULL, NULL);
        pthread_cond_destroy(&a->cond);
        pthread_mutex_destroy(&a->lock);
        free(a);
        error_set(err, "attach timer: cannot start its thread");
        return NULL;
    }
    return a;
}

void attacher_stop(struct attacher *a)
{
    if (a == NULL)
        return;
    pthread_mutex_lock(&a->lock);
    a->stopping = true;
    pthread_cond_signal(&a->cond);
    pthread_mutex_unlock(&a->lock);
    pthread_join(a->thread, NULL);
    inventory_set_attach_waker(a->inv, NULL, NULL);
    pthread_cond_destroy(&a->cond);
    pthread_mutex_destroy(&a->lock);
    free(a);
}
