#include "inventory.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakehw_tree_read.h"
#include "fakehw_watch.h"
#include "log.h"

struct inventory {
    char *root;
    struct fakehw_watch *watch;
    struct inventory_listener *listeners;
    size_t n_listeners;
    pthread_t thread;
    bool thread_started;
    volatile bool stopping;

    pthread_mutex_t lock; /* guards devs, n_devs, up */
    struct fakehw_device *devs;
    size_t n_devs;
    bool up;
};

/* Installs a new snapshot (taking ownership of devs) and tells the listeners. */
static void publish(struct inventory *inv, struct fakehw_device *devs, size_t n, bool up)
{
    pthread_mutex_lock(&inv->lock);
    free(inv->devs);
    inv->devs = devs;
    inv->n_devs = n;
    inv->up = up;
    pthread_mutex_unlock(&inv->lock);
    for (size_t i = 0; i < inv->n_listeners; i++)
        inv->listeners[i].on_change(inv->listeners[i].ctx, devs, n, up);
}

/* Re-reads the tree; on failure keeps the previous snapshot (the watcher
 * reports GONE if the tree really went away). */
static void reload(struct inventory *inv)
{
    struct fakehw_device *devs = NULL;
    size_t n = 0;
    struct error err;
    if (fakehw_tree_list(inv->root, &devs, &n, &err) < 0) {
        LOG_E("reading the fakehw tree: %s", err.msg);
        return;
    }
    LOG_V(2, "fakehw tree %s: %zu devices", inv->root, n);
    publish(inv, devs, n, true);
}

/* The tree went away: every known device turns unhealthy, saying why. */
static void mark_gone(struct inventory *inv)
{
    pthread_mutex_lock(&inv->lock);
    size_t n = inv->n_devs;
    struct fakehw_device *devs = NULL;
    if (n > 0) {
        devs = malloc(n * sizeof(*devs));
        if (devs != NULL)
            memcpy(devs, inv->devs, n * sizeof(*devs));
    }
    pthread_mutex_unlock(&inv->lock);
    if (n > 0 && devs == NULL) {
        LOG_E("out of memory marking devices unhealthy");
        return;
    }
    const char *why = fakehw_watch_down_reason(inv->watch);
    int64_t now = (int64_t)time(NULL);
    for (size_t i = 0; i < n; i++) {
        devs[i].healthy = false;
        snprintf(devs[i].health_reason, sizeof(devs[i].health_reason),
                 "fakehw is not serving %s: %s", inv->root, why[0] ? why : "tree gone");
        devs[i].health_since = now;
    }
    LOG_E("fakehw tree %s is gone (%s): %zu devices now unhealthy", inv->root, why, n);
    publish(inv, devs, n, false);
}

static void *watch_thread(void *arg)
{
    struct inventory *inv = arg;
    while (!inv->stopping) {
        enum fakehw_watch_event ev;
        struct error err;
        if (fakehw_watch_wait(inv->watch, -1, &ev, &err) < 0) {
            LOG_E("watching the fakehw tree: %s", err.msg);
            struct timespec ts = {.tv_sec = 1};
            nanosleep(&ts, NULL);
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
            LOG_I("fakehw tree %s is back (%s)", inv->root, fakehw_watch_mode(inv->watch));
            reload(inv);
            break;
        case FAKEHW_WATCH_GONE:
            mark_gone(inv);
            break;
        case FAKEHW_WATCH_TIMEOUT:
        case FAKEHW_WATCH_WOKEN:
            break;
        }
    }
    return NULL;
}

struct inventory *inventory_start(const struct inventory_options *opts,
                                  const struct inventory_listener *listeners, size_t n_listeners,
                                  struct error *err)
{
    struct inventory *inv = calloc(1, sizeof(*inv));
    if (inv == NULL) {
        error_set(err, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&inv->lock, NULL);
    inv->root = strdup(opts->root);
    if (n_listeners > 0) {
        inv->listeners = calloc(n_listeners, sizeof(*listeners));
        if (inv->listeners != NULL)
            memcpy(inv->listeners, listeners, n_listeners * sizeof(*listeners));
    }
    if (inv->root == NULL || (n_listeners > 0 && inv->listeners == NULL)) {
        error_set(err, "out of memory");
        goto fail;
    }
    inv->n_listeners = n_listeners;
    struct fakehw_watch_options wopts = {.resync_ms = opts->resync_ms, .retry_ms = opts->retry_ms};
    /* Watch first, then read: a change between the two is not lost. */
    inv->watch = fakehw_watch_open(inv->root, &wopts, err);
    if (inv->watch == NULL)
        goto fail;
    if (fakehw_watch_up(inv->watch)) {
        reload(inv);
    } else {
        LOG_W("fakehw tree %s is not there yet; waiting for it", inv->root);
        publish(inv, NULL, 0, false);
    }
    if (pthread_create(&inv->thread, NULL, watch_thread, inv) != 0) {
        error_set(err, "cannot start the inventory thread");
        goto fail;
    }
    inv->thread_started = true;
    return inv;
fail:
    inventory_stop(inv);
    return NULL;
}

void inventory_stop(struct inventory *inv)
{
    if (inv == NULL)
        return;
    if (inv->thread_started) {
        inv->stopping = true;
        fakehw_watch_wake(inv->watch);
        pthread_join(inv->thread, NULL);
    }
    fakehw_watch_close(inv->watch);
    pthread_mutex_destroy(&inv->lock);
    free(inv->devs);
    free(inv->listeners);
    free(inv->root);
    free(inv);
}

int inventory_lookup(struct inventory *inv, const char *name, struct fakehw_device *dev,
                     struct error *err)
{
    int rc = -1;
    pthread_mutex_lock(&inv->lock);
    for (size_t i = 0; i < inv->n_devs; i++) {
        if (strcmp(inv->devs[i].name, name) == 0) {
            *dev = inv->devs[i];
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&inv->lock);
    if (rc < 0)
        error_set(err, "device %s is not in the fakehw tree %s", name, inv->root);
    return rc;
}

struct fakehw_device *inventory_snapshot(struct inventory *inv, size_t *n)
{
    pthread_mutex_lock(&inv->lock);
    struct fakehw_device *copy = NULL;
    *n = 0;
    if (inv->n_devs > 0) {
        copy = malloc(inv->n_devs * sizeof(*copy));
        if (copy != NULL) {
            memcpy(copy, inv->devs, inv->n_devs * sizeof(*copy));
            *n = inv->n_devs;
        }
    }
    pthread_mutex_unlock(&inv->lock);
    return copy;
}

bool inventory_tree_up(struct inventory *inv)
{
    pthread_mutex_lock(&inv->lock);
    bool up = inv->up;
    pthread_mutex_unlock(&inv->lock);
    return up;
}
