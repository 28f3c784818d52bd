// SPDX-License-Identifier: Apache-2.0
#include "inventory.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakehw_tree_read.h"
#include "fakehw_watch.h"
#include "log.h"
#include "monotonic.h"
#include "thread_end.h"

struct tree_inventory {
    char *root;
    struct fakehw_watch *watch;
    struct inventory_listener *listeners;
    size_t n_listeners;
    int gone_grace_ms;
    enum personality personality;
    pthread_t thread;
    bool thread_started;
    atomic_bool stopping;
    struct thread_end end;
    /* Held while the listeners run: once inventory_stop_by has taken it
     * with stopping set, no listener runs again, even from a thread left
     * behind that comes back later. */
    pthread_mutex_t listen_lock;

    pthread_mutex_t lock;         /* guards snap (the pointer, not what it points to) */
    struct device_snapshot *snap; /* the current snapshot; one reference */
};

/* Makes snap (one reference, handed over) the current snapshot and lends it
 * to the listeners.  The previous snapshot lives on for as long as a listener
 * or a reader still holds it. */
static void publish(struct tree_inventory *inv, struct device_snapshot *snap)
{
    pthread_mutex_lock(&inv->lock);
    struct device_snapshot *old = inv->snap;
    inv->snap = snap;
    pthread_mutex_unlock(&inv->lock);
    device_snapshot_put(old);
    pthread_mutex_lock(&inv->listen_lock);
    if (!inv->stopping) /* every listener or none */
        for (size_t i = 0; i < inv->n_listeners; i++)
            inv->listeners[i].on_change(inv->listeners[i].ctx, snap);
    pthread_mutex_unlock(&inv->listen_lock);
}

/* Re-reads the tree; on failure keeps the previous snapshot (the watcher
 * reports GONE if the tree really went away). */
static void reload(struct tree_inventory *inv)
{
    struct fakehw_device *devs = NULL;
    size_t n = 0;
    struct error err;
    if (fakehw_tree_list(inv->root, &devs, &n, &err) < 0) {
        LOG_E("reading the fakehw tree: %s", err.msg);
        return;
    }
    LOG_V(2, "fakehw tree %s: %zu devices", inv->root, n);
    if (personality_rename(inv->personality, devs, n, &err) < 0) {
        LOG_E("fakehw tree %s: %s", inv->root, err.msg);
        free(devs);
        return;
    }
    struct device_snapshot *snap = device_snapshot_new(devs, n, true, &err);
    if (snap == NULL) {
        LOG_E("fakehw tree %s: %s", inv->root, err.msg);
        return;
    }
    publish(inv, snap);
}

/* The tree went away (at `since`, Unix seconds): every known device turns
 * unhealthy, saying why, in a new snapshot (the current one may be in use
 * anywhere and never changes). */
static void mark_gone(struct tree_inventory *inv, int64_t since)
{
    struct device_snapshot *cur = inventory_current(inv);
    size_t n = cur != NULL ? cur->n : 0;
    struct fakehw_device *devs = NULL;
    if (n > 0) {
        devs = malloc(n * sizeof(*devs));
        if (devs == NULL) {
            device_snapshot_put(cur);
            LOG_E("out of memory marking devices unhealthy");
            return;
        }
        memcpy(devs, cur->devs, n * sizeof(*devs));
    }
    device_snapshot_put(cur);
    const char *why = fakehw_watch_down_reason(inv->watch);
    for (size_t i = 0; i < n; i++) {
        devs[i].healthy = false;
        snprintf(devs[i].health_reason, sizeof(devs[i].health_reason),
                 "fakehw is not serving %s: %s", inv->root, why[0] ? why : "tree gone");
        devs[i].health_since = since;
    }
    LOG_E("fakehw tree %s is gone (%s): %zu devices now unhealthy", inv->root, why, n);
    struct error err;
    struct device_snapshot *snap = device_snapshot_new(devs, n, false, &err);
    if (snap == NULL) {
        LOG_E("marking devices unhealthy: %s", err.msg);
        return;
    }
    publish(inv, snap);
}

