// SPDX-License-Identifier: Apache-2.0
/* The claim watch: see claim_watch.h. */
#include "claim_watch.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claim_json.h"
#include "driver/kube/kube_paths.h"
#include "log.h"
#include "retry.h"
#include "worker.h"
#include "xalloc.h"

struct claim_watch {
    struct kube_client *kc;
    char *driver, *pool;
    long retry_base_ms, retry_max_ms;

    pthread_t thread;
    bool started;
    struct kube_cancel *cancel; /* ends the list and the watch */

    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t cond;  /* wakes a pause between retries */
    bool stopping;
    bool synced;    /* a whole list has been seen */
    json_t *claims; /* uid -> claim, only claims with results of driver and pool (any: NULL) */
    void (*listener)(void *ctx);
    void *listener_ctx;
};

/* Lock held: the kept claims changed. */
static void changed_locked(struct claim_watch *w)
{
    if (w->listener != NULL)
        w->listener(w->listener_ctx);
}

/* Lock held: keeps or forgets one claim. */
static void note_claim_locked(struct claim_watch *w, json_t *claim, bool deleted)
{
    const char *uid = claim_meta(claim, "uid");
    if (uid == NULL)
        return;
    if (!deleted && claim_has_results(claim, w->driver, w->pool))
        json_object_set(w->claims, uid, claim);
    else if (json_object_get(w->claims, uid) != NULL)
        json_object_del(w->claims, uid);
    else
        return;
    changed_locked(w);
}

static int on_event(void *ctx, const char *type, json_t *object)
{
    struct claim_watch *w = ctx;
    if (!strcmp(type, "ERROR"))
        return 1; /* e.g. 410 Gone: list again */
    if (!strcmp(type, "BOOKMARK"))
        return 0;
    pthread_mutex_lock(&w->lock);
    note_claim_locked(w, object, !strcmp(type, "DELETED"));
    pthread_mutex_unlock(&w->lock);
    return 0;
}

/* Lists every claim; replaces the kept set.  rv gets the list's version. */
static int list_claims(struct claim_watch *w, char *rv, size_t rv_size, struct error *err)
{
    json_auto_t *list = NULL;
    if (kube_request(w->kc, KUBE_GET, KUBE_PATH_RESOURCECLAIMS, NULL, NULL, NULL, &list, err) < 0)
        return -1;
    const char *v = claim_meta(list, "resourceVersion");
    snprintf(rv, rv_size, "%s", v ? v : "");
    json_t *kept = json_object();
    size_t i;
    json_t *claim;
    json_array_foreach(json_object_get(list, "items"), i, claim)
    {
        const char *uid = claim_meta(claim, "uid");
        if (kept != NULL && uid != NULL && claim_has_results(claim, w->driver, w->pool))
            json_object_set(kept, uid, claim);
    }
    if (kept == NULL)
        return error_set(err, "out of memory");
    pthread_mutex_lock(&w->lock);
    json_decref(w->claims);
    w->claims = kept;
    w->synced = true;
    changed_locked(w);
    pthread_mutex_unlock(&w->lock);
    return 0;
}

static void pause_ms(struct claim_watch *w, long ms)
{
    pthread_mutex_lock(&w->lock);
    retry_cond_pause_until(&w->cond, &w->lock, &w->stopping, monotonic_ms() + ms);
    pthread_mutex_unlock(&w->lock);
}

static void *watch_main(void *arg)
{
    struct claim_watch *w = arg;
    int failures = 0;
    while (!kube_cancel_fired(w->cancel)) {
        char rv[128];
        struct error err = {{0}};
        int rc = list_claims(w, rv, sizeof(rv), &err);
        if (rc == 0)
            rc = kube_watch(w->kc, KUBE_PATH_RESOURCECLAIMS, rv, on_event, w, w->cancel, &err);
        if (rc < 0) {
            failures++;
            long delay = retry_backoff_ms(failures, w->retry_base_ms, w->retry_max_ms);
            LOG_V(2, "claim watch (retry in %ld ms): %s", delay, err.msg);
            pause_ms(w, delay);
        } else {
            failures = 0;
        }
    }
    return NULL;
}

