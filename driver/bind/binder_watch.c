// SPDX-License-Identifier: Apache-2.0
/* The binder's claim watch: keeps the claims with an allocation result of
 * this driver and pool (binder_internal.h). */
#include <stdio.h>
#include <string.h>

#include "binder_internal.h"
#include "driver/health/claim_status_json.h"
#include "log.h"
#include "retry.h"

static bool has_our_results(const json_t *claim, const char *driver, const char *pool)
{
    return claim_status_has_results(claim, driver, pool);
}

/* Lock held: keeps or forgets one claim. */
static void note_claim_locked(struct binder *b, json_t *claim, bool deleted)
{
    const char *uid = json_string_value(json_object_get(json_object_get(claim, "metadata"), "uid"));
    if (uid == NULL)
        return;
    if (!deleted && has_our_results(claim, b->driver, b->pool))
        json_object_set(b->claims, uid, claim);
    else if (json_object_get(b->claims, uid) != NULL)
        json_object_del(b->claims, uid);
    else
        return;
    b->dirty = true;
    pthread_cond_broadcast(&b->cond);
}

static int on_event(void *ctx, const char *type, json_t *object)
{
    struct binder *b = ctx;
    if (!strcmp(type, "ERROR"))
        return 1; /* e.g. 410 Gone: list again */
    if (!strcmp(type, "BOOKMARK"))
        return 0;
    pthread_mutex_lock(&b->lock);
    note_claim_locked(b, object, !strcmp(type, "DELETED"));
    pthread_mutex_unlock(&b->lock);
    return 0;
}

json_t *binder_allocated_claim(struct binder *b, const char *ns, const char *name, const char *uid)
{
    /* A reference, not a copy (a deep copy of a real claim is about a
     * tenth of a prepare's instructions): no one changes a kept object, the
     * watch replaces it, and jansson counts references atomically. */
    pthread_mutex_lock(&b->lock);
    json_t *claim = json_incref(json_object_get(b->claims, uid));
    pthread_mutex_unlock(&b->lock);
    const json_t *meta = json_object_get(claim, "metadata");
    const char *cns = json_string_value(json_object_get(meta, "namespace"));
    const char *cname = json_string_value(json_object_get(meta, "name"));
    if (claim != NULL && (!cns || !cname || strcmp(cns, ns) != 0 || strcmp(cname, name) != 0)) {
        json_decref(claim); /* another name under this uid: not the claim asked for */
        claim = NULL;
    }
    return claim;
}

/* Lists every claim; replaces the kept set.  rv gets the list's version. */
static int list_claims(struct binder *b, char *rv, size_t rv_size, struct error *err)
{
    json_t *list = NULL;
    if (kube_request(b->kc, KUBE_GET, KUBE_PATH_RESOURCECLAIMS, NULL, NULL, NULL, &list, err) < 0) {
        json_decref(list);
        return -1;
    }
    const char *v =
        json_string_value(json_object_get(json_object_get(list, "metadata"), "resourceVersion"));
    snprintf(rv, rv_size, "%s", v ? v : "");
    json_t *kept = json_object();
    size_t i;
    json_t *claim;
    json_array_foreach(json_object_get(list, "items"), i, claim)
    {
        const char *uid =
            json_string_value(json_object_get(json_object_get(claim, "metadata"), "uid"));
        if (kept != NULL && uid != NULL && has_our_results(claim, b->driver, b->pool))
            json_object_set(kept, uid, claim);
    }
    json_decref(list);
    if (kept == NULL)
        return error_set(err, "out of memory");
    pthread_mutex_lock(&b->lock);
    json_decref(b->claims);
    b->claims = kept;
    b->synced = true;
    b->dirty = true;
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
    return 0;
}

static void watch_pause(struct binder *b, long ms)
{
    long long until = monotonic_ms() + ms;
    pthread_mutex_lock(&b->lock);
    while (!b->stopping && monotonic_ms() < until)
        retry_cond_wait_until(&b->cond, &b->lock, until);
    pthread_mutex_unlock(&b->lock);
}

void *binder_watch_main(void *arg)
{
    struct binder *b = arg;
    int failures = 0;
    while (!kube_cancel_fired(b->watch_cancel)) {
        char rv[128];
        struct error err = {{0}};
        int rc = list_claims(b, rv, sizeof(rv), &err);
        if (rc == 0)
            rc =
                kube_watch(b->kc, KUBE_PATH_RESOURCECLAIMS, rv, on_event, b, b->watch_cancel, &err);
        if (rc < 0) {
            failures++;
            long delay = retry_backoff_ms(failures, b->retry_base_ms, b->retry_max_ms);
            LOG_V(2, "binder: claim watch (retry in %ld ms): %s", delay, err.msg);
            watch_pause(b, delay);
        } else {
            failures = 0;
        }
    }
    return NULL;
}
