// SPDX-License-Identifier: Apache-2.0
/* The claim device-status writer thread: see claim_status.h. */
#include "claim_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "claim_status_json.h"
#include "device_health.h"
#include "log.h"
#include "retry.h"

/* Conflicts in a row that are retried at once, before backing off. */
#define QUICK_CONFLICT_RETRIES 5

struct item {
    char *ns, *name, *uid;
    long long due_ms;
    long long changed_ms; /* when a health change of its devices was seen; -1: none */
    int failures;         /* failed attempts in a row (conflicts beyond the quick ones included) */
    int conflicts;        /* 409 answers in a row */
    struct item *next;
};

struct claim_status_writer {
    struct kube_client *kc;
    char *driver, *pool;
    claim_status_holders_fn holders;
    void *holders_ctx;
    long retry_base_ms, retry_max_ms;
    int max_attempts;
    void (*on_changed_written)(void *ctx, long latency_ms);
    void *on_changed_written_ctx;

    pthread_t thread;
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t cond;  /* wakes the thread; also signals idleness to waiters */
    bool stopping;

    struct device_snapshot *snap; /* the last inventory snapshot (a reference); NULL before */

    char **changed; /* device names whose holders must be queued */
    size_t n_changed, cap_changed;
    long long changed_since; /* when the oldest of them changed; -1: none */

    struct item *items;
    const char *busy_uid; /* the claim being written now (owned by the item in flight) */
    bool busy_dropped;    /* unprepared while in flight: do not requeue */
    bool warned_dropped;  /* the server dropped status.devices once: said so */
    struct claim_status_stats stats;
};

static void item_free(struct item *it)
{
    if (it == NULL)
        return;
    free(it->ns);
    free(it->name);
    free(it->uid);
    free(it);
}

static struct item *find_item(struct claim_status_writer *w, const char *uid, struct item ***link)
{
    for (struct item **pp = &w->items; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->uid, uid) == 0) {
            if (link)
                *link = pp;
            return *pp;
        }
    }
    return NULL;
}

/* Queues (or re-times) the claim; lock held.  A fresh request resets the
 * failure count: it carries news. */
static void enqueue_locked(struct claim_status_writer *w, const char *ns, const char *name,
                           const char *uid, long long due_ms, long long changed_ms)
{
    struct item *it = find_item(w, uid, NULL);
    if (it != NULL) {
        if (due_ms < it->due_ms)
            it->due_ms = due_ms;
        if (changed_ms >= 0 && (it->changed_ms < 0 || changed_ms < it->changed_ms))
            it->changed_ms = changed_ms;
        it->failures = 0;
        it->conflicts = 0;
        return;
    }
    it = calloc(1, sizeof(*it));
    if (it != NULL) {
        it->ns = strdup(ns);
        it->name = strdup(name);
        it->uid = strdup(uid);
    }
    if (it == NULL || !it->ns || !it->name || !it->uid) {
        LOG_E("claim status: out of memory queueing claim %s/%s", ns, name);
        item_free(it);
        return;
    }
    it->due_ms = due_ms;
    it->changed_ms = changed_ms;
    it->next = w->items;
    w->items = it;
    w->stats.queued++;
}

void claim_status_prepared(struct claim_status_writer *w, const char *ns, const char *name,
                           const char *uid)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    enqueue_locked(w, ns, name, uid, retry_now_ms(), -1);
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

void claim_status_unprepared(struct claim_status_writer *w, const char *uid)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    struct item **link;
    struct item *it = find_item(w, uid, &link);
    if (it != NULL) {
        *link = it->next;
        item_free(it);
        w->stats.queued--;
    }
    if (w->busy_uid != NULL && strcmp(w->busy_uid, uid) == 0)
        w->busy_dropped = true;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static void note_changed(void *ctx, const char *device_name)
{
    struct claim_status_writer *w = ctx;
    for (size_t i = 0; i < w->n_changed; i++) {
        if (strcmp(w->changed[i], device_name) == 0)
            return;
    }
    if (w->n_changed == w->cap_changed) {
        size_t cap = w->cap_changed ? w->cap_changed * 2 : 16;
        char **grown = realloc(w->changed, cap * sizeof(*grown));
        if (grown == NULL)
            goto oom;
        w->changed = grown;
        w->cap_changed = cap;
    }
    w->changed[w->n_changed] = strdup(device_name);
    if (w->changed[w->n_changed] == NULL)
        goto oom;
    w->n_changed++;
    return;
oom:
    LOG_E("claim status: out of memory noting a health change of %s", device_name);
}

