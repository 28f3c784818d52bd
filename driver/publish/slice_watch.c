// SPDX-License-Identifier: Apache-2.0
/* The slice watch: see slice_watch.h. */
#include "slice_watch.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "driver/kube/kube_paths.h"
#include "log.h"
#include "retry.h"
#include "slice_sync.h"
#include "worker.h"

/* A watch that the server ends sooner than this, and with no event, is
 * treated as a failure: a server that closes every watch at once gets the
 * backoff, not a tight loop. */
#define WATCH_MIN_MS 1000

struct slice_watch {
    struct kube_client *kc;
    struct slice_watch_publishers pubs;
    char *driver;
    char *watch_path; /* KUBE_PATH_RESOURCESLICES?fieldSelector=spec.driver%3D<driver> */
    char *list_path;  /* watch_path&limit=1: the list only wants the resourceVersion */
    int retry_base_ms, retry_max_ms;

    /* The thread; its lock guards st, its cond wakes a pause between
     * retries. */
    struct worker wk;
    bool started;
    struct kube_cancel *cancel; /* ends the list and the watch */

    /* Watch thread only. */
    char rv[128];  /* the version to watch from: the list's, then each event's */
    bool relist;   /* an ERROR event came: list again */
    bool got_news; /* an event came since the watch was opened */

    struct slice_watch_status st;
};

/* Every publisher: a sync is due, whatever the echoes say. */
static void kick_all(struct slice_watch *w)
{
    for (size_t i = 0; i < w->pubs.n; i++) {
        struct slice_publisher *p = w->pubs.at(w->pubs.ctx, i);
        if (p != NULL)
            slice_publisher_watch_listed(p);
    }
}

static int on_event(void *ctx, const char *type, json_t *object)
{
    struct slice_watch *w = ctx;
    w->got_news = true;
    if (strcmp(type, "ERROR") == 0) {
        const char *msg = json_string_value(json_object_get(object, "message"));
        LOG_V(2, "slice watch: error event: %s", msg ? msg : "?");
        w->relist = true;
        return 1; /* e.g. 410 Gone: list again */
    }
    const char *rv = slice_json_string(object, "metadata", "resourceVersion");
    if (rv != NULL && rv[0] != '\0' && strlen(rv) < sizeof(w->rv))
        snprintf(w->rv, sizeof(w->rv), "%s", rv);
    if (strcmp(type, "BOOKMARK") == 0)
        return 0;
    const char *node = slice_json_string(object, "spec", "nodeName");
    struct slice_publisher *p = node != NULL ? w->pubs.of_node(w->pubs.ctx, node) : NULL;
    pthread_mutex_lock(&w->wk.lock);
    if (p != NULL)
        w->st.events++;
    else
        w->st.unclaimed++;
    pthread_mutex_unlock(&w->wk.lock);
    if (p != NULL)
        slice_publisher_watch_event(p, type, object);
    return 0;
}

/* The list's resourceVersion into w->rv. */
static int list_version(struct slice_watch *w, struct error *err)
{
    json_auto_t *answer = NULL;
    if (kube_request(w->kc, KUBE_GET, w->list_path, NULL, NULL, NULL, &answer, err) < 0)
        return -1;
    const char *rv = slice_json_string(answer, "metadata", "resourceVersion");
    if (rv == NULL || rv[0] == '\0' || strlen(rv) >= sizeof(w->rv))
        return error_set(err, "GET %s: no usable metadata.resourceVersion", w->list_path);
    snprintf(w->rv, sizeof(w->rv), "%s", rv);
    pthread_mutex_lock(&w->wk.lock);
    w->st.lists++;
    pthread_mutex_unlock(&w->wk.lock);
    return 0;
}

/* Sleeps the backoff of the failures-th failure in a row, returning early
 * when stop is requested. */
static void pause_after(struct slice_watch *w, int failures, const char *what,
                        const struct error *err)
{
    long delay = retry_backoff_ms(failures, w->retry_base_ms, w->retry_max_ms);
    LOG_V(2, "slice watch: %s (retry in %ld ms): %s", what, delay, err->msg);
    pthread_mutex_lock(&w->wk.lock);
    retry_cond_pause_until(&w->wk.cond, &w->wk.lock, &w->wk.stop, monotonic_ms() + delay);
    pthread_mutex_unlock(&w->wk.lock);
}

/* How a watch ended. */
enum watch_end {
    WATCH_RESUME,   /* the server ended it: watch again from the last version */
    WATCH_RELIST,   /* an ERROR event (410 Gone): list again */
    WATCH_FAILED,   /* err: back off, then list again */
    WATCH_TOO_SOON, /* ended at once with no event (err): back off, then resume */
};