json_t *claim_watch_get(struct claim_watch *w, const char *ns, const char *name, const char *uid)
{
    if (w == NULL)
        return NULL;
    /* A reference, not a copy (a deep copy of a real claim is about a
     * tenth of a prepare's instructions): no one changes a kept object, the
     * watch replaces it, and jansson counts references atomically. */
    pthread_mutex_lock(&w->lock);
    json_t *claim = json_incref(json_object_get(w->claims, uid));
    pthread_mutex_unlock(&w->lock);
    const char *cns = claim_meta(claim, "namespace"), *cname = claim_meta(claim, "name");
    if (claim != NULL && (!cns || !cname || strcmp(cns, ns) != 0 || strcmp(cname, name) != 0)) {
        json_decref(claim); /* another name under this uid: not the claim asked for */
        claim = NULL;
    }
    return claim;
}

int claim_watch_fetch(struct claim_watch *w, const struct claim_ref *ref, json_t **claim,
                      enum claim_source *from, struct error *err)
{
    const char *ns = ref->ns, *name = ref->name;
    json_t *watched = claim_watch_get(w, ns, name, ref->uid);
    *from = watched != NULL ? CLAIM_FROM_WATCH : CLAIM_FROM_GET;
    if (watched != NULL) {
        *claim = watched;
        return 0;
    }
    char path[KUBE_PATH_MAX];
    if (kube_path_resourceclaim(path, sizeof(path), ns, name) < 0) {
        *claim = NULL;
        return error_set(err, "claim %.64s/%.64s...: the name is too long for a path", ns, name);
    }
    /* kube_request hands back the API server's Status body on a 4xx/5xx too;
     * the prepare path expects no claim on failure. */
    if (kube_request(w->kc, KUBE_GET, path, NULL, NULL, NULL, claim, err) < 0) {
        json_decref(*claim);
        *claim = NULL;
        return -1;
    }
    return 0;
}

json_t *claim_watch_claims(struct claim_watch *w, bool *synced)
{
    pthread_mutex_lock(&w->lock);
    json_t *claims = json_copy(w->claims); /* shallow: claims are replaced, not edited */
    *synced = w->synced;
    pthread_mutex_unlock(&w->lock);
    return claims;
}

size_t claim_watch_size(struct claim_watch *w)
{
    pthread_mutex_lock(&w->lock);
    size_t n = json_object_size(w->claims);
    pthread_mutex_unlock(&w->lock);
    return n;
}

void claim_watch_listen(struct claim_watch *w, void (*fn)(void *ctx), void *ctx)
{
    pthread_mutex_lock(&w->lock);
    w->listener = fn;
    w->listener_ctx = ctx;
    pthread_mutex_unlock(&w->lock);
}

/* Frees a watch whose thread is not running; its condition variable only
 * when it was made. */
static void release(struct claim_watch *w, bool cond)
{
    json_decref(w->claims);
    if (cond)
        pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    free(w->driver);
    free(w->pool);
    kube_cancel_free(w->cancel);
    free(w);
}

struct claim_watch *claim_watch_start(struct kube_client *kc,
                                      const struct claim_watch_options *opts, struct error *err)
{
    if (opts->driver_name == NULL || !opts->driver_name[0] ||
        (opts->pool_name != NULL && !opts->pool_name[0])) {
        error_set(err, "claim watch: a driver name is required, and a pool name is not empty");
        return NULL;
    }
    struct claim_watch *w = xcalloc(1, sizeof(*w));
    w->kc = kc;
    w->driver = xstrdup(opts->driver_name);
    w->pool = opts->pool_name != NULL ? xstrdup(opts->pool_name) : NULL;
    w->retry_base_ms = opts->retry_base_ms > 0 ? opts->retry_base_ms : 500;
    w->retry_max_ms = opts->retry_max_ms > 0 ? opts->retry_max_ms : 30000;
    w->cancel = kube_cancel_new();
    w->claims = json_object();
    pthread_mutex_init(&w->lock, NULL);
    if (retry_cond_init(&w->cond) < 0) {
        error_set(err, "claim watch: cannot create a condition variable");
        release(w, false);
        return NULL;
    }
    if (w->claims == NULL) {
        error_set(err, "claim watch: out of memory");
        claim_watch_free(w);
        return NULL;
    }
    if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
        error_set(err, "claim watch: cannot start its thread");
        claim_watch_free(w);
        return NULL;
    }
    w->started = true;
    return w;
}

void claim_watch_stop(struct claim_watch *w)
{
    if (w == NULL || !w->started)
        return;
    kube_cancel_fire(w->cancel);
    /* The watch only waits on the API server, whose calls are cancelled. */
    thread_stop_join(&w->lock, &w->cond, &w->stopping, w->thread);
    w->started = false;
}

void claim_watch_free(struct claim_watch *w)
{
    if (w == NULL)
        return;
    claim_watch_stop(w);
    release(w, true);
}
