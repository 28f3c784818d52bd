// SPDX-License-Identifier: Apache-2.0
/* The attach timer: see attacher.h. */
#include "attacher.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "monotonic.h"
#include "worker.h"

struct attacher {
    struct live_inventory *inv;
    struct worker worker; /* on CLOCK_MONOTONIC, like the due times */
    bool kicked;          /* under worker.lock */
};

static void wake(void *ctx)
{
    struct attacher *a = ctx;
    pthread_mutex_lock(&a->worker.lock);
    a->kicked = true;
    pthread_cond_signal(&a->worker.cond);
    pthread_mutex_unlock(&a->worker.lock);
}

static void *run(void *arg)
{
    struct attacher *a = arg;
    pthread_mutex_lock(&a->worker.lock);
    while (!a->worker.stop) {
        a->kicked = false;
        pthread_mutex_unlock(&a->worker.lock);
        int64_t next = inventory_attach_tick(a->inv, monotonic_ms());
        pthread_mutex_lock(&a->worker.lock);
        while (!a->worker.stop && !a->kicked) {
            if (next < 0) {
                pthread_cond_wait(&a->worker.cond, &a->worker.lock);
                continue;
            }
            struct timespec ts = {.tv_sec = next / 1000, .tv_nsec = (next % 1000) * 1000000};
            if (pthread_cond_timedwait(&a->worker.cond, &a->worker.lock, &ts) == ETIMEDOUT)
                break;
        }
    }
    pthread_mutex_unlock(&a->worker.lock);
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
    worker_init(&a->worker);
    inventory_set_attach_waker(inv, wake, a);
    if (worker_start(&a->worker, run, a) != 0) {
        inventory_set_attach_waker(inv, NULL, NULL);
        worker_destroy(&a->worker);
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
    worker_stop(&a->worker);
    inventory_set_attach_waker(a->inv, NULL, NULL);
    worker_destroy(&a->worker);
    free(a);
}