static enum watch_end watch_once(struct slice_watch *w, struct error *err)
{
    pthread_mutex_lock(&w->wk.lock);
    w->st.watches++;
    pthread_mutex_unlock(&w->wk.lock);
    w->relist = false;
    w->got_news = false;
    long long opened = monotonic_ms();
    if (kube_watch(w->kc, w->watch_path, w->rv, on_event, w, w->cancel, err) < 0)
        return WATCH_FAILED;
    if (w->relist)
        return WATCH_RELIST;
    if (!w->got_news && monotonic_ms() - opened < WATCH_MIN_MS && !kube_cancel_fired(w->cancel)) {
        error_set(err, "the server ended the watch at once");
        return WATCH_TOO_SOON;
    }
    return WATCH_RESUME;
}

static void *watch_main(void *arg)
{
    struct slice_watch *w = arg;
    int failures = 0;
    bool listed = false; /* w->rv is a version to watch from */
    while (!kube_cancel_fired(w->cancel)) {
        struct error err = {{0}};
        if (!listed) {
            if (list_version(w, &err) < 0) {
                pause_after(w, ++failures, "listing", &err);
                continue;
            }
            /* Anything may have happened while no watch was open,
             * including before the first one. */
            kick_all(w);
            listed = true;
        }
        enum watch_end end = watch_once(w, &err);
        if (end == WATCH_FAILED || end == WATCH_TOO_SOON) {
            /* A failed watch may have missed events: list again. */
            listed = end == WATCH_TOO_SOON;
            pause_after(w, ++failures, "watch ended", &err);
        } else {
            failures = 0;
            listed = end == WATCH_RESUME;
        }
    }
    return NULL;
}

void slice_watch_get_status(struct slice_watch *w, struct slice_watch_status *st)
{
    pthread_mutex_lock(&w->wk.lock);
    *st = w->st;
    pthread_mutex_unlock(&w->wk.lock);
}

/* The watch's paths; -1 when out of memory. */
static int make_paths(struct slice_watch *w)
{
    char selector[128];
    snprintf(selector, sizeof(selector), "spec.driver=%s", w->driver);
    cleanup_free char *escaped = kube_query_escape(selector);
    if (escaped == NULL ||
        asprintf(&w->watch_path, "%s?fieldSelector=%s", KUBE_PATH_RESOURCESLICES, escaped) < 0) {
        w->watch_path = NULL;
        return -1;
    }
    if (asprintf(&w->list_path, "%s&limit=1", w->watch_path) < 0) {
        w->list_path = NULL;
        return -1;
    }
    return 0;
}

/* Frees a watch whose thread is not running. */
static void release(struct slice_watch *w)
{
    worker_destroy(&w->wk);
    free(w->list_path);
    free(w->watch_path);
    free(w->driver);
    kube_cancel_free(w->cancel);
    free(w);
}

static struct slice_watch *new_watch(struct kube_client *kc, const struct slice_watch_options *opts,
                                     struct error *err)
{
    struct slice_watch *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        error_set(err, "slice watch: out of memory");
        return NULL;
    }
    worker_init(&w->wk);
    w->kc = kc;
    w->pubs = opts->publishers;
    w->retry_base_ms = opts->retry_base_ms > 0 ? opts->retry_base_ms : 200;
    w->retry_max_ms = opts->retry_max_ms > 0 ? opts->retry_max_ms : 10000;
    w->cancel = kube_cancel_new();
    w->driver = strdup(opts->driver_name);
    if (w->driver == NULL || make_paths(w) < 0) {
        error_set(err, "slice watch: out of memory");
        release(w);
        return NULL;
    }
    return w;
}

struct slice_watch *slice_watch_start(struct kube_client *kc,
                                      const struct slice_watch_options *opts, struct error *err)
{
    if (opts->driver_name == NULL || opts->driver_name[0] == '\0' ||
        strlen(opts->driver_name) > 63 || opts->publishers.at == NULL ||
        opts->publishers.of_node == NULL) {
        error_set(err, "slice watch: a driver name of at most 63 characters and both "
                       "publisher functions are required");
        return NULL;
    }
    struct slice_watch *w = new_watch(kc, opts, err);
    if (w == NULL)
        return NULL;
    if (worker_start(&w->wk, watch_main, w) != 0) {
        error_set(err, "slice watch: cannot start its thread");
        release(w);
        return NULL;
    }
    w->started = true;
    LOG_V(2, "slice watch: started for driver %s, %zu publishers", w->driver, w->pubs.n);
    return w;
}

void slice_watch_stop(struct slice_watch *w)
{
    if (w == NULL)
        return;
    /* The thread only waits on the API server, whose calls are cancelled,
     * and in a pause, which the worker's stop ends. */
    kube_cancel_fire(w->cancel);
    if (w->started)
        worker_stop(&w->wk);
    release(w);
}
