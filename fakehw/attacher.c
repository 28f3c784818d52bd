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

struct attacher;

/* One inventory; on the pending list while an attach may be in progress. */
struct attach_entry {
    struct attacher *a;
    struct live_inventory *inv;
    bool pending; /* on the list */
    bool woken;   /* a write started an attach since its last tick */
};

struct attacher {
    struct attach_entry *e;
    size_t n;
    size_t *pending; /* indices into e, npending of them */
    size_t npending;
    struct worker worker; /* on CLOCK_MONOTONIC, like the due times */
    bool kicked;          /* under worker.lock */
};

static void wake(void *ctx)
{
    struct attach_entry *e = ctx;
    struct attacher *a = e->a;
    pthread_mutex_lock(&a->worker.lock);
    e->woken = true;
    if (!e->pending) {
        e->pending = true;
        a->pending[a->npending++] = (size_t)(e - a->e);
    }
    a->kicked = true;
    pthread_cond_signal(&a->worker.cond);
    pthread_mutex_unlock(&a->worker.lock);
}

/* Lock held: ticks every pending inventory (outside the lock), drops those
 * with nothing in progress, and returns the next due time (-1: none). */
static int64_t tick_pending_locked(struct attacher *a)
{
    int64_t next = -1;
    for (size_t i = 0; i < a->npending;) {
        struct attach_entry *e = &a->e[a->pending[i]];
        e->woken = false;
        pthread_mutex_unlock(&a->worker.lock);
        int64_t due = inventory_attach_tick(e->inv, monotonic_ms());
        pthread_mutex_lock(&a->worker.lock);
        if (due < 0 && !e->woken) {
            e->pending = false;
            a->pending[i] = a->pending[--a->npending];
            continue;
        }
        if (due >= 0 && (next < 0 || due < next))
            next = due;
        else if (due < 0)
            next = monotonic_ms(); /* woken while ticking: tick it again at once */
        i++;
    }
    return next;
}

static void *run(void *arg)
{
    struct attacher *a = arg;
    pthread_mutex_lock(&a->worker.lock);
    while (!a->worker.stop) {
        a->kicked = false;
        int64_t next = tick_pending_locked(a);
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

static void release(struct attacher *a)
{
    for (size_t i = 0; i < a->n; i++)
        inventory_set_attach_waker(a->e[i].inv, NULL, NULL);
    worker_destroy(&a->worker);
    free(a->pending);
    free(a->e);
    free(a);
}

struct attacher *attacher_start_many(struct live_inventory *const *invs, size_t n,
                                     struct error *err)
{
    struct attacher *a = calloc(1, sizeof(*a));
    if (a != NULL) {
        a->e = calloc(n ? n : 1, sizeof(*a->e));
        a->pending = calloc(n ? n : 1, sizeof(*a->pending));
    }
    if (a == NULL || a->e == NULL || a->pending == NULL) {
        if (a != NULL) {
            free(a->e);
            free(a->pending);
        }
        free(a);
        error_set(err, "attach timer: out of memory");
        return NULL;
    }
    a->n = n;
    worker_init(&a->worker);
    /* Every inventory is ticked once first: an attach may be in progress. */
    for (size_t i = 0; i < n; i++) {
        a->e[i] = (struct attach_entry){.a = a, .inv = invs[i], .pending = true};
        a->pending[i] = i;
        inventory_set_attach_waker(invs[i], wake, &a->e[i]);
    }
    a->npending = n;
    if (worker_start(&a->worker, run, a) != 0) {
        release(a);
        error_set(err, "attach timer: cannot start its thread");
        return NULL;
    }
    return a;
}

struct attacher *attacher_start(struct live_inventory *inv, struct error *err)
{
    return attacher_start_many(&inv, 1, err);
}

void attacher_stop(struct attacher *a)
{
    if (a == NULL)
        return;
    worker_stop(&a->worker);
    release(a);
}