void claim_status_devices_changed(struct claim_status_writer *w, struct device_snapshot *snap)
{
    if (w == NULL || snap == NULL)
        return;
    device_snapshot_get(snap);
    pthread_mutex_lock(&w->lock);
    struct device_snapshot *old = w->snap;
    /* Before the first snapshot nothing was reported: as if healthy and up. */
    device_health_diff(old ? old->devs : NULL, old ? old->n : 0, old ? old->tree_up : true,
                       snap->devs, snap->n, snap->tree_up, note_changed, w);
    if (w->n_changed > 0 && w->changed_since < 0)
        w->changed_since = retry_now_ms();
    w->snap = snap;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    device_snapshot_put(old);
}

/* --- finding the claims that hold changed devices (no writer lock held) --- */

struct holder_scan {
    struct claim_status_writer *w;
    char **changed;
    size_t n_changed;
    struct item *found; /* unique by uid */
};

static void visit_holder(void *ctx, const char *ns, const char *name, const char *uid,
                         const char *pool, const char *device, const char *share_id)
{
    (void)share_id;
    struct holder_scan *s = ctx;
    if (pool == NULL || device == NULL || strcmp(pool, s->w->pool) != 0)
        return;
    bool hit = false;
    for (size_t i = 0; i < s->n_changed && !hit; i++)
        hit = strcmp(s->changed[i], device) == 0;
    if (!hit)
        return;
    for (struct item *it = s->found; it; it = it->next) {
        if (strcmp(it->uid, uid) == 0)
            return;
    }
    struct item *it = calloc(1, sizeof(*it));
    if (it != NULL) {
        it->ns = strdup(ns);
        it->name = strdup(name);
        it->uid = strdup(uid);
    }
    if (it == NULL || !it->ns || !it->name || !it->uid) {
        LOG_E("claim status: out of memory listing the holders of %s", device);
        item_free(it);
        return;
    }
    it->next = s->found;
    s->found = it;
}

/* Lock held on entry and exit; dropped while the holders are listed. */
static void queue_holders_locked(struct claim_status_writer *w)
{
    struct holder_scan scan = {.w = w, .changed = w->changed, .n_changed = w->n_changed};
    long long since = w->changed_since;
    w->changed = NULL;
    w->n_changed = w->cap_changed = 0;
    w->changed_since = -1;
    pthread_mutex_unlock(&w->lock);
    if (w->holders != NULL)
        w->holders(w->holders_ctx, visit_holder, &scan);
    pthread_mutex_lock(&w->lock);
    long long now = retry_now_ms();
    while (scan.found != NULL) {
        struct item *it = scan.found;
        scan.found = it->next;
        LOG_V(3, "claim status: claim %s/%s holds a device whose health changed", it->ns, it->name);
        enqueue_locked(w, it->ns, it->name, it->uid, now, since);
        item_free(it);
    }
    for (size_t i = 0; i < scan.n_changed; i++)
        free(scan.changed[i]);
    free(scan.changed);
}

/* --- writing one claim --- */

enum outcome { DONE, RETRY, CONFLICT };

static const struct fakehw_device *find_dev(void *ctx, const char *name)
{
    return device_snapshot_find(ctx, name);
}

/* Namespaces and claim names are DNS labels/subdomains; anything else must
 * not reach a URL path. */
static bool path_safe(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 253)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
            return false;
    }
    return true;
}

static bool devices_equal(const json_t *a, const json_t *b)
{
    size_t na = json_is_array(a) ? json_array_size(a) : 0;
    size_t nb = json_is_array(b) ? json_array_size(b) : 0;
    if (na == 0 || nb == 0)
        return na == nb;
    return json_equal((json_t *)a, (json_t *)b);
}