/* A gone tree waiting out the grace (a fakehw handing the mount to its
 * successor leaves a gap of well under a second). */
struct grace {
    bool pending;
    int64_t deadline_ms; /* CLOCK_MONOTONIC */
    int64_t since;       /* Unix seconds: when the tree went */
};

/* The watch's timeout: until the grace ends, or none. */
static int grace_timeout(const struct grace *g)
{
    if (!g->pending)
        return -1;
    int64_t left = g->deadline_ms - monotonic_ms();
    return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

static void on_gone(struct tree_inventory *inv, struct grace *g)
{
    int64_t since = (int64_t)time(NULL);
    if (inv->gone_grace_ms <= 0) {
        mark_gone(inv, since);
        return;
    }
    *g = (struct grace){
        .pending = true, .deadline_ms = monotonic_ms() + inv->gone_grace_ms, .since = since};
    LOG_W("fakehw tree %s is gone (%s); its devices turn unhealthy unless it is back within "
          "%d ms",
          inv->root, fakehw_watch_down_reason(inv->watch), inv->gone_grace_ms);
}

static void on_grace_timeout(struct tree_inventory *inv, struct grace *g)
{
    if (!g->pending || monotonic_ms() < g->deadline_ms)
        return;
    g->pending = false;
    mark_gone(inv, g->since);
}

/* Back within the grace: the devices never turned unhealthy, and a reload
 * that finds them as they were changes nothing downstream. */
static void on_back(struct tree_inventory *inv, struct grace *g)
{
    if (g->pending)
        LOG_I("fakehw tree %s is back within the grace (%s)", inv->root,
              fakehw_watch_mode(inv->watch));
    else
        LOG_I("fakehw tree %s is back (%s)", inv->root, fakehw_watch_mode(inv->watch));
    g->pending = false;
    reload(inv);
}

static void inventory_free(struct tree_inventory *inv);

static void *watch_thread(void *arg)
{
    struct tree_inventory *inv = arg;
    struct grace g = {.pending = false};
    while (!inv->stopping) {
        enum fakehw_watch_event ev;
        struct error err;
        if (fakehw_watch_wait(inv->watch, grace_timeout(&g), &ev, &err) < 0) {
            LOG_E("watching the fakehw tree: %s", err.msg);
            struct timespec ts = {.tv_sec = 1};
            nanosleep(&ts, NULL);
            on_grace_timeout(inv, &g);
            continue;
        }
        LOG_V(3, "fakehw watch event: %s (%s)", fakehw_watch_event_name(ev),
              fakehw_watch_mode(inv->watch));
        switch (ev) {
        case FAKEHW_WATCH_CHANGED:
        case FAKEHW_WATCH_RESYNC:
            reload(inv);
            break;
        case FAKEHW_WATCH_BACK:
            on_back(inv, &g);
            break;
        case FAKEHW_WATCH_GONE:
            on_gone(inv, &g);
            break;
        case FAKEHW_WATCH_TIMEOUT:
            on_grace_timeout(inv, &g);
            break;
        case FAKEHW_WATCH_WOKEN:
            break;
        }
    }
    if (thread_end_mark(&inv->end))
        inventory_free(inv); /* left behind by inventory_stop_by */
    return NULL;
}

/* The options and listeners copied, the watch opened, the first snapshot
 * published, the thread started. */
static int inventory_begin(struct tree_inventory *inv, const struct inventory_options *opts,
                           const struct inventory_listener *listeners, size_t n_listeners,
                           struct error *err)
{
    inv->root = strdup(opts->root);
    inv->personality = opts->personality;
    if (n_listeners > 0) {
        inv->listeners = calloc(n_listeners, sizeof(*listeners));
        if (inv->listeners != NULL)
            memcpy(inv->listeners, listeners, n_listeners * sizeof(*listeners));
    }
    if (inv->root == NULL || (n_listeners > 0 && inv->listeners == NULL))
        return error_set(err, "out of memory");
    inv->n_listeners = n_listeners;
    inv->gone_grace_ms = opts->gone_grace_ms;
    struct fakehw_watch_options wopts = {.resync_ms = opts->resync_ms, .retry_ms = opts->retry_ms};
    /* Watch first, then read: a change between the two is not lost. */
    inv->watch = fakehw_watch_open(inv->root, &wopts, err);
    if (inv->watch == NULL)
        return -1;
    if (fakehw_watch_up(inv->watch)) {
        reload(inv);
    } else {
        LOG_W("fakehw tree %s is not there yet; waiting for it", inv->root);
        struct device_snapshot *empty = device_snapshot_new(NULL, 0, false, err);
        if (empty == NULL)
            return -1;
        publish(inv, empty);
    }
    if (pthread_create(&inv->thread, NULL, watch_thread, inv) != 0)
        return error_set(err, "cannot start the inventory thread");
    inv->thread_started = true;
    return 0;
}

struct tree_inventory *inventory_start(const struct inventory_options *opts,
                                       const struct inventory_listener *listeners,
                                       size_t n_listeners, struct error *err)
{
    struct tree_inventory *inv = calloc(1, sizeof(*inv));
    if (inv == NULL) {
        error_set(err, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&inv->lock, NULL);
    pthread_mutex_init(&inv->listen_lock, NULL);
    if (thread_end_init(&inv->end) < 0) {
        pthread_mutex_destroy(&inv->listen_lock);
        pthread_mutex_destroy(&inv->lock);
        free(inv);
        error_set(err, "cannot create a condition variable");
        return NULL;
    }
    if (inventory_begin(inv, opts, listeners, n_listeners, err) < 0) {
        inventory_stop(inv);
        return NULL;
    }
    return inv;
}

static void inventory_free(struct tree_inventory *inv)
{
    fakehw_watch_close(inv->watch);
    thread_end_destroy(&inv->end);
    pthread_mutex_destroy(&inv->listen_lock);
    pthread_mutex_destroy(&inv->lock);
    device_snapshot_put(inv->snap);
    free(inv->listeners);
    free(inv->root);
    free(inv);
}

int inventory_stop_by(struct tree_inventory *inv, long long deadline_ms)
{
    if (inv == NULL)
        return 0;
    if (inv->thread_started) {
        inv->stopping = true;
        fakehw_watch_wake(inv->watch);
        /* Waits for a listener call in progress; none starts after it. */
        pthread_mutex_lock(&inv->listen_lock);
        pthread_mutex_unlock(&inv->listen_lock);
        if (!thread_end_wait(&inv->end, inv->thread, deadline_ms)) {
            LOG_W("fakehw tree %s: the inventory thread is still blocked in it (a hung or "
                  "stopped fakehw?); leaving it behind",
                  inv->root);
            return -1;
        }
    }
    inventory_free(inv);
    return 0;
}

void inventory_stop(struct tree_inventory *inv)
{
    inventory_stop_by(inv, -1);
}

struct device_snapshot *inventory_current(struct tree_inventory *inv)
{
    pthread_mutex_lock(&inv->lock);
    struct device_snapshot *snap = device_snapshot_get(inv->snap);
    pthread_mutex_unlock(&inv->lock);
    return snap;
}

int inventory_lookup(struct tree_inventory *inv, const char *name, struct fakehw_device *dev,
                     struct error *err)
{
    /* The search runs on a reference, outside the lock: a reload never
     * waits for a lookup. */
    struct device_snapshot *snap = inventory_current(inv);
    const struct fakehw_device *d = device_snapshot_find(snap, name);
    bool found = d != NULL;
    if (found)
        *dev = *d;
    device_snapshot_put(snap);
    if (!found)
        return error_set(err, "device %s is not in the fakehw tree %s", name, inv->root);
    return 0;
}

bool inventory_tree_up(struct tree_inventory *inv)
{
    pthread_mutex_lock(&inv->lock);
    bool up = inv->snap != NULL && inv->snap->tree_up;
    pthread_mutex_unlock(&inv->lock);
    return up;
}
