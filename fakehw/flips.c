// SPDX-License-Identifier: Apache-2.0
/* Scheduled health flips: see flips.h. */
#include "flips.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "monotonic.h"
#include "utf8.h"
#include "worker.h"

struct flip_scheduler {
    struct live_inventory *inv;
    struct worker worker; /* its lock guards what follows */
    struct flip_event *events;
    size_t nevents, next;
    int64_t epoch_ns; /* monotonic time the schedule counts from */
    size_t applied;
};

static int compare_events(const void *a, const void *b)
{
    const struct flip_event *x = a, *y = b;
    return (x->at_ms > y->at_ms) - (x->at_ms < y->at_ms);
}

int flips_plan(const struct flip *flips, size_t n, struct flip_event **events, size_t *nevents,
               struct error *err)
{
    struct flip_event *ev = calloc(2 * n + 1, sizeof(*ev));
    if (ev == NULL)
        return error_set(err, "out of memory for %zu flips", n);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const struct flip *f = &flips[i];
        ev[k].at_ms = f->after_ms;
        memcpy(ev[k].device, f->device, sizeof(ev[k].device));
        ev[k].has_state = f->has_state;
        ev[k].healthy = f->healthy;
        /* Cleaned (utf8.h) rather than refused when the flip fires. */
        utf8_copy_clean(ev[k].reason, sizeof(ev[k].reason), f->reason);
        ev[k].xid = f->xid > 0 ? f->xid : FLIP_XID_KEEP;
        k++;
        if (f->for_ms > 0) {
            ev[k].at_ms = f->after_ms + f->for_ms;
            memcpy(ev[k].device, f->device, sizeof(ev[k].device));
            ev[k].has_state = f->has_state;
            ev[k].healthy = !f->healthy;
            ev[k].xid = f->xid > 0 ? 0 : FLIP_XID_KEEP;
            k++;
        }
    }
    /* Insertion sort: stable, and flip lists are short. */
    for (size_t i = 1; i < k; i++) {
        struct flip_event tmp = ev[i];
        size_t j = i;
        for (; j > 0 && compare_events(&ev[j - 1], &tmp) > 0; j--)
            ev[j] = ev[j - 1];
        ev[j] = tmp;
    }
    *events = ev;
    *nevents = k;
    return 0;
}

static void apply_health(struct flip_scheduler *s, const struct flip_event *ev, bool all)
{
    struct error err;
    const char *state = ev->healthy ? FAKEHW_HEALTHY : FAKEHW_UNHEALTHY;
    int rc = all ? inventory_set_health_all(s->inv, ev->healthy, ev->reason, &err)
                 : inventory_set_health(s->inv, ev->device, ev->healthy, ev->reason, &err);
    if (rc < 0)
        LOG_W("scheduled flip of %s to %s: %s", ev->device, state, err.msg);
    else
        LOG_I("scheduled flip: %s -> %s%s%s", ev->device, state, ev->reason[0] ? ": " : "",
              ev->reason);
}

static void apply_xid(struct flip_scheduler *s, const struct flip_event *ev, bool all)
{
    struct error err;
    int rc = all ? inventory_set_xid_all(s->inv, ev->xid, &err)
                 : inventory_set_xid(s->inv, ev->device, ev->xid, &err);
    if (rc < 0)
        LOG_W("scheduled flip of %s to xid %ld: %s", ev->device, ev->xid, err.msg);
    else if (ev->xid > 0)
        LOG_I("scheduled flip: %s -> xid %ld", ev->device, ev->xid);
    else
        LOG_I("scheduled flip: %s -> xid cleared", ev->device);
}

static void apply(struct flip_scheduler *s, const struct flip_event *ev)
{
    bool all = !strcmp(ev->device, FLIP_ALL_DEVICES);
    if (ev->has_state)
        apply_health(s, ev, all);
    if (ev->xid != FLIP_XID_KEEP)
        apply_xid(s, ev, all);
}

static void *run(void *arg)
{
    struct flip_scheduler *s = arg;
    pthread_mutex_lock(&s->worker.lock);
    while (!s->worker.stop) {
        if (s->next >= s->nevents) {
            pthread_cond_wait(&s->worker.cond, &s->worker.lock);
            continue;
        }
        int64_t due = s->epoch_ns + s->events[s->next].at_ms * 1000000;
        if (monotonic_ns() < due) {
            struct timespec ts = {.tv_sec = due / 1000000000, .tv_nsec = due % 1000000000};
            pthread_cond_timedwait(&s->worker.cond, &s->worker.lock, &ts);
            continue;
        }
        struct flip_event ev = s->events[s->next++];
        /* The inventory calls listeners that write to FUSE: not under our lock. */
        pthread_mutex_unlock(&s->worker.lock);
        apply(s, &ev);
        pthread_mutex_lock(&s->worker.lock);
        s->applied++;
    }
    pthread_mutex_unlock(&s->worker.lock);
    return NULL;
}

struct flip_scheduler *flip_scheduler_start(struct live_inventory *inv, const struct flip *flips,
                                            size_t n, struct error *err)
{
    struct flip_scheduler *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        error_set(err, "out of memory");
        return NULL;
    }
    s->inv = inv;
    if (flips_plan(flips, n, &s->events, &s->nevents, err) < 0) {
        free(s);
        return NULL;
    }
    worker_init(&s->worker);
    s->epoch_ns = monotonic_ns();
    /* Signals belong to the FUSE loop: the thread starts with them blocked. */
    int rc = worker_start(&s->worker, run, s);
    if (rc != 0) {
        error_set_errno(err, rc, "starting the flip scheduler thread");
        worker_destroy(&s->worker);
        free(s->events);
        free(s);
        return NULL;
    }
    return s;
}

int flip_scheduler_replace(struct flip_scheduler *s, const struct flip *flips, size_t n,
                           struct error *err)
{
    struct flip_event *events;
    size_t nevents;
    if (flips_plan(flips, n, &events, &nevents, err) < 0)
        return -1;
    pthread_mutex_lock(&s->worker.lock);
    free(s->events);
    s->events = events;
    s->nevents = nevents;
    s->next = 0;
    s->epoch_ns = monotonic_ns();
    pthread_cond_signal(&s->worker.cond);
    pthread_mutex_unlock(&s->worker.lock);
    return 0;
}

size_t flip_scheduler_applied(struct flip_scheduler *s)
{
    pthread_mutex_lock(&s->worker.lock);
    size_t n = s->applied;
    pthread_mutex_unlock(&s->worker.lock);
    return n;
}

void flip_scheduler_stop(struct flip_scheduler *s)
{
    if (s == NULL)
        return;
    worker_stop(&s->worker);
    worker_destroy(&s->worker);
    free(s->events);
    free(s);
}