static enum outcome write_claim(struct claim_status_writer *w, const struct item *it,
                                struct error *err)
{
    char path[768];
    if (!path_safe(it->ns) || !path_safe(it->name)) {
        LOG_E("claim status: claim %s/%s: not a valid namespace/name, not written", it->ns,
              it->name);
        return DONE;
    }
    kube_path_resourceclaim(path, sizeof(path), it->ns, it->name);
    long status = 0;
    json_t *claim = NULL, *devices = NULL, *patch = NULL, *answer = NULL;
    enum outcome out = RETRY;
    if (kube_request(w->kc, "GET", path, NULL, NULL, &status, &claim, err) < 0) {
        if (status == 404) {
            LOG_V(2, "claim status: claim %s/%s is gone, nothing to write", it->ns, it->name);
            out = DONE;
        }
        goto done;
    }
    const char *uid = json_string_value(json_object_get(json_object_get(claim, "metadata"), "uid"));
    if (uid == NULL || strcmp(uid, it->uid) != 0) {
        LOG_V(2, "claim status: claim %s/%s has uid %s, not %s: replaced, nothing to write", it->ns,
              it->name, uid ? uid : "(none)", it->uid);
        out = DONE;
        goto done;
    }
    if (!claim_status_has_results(claim, w->driver, w->pool)) {
        LOG_V(2, "claim status: claim %s/%s holds no device of %s in pool %s any more", it->ns,
              it->name, w->driver, w->pool);
        out = DONE;
        goto done;
    }
    char now[32];
    claim_status_format_time((long long)time(NULL), now, sizeof(now));
    /* Built from a reference to the last snapshot, outside the lock: a new
     * snapshot meanwhile queues the claim again. */
    pthread_mutex_lock(&w->lock);
    struct device_snapshot *snap = device_snapshot_get(w->snap);
    pthread_mutex_unlock(&w->lock);
    struct claim_status_input in = {
        w->driver, w->pool, find_dev, snap, snap != NULL ? snap->tree_up : true, now};
    int rc = claim_status_devices_build(claim, &in, &devices, err);
    device_snapshot_put(snap);
    if (rc == CLAIM_STATUS_BUILD_FAILED) {
        out = RETRY; /* left as it is, the status could contradict the device's health */
        goto done;
    }
    if (rc < 0) {
        LOG_E("claim status: %s", err->msg);
        out = DONE; /* the claim itself is malformed: retrying cannot help */
        goto done;
    }
    const json_t *old = json_object_get(json_object_get(claim, "status"), "devices");
    if (devices_equal(old, devices)) {
        pthread_mutex_lock(&w->lock);
        w->stats.unchanged++;
        pthread_mutex_unlock(&w->lock);
        out = DONE;
        goto done;
    }
    patch = claim_status_patch(claim, devices);
    if (patch == NULL) {
        error_set(err, "out of memory");
        goto done;
    }
    strncat(path, "/status", sizeof(path) - strlen(path) - 1);
    if (kube_request(w->kc, "PATCH", path, patch, "application/merge-patch+json", &status, &answer,
                     err) < 0) {
        out = status == 409 ? CONFLICT : status == 404 ? DONE : RETRY;
        goto done;
    }
    const json_t *written = json_object_get(json_object_get(answer, "status"), "devices");
    pthread_mutex_lock(&w->lock);
    w->stats.writes++;
    bool warn = json_array_size(devices) > 0 && json_array_size(written) == 0 && !w->warned_dropped;
    if (warn)
        w->warned_dropped = true;
    pthread_mutex_unlock(&w->lock);
    if (warn)
        LOG_W("claim status: the API server dropped status.devices of claim %s/%s; is the "
              "DRAResourceClaimDeviceStatus feature gate off?",
              it->ns, it->name);
    LOG_V(2, "claim status: wrote status.devices of claim %s/%s (%zu entries)", it->ns, it->name,
          json_array_size(devices));
    if (it->changed_ms >= 0 && w->on_changed_written != NULL)
        w->on_changed_written(w->on_changed_written_ctx, (long)(retry_now_ms() - it->changed_ms));
    out = DONE;
done:
    json_decref(claim);
    json_decref(devices);
    json_decref(patch);
    json_decref(answer);
    return out;
}

/* The earliest due item, or NULL; *next_ms its due time (or -1 when none). */
static struct item *earliest_locked(struct claim_status_writer *w, long long *next_ms)
{
    struct item *best = NULL;
    for (struct item *it = w->items; it; it = it->next) {
        if (best == NULL || it->due_ms < best->due_ms)
            best = it;
    }
    *next_ms = best ? best->due_ms : -1;
    return best;
}

/* After an attempt: puts the item back for a retry, or frees it.  Lock held. */
static void settle_locked(struct claim_status_writer *w, struct item *it, enum outcome out,
                          const struct error *err)
{
    bool superseded = find_item(w, it->uid, NULL) != NULL;
    if (out == DONE || w->busy_dropped || superseded) {
        item_free(it);
        return;
    }
    long long now = retry_now_ms();
    if (out == CONFLICT) {
        w->stats.conflicts++;
        it->conflicts++;
        LOG_V(2, "claim status: claim %s/%s changed while writing (409), re-reading", it->ns,
              it->name);
        if (it->conflicts <= QUICK_CONFLICT_RETRIES) {
            it->due_ms = now;
            goto requeue;
        }
    } else {
        w->stats.failures++;
        it->conflicts = 0;
    }
    it->failures++;
    if (it->failures >= w->max_attempts) {
        w->stats.given_up++;
        LOG_E("claim status: giving up on claim %s/%s after %d failed attempts: %s", it->ns,
              it->name, it->failures, err->msg);
        item_free(it);
        return;
    }
    long delay = retry_backoff_ms(it->failures, w->retry_base_ms, w->retry_max_ms);
    if (out != CONFLICT)
        LOG_W("claim status: writing status of claim %s/%s failed (attempt %d, retry in %ld ms): "
              "%s",
              it->ns, it->name, it->failures, delay, err->msg);
    it->due_ms = now + delay;
requeue:
    it->next = w->items;
    w->items = it;
    w->stats.queued++;
}

static void *writer_thread(void *arg)
{
    struct claim_status_writer *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->stopping) {
        if (w->snap != NULL && w->n_changed > 0) {
            queue_holders_locked(w);
            continue;
        }
        long long due = -1;
        struct item *it = w->snap != NULL ? earliest_locked(w, &due) : NULL;
        if (it == NULL || due > retry_now_ms()) {
            pthread_cond_broadcast(&w->cond); /* wakes claim_status_wait_idle */
            retry_cond_wait_until(&w->cond, &w->lock, due);
            continue;
        }
        struct item **link = &w->items;
        while (*link != it)
            link = &(*link)->next;
        *link = it->next;
        it->next = NULL;
        w->stats.queued--;
        w->busy_uid = it->uid;
        w->busy_dropped = false;
        pthread_mutex_unlock(&w->lock);

        struct error err = {{0}};
        enum outcome out = write_claim(w, it, &err);

        pthread_mutex_lock(&w->lock);
        w->busy_uid = NULL;
        settle_locked(w, it, out, &err);
        w->busy_dropped = false;
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

struct claim_status_writer *claim_status_start(struct kube_client *kc,
                                               const struct claim_status_options *opts,
                                               struct error *err)
{
    struct claim_status_writer *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        error_set(err, "out of memory");
        return NULL;
    }
    w->kc = kc;
    w->driver = strdup(opts->driver_name ? opts->driver_name : "");
    w->pool = strdup(opts->pool_name ? opts->pool_name : "");
    w->holders = opts->holders;
    w->holders_ctx = opts->holders_ctx;
    w->retry_base_ms = opts->retry_base_ms > 0 ? opts->retry_base_ms : 500;
    w->retry_max_ms = opts->retry_max_ms > 0 ? opts->retry_max_ms : 30000;
    w->max_attempts = opts->max_attempts > 0 ? opts->max_attempts : 12;
    w->on_changed_written = opts->on_changed_written;
    w->on_changed_written_ctx = opts->on_changed_written_ctx;
    w->changed_since = -1;
    if (w->driver == NULL || w->pool == NULL) {
        error_set(err, "out of memory");
        goto fail_alloc;
    }
    if (w->driver[0] == '\0' || w->pool[0] == '\0') {
        error_set(err, "claim status writer: driver name and pool name are required");
        goto fail_alloc;
    }
    pthread_mutex_init(&w->lock, NULL);
    if (retry_cond_init(&w->cond) < 0) {
        error_set(err, "claim status writer: cannot create a condition variable");
        goto fail_lock;
    }
    if (pthread_create(&w->thread, NULL, writer_thread, w) != 0) {
        error_set(err, "claim status writer: cannot start its thread");
        pthread_cond_destroy(&w->cond);
        goto fail_lock;
    }
    return w;
fail_lock:
    pthread_mutex_destroy(&w->lock);
fail_alloc:
    free(w->driver);
    free(w->pool);
    free(w);
    return NULL;
}

int claim_status_wait_idle(struct claim_status_writer *w, int timeout_ms)
{
    long long deadline = retry_now_ms() + timeout_ms;
    pthread_mutex_lock(&w->lock);
    int rc = 0;
    while (w->items != NULL || w->busy_uid != NULL || (w->snap != NULL && w->n_changed > 0)) {
        if (retry_now_ms() >= deadline) {
            rc = -1;
            break;
        }
        retry_cond_wait_until(&w->cond, &w->lock, deadline);
    }
    pthread_mutex_unlock(&w->lock);
    return rc;
}

void claim_status_get_stats(struct claim_status_writer *w, struct claim_status_stats *st)
{
    pthread_mutex_lock(&w->lock);
    *st = w->stats;
    pthread_mutex_unlock(&w->lock);
}

void claim_status_stop(struct claim_status_writer *w)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    w->stopping = true;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    while (w->items != NULL) {
        struct item *it = w->items;
        w->items = it->next;
        item_free(it);
    }
    for (size_t i = 0; i < w->n_changed; i++)
        free(w->changed[i]);
    free(w->changed);
    device_snapshot_put(w->snap);
    free(w->driver);
    free(w->pool);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    free(w);
}
