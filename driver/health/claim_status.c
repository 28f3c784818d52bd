// SPDX-License-Identifier: Apache-2.0
/* The claim device-status writer thread: see claim_status.h. */
#include "claim_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "claim_status_json.h"
#include "cleanup.h"
#include "device_health.h"
#include "driver/claims/claim_json.h"
#include "driver/claims/claim_patch.h"
#include "driver/claims/claim_queue.h"
#include "log.h"
#include "retry.h"
#include "worker.h"
#include "xalloc.h"

struct claim_status_writer {
    struct kube_client *kc;
    char *driver, *pool;
    struct claim_status_options opts; /* a copy; its names are driver and pool */

    pthread_t thread;
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t cond;  /* wakes the thread; also signals idleness to waiters */
    bool stopping;

    struct device_snapshot *snap; /* the last inventory snapshot (a reference); NULL before */

    char **changed; /* device names whose holders must be queued */
    size_t n_changed, cap_changed;
    long long changed_since; /* when the oldest of them changed; -1: none */

    struct claim_queue queue;
    bool warned_dropped; /* the server dropped status.devices once: said so */
    struct claim_status_stats stats;
};

void claim_status_queue_prepared(struct claim_status_writer *w, const struct claim_ref *claim)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    claim_queue_add(&w->queue, claim, monotonic_ms() + CLAIM_STATUS_AFTER_PREPARE_MS, -1);
    pthread_mutex_unlock(&w->lock);
}

void claim_status_kick(struct claim_status_writer *w)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    if (w->queue.n > 0)
        pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

void claim_status_prepared(struct claim_status_writer *w, const struct claim_ref *claim)
{
    claim_status_queue_prepared(w, claim);
    claim_status_kick(w);
}

void claim_status_unprepared(struct claim_status_writer *w, const char *uid)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    size_t before = w->queue.n;
    claim_queue_drop(&w->queue, uid);
    if (w->queue.n != before) /* else the writer has nothing new to see */
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
    char *name = strdup(device_name);
    if (name != NULL && w->n_changed == w->cap_changed) {
        size_t cap = w->cap_changed ? w->cap_changed * 2 : 16;
        char **grown = realloc(w->changed, cap * sizeof(*grown));
        if (grown != NULL) {
            w->changed = grown;
            w->cap_changed = cap;
        }
    }
    if (name == NULL || w->n_changed == w->cap_changed) {
        free(name);
        LOG_E("claim status: out of memory noting a health change of %s", device_name);
        return;
    }
    w->changed[w->n_changed++] = name;
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
                       snap->devs, snap->n, snap->tree_up, &w->opts.health, note_changed, w);
    if (w->n_changed > 0 && w->changed_since < 0)
        w->changed_since = monotonic_ms();
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
    struct claim_queue found; /* unique by uid */
};

static void visit_holder(void *ctx, const struct claim_ref *claim, const char *pool,
                         const char *device, const char *share_id)
{
    (void)share_id;
    struct holder_scan *s = ctx;
    if (pool == NULL || device == NULL || strcmp(pool, s->w->pool) != 0)
        return;
    bool hit = false;
    for (size_t i = 0; i < s->n_changed && !hit; i++)
        hit = strcmp(s->changed[i], device) == 0;
    if (hit)
        claim_queue_add(&s->found, claim, 0, -1);
}

/* Lock held on entry and exit; dropped while the holders are listed. */
static void queue_holders_locked(struct claim_status_writer *w)
{
    struct holder_scan scan = {.w = w, .changed = w->changed, .n_changed = w->n_changed};
    claim_queue_init(&scan.found, &w->queue.policy);
    long long since = w->changed_since;
    w->changed = NULL;
    w->n_changed = w->cap_changed = 0;
    w->changed_since = -1;
    pthread_mutex_unlock(&w->lock);
    if (w->opts.holders != NULL)
        w->opts.holders(w->opts.holders_ctx, visit_holder, &scan);
    pthread_mutex_lock(&w->lock);
    long long now = monotonic_ms();
    for (const struct claim_work *it = scan.found.items; it; it = it->next) {
        LOG_V(3, "claim status: claim %s/%s holds a device whose health changed", it->ns, it->name);
        const struct claim_ref claim = claim_work_ref(it);
        claim_queue_add(&w->queue, &claim, now, since);
    }
    claim_queue_clear(&scan.found);
    for (size_t i = 0; i < scan.n_changed; i++)
        free(scan.changed[i]);
    free(scan.changed);
}

/* --- writing one claim --- */

static const struct fakehw_device *find_dev(void *ctx, const char *name)
{
    return device_snapshot_find(ctx, name);
}

static bool devices_equal(const json_t *a, const json_t *b)
{
    size_t na = json_is_array(a) ? json_array_size(a) : 0;
    size_t nb = json_is_array(b) ? json_array_size(b) : 0;
    if (na == 0 || nb == 0)
        return na == nb;
    return json_equal((json_t *)a, (json_t *)b);
}

/* The watch's copy of the queued claim, on a first attempt only (after a
 * 409 the copy is known stale). */
static json_t *watched_copy(struct claim_status_writer *w, const struct claim_work *it)
{
    if (w->opts.watch == NULL || it->conflicts > 0)
        return NULL;
    return claim_watch_get(w->opts.watch, it->ns, it->name, it->uid);
}

/* Reads the queued claim (the watch's copy, else a GET) and says whether
 * there is a status to write: false with *out set when there is not. */
static bool read_queued(struct claim_status_writer *w, const struct claim_work *it, json_t **claim,
                        enum claim_write_result *out, struct error *err)
{
    *claim = watched_copy(w, it);
    *out = CLAIM_WRITE_DONE;
    switch (*claim != NULL ? CLAIM_READ_OK : claim_patch_read(w->kc, it, claim, err)) {
    case CLAIM_READ_OK:
        break;
    case CLAIM_READ_INVALID:
        LOG_E("claim status: claim %s/%s: not a valid namespace/name, not written", it->ns,
              it->name);
        return false;
    case CLAIM_READ_GONE:
        LOG_V(2, "claim status: claim %s/%s is gone, nothing to write", it->ns, it->name);
        return false;
    case CLAIM_READ_REPLACED: {
        const char *uid = claim_meta(*claim, "uid");
        LOG_V(2, "claim status: claim %s/%s has uid %s, not %s: replaced, nothing to write", it->ns,
              it->name, uid ? uid : "(none)", it->uid);
        return false;
    }
    case CLAIM_READ_FAILED:
        *out = CLAIM_WRITE_RETRY;
        return false;
    }
    if (!claim_has_results(*claim, w->driver, w->pool)) {
        LOG_V(2, "claim status: claim %s/%s holds no device of %s in pool %s any more", it->ns,
              it->name, w->driver, w->pool);
        return false;
    }
    return true;
}

/* status.devices of the claim from a reference to the last snapshot, built
 * outside the lock: a new snapshot meanwhile queues the claim again. */
static int build_devices(struct claim_status_writer *w, const json_t *claim, json_t **devices,
                         struct error *err)
{
    char now[32];
    claim_format_time((long long)time(NULL), now, sizeof(now));
    pthread_mutex_lock(&w->lock);
    struct device_snapshot *snap = device_snapshot_get(w->snap);
    pthread_mutex_unlock(&w->lock);
    struct claim_status_input in = {w->driver,
                                    w->pool,
                                    find_dev,
                                    snap,
                                    snap != NULL ? snap->tree_up : true,
                                    now,
                                    w->opts.config_data,
                                    w->opts.config_data_ctx,
                                    w->opts.health};
    int rc = claim_status_devices_build(claim, &in, devices, err);
    device_snapshot_put(snap);
    return rc;
}

/* After a PATCH: counts it, warns once when the API server dropped the
 * field, and reports how long a health change took to be written. */
static void note_written(struct claim_status_writer *w, const struct claim_work *it,
                         const json_t *devices, const json_t *answer)
{
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
    if (it->changed_ms >= 0 && w->opts.on_changed_written != NULL)
        w->opts.on_changed_written(w->opts.on_changed_written_ctx,
                                   (long)(monotonic_ms() - it->changed_ms));
}

static enum claim_write_result write_claim(struct claim_status_writer *w,
                                           const struct claim_work *it, struct error *err)
{
    json_auto_t *claim = NULL;
    enum claim_write_result out;
    if (!read_queued(w, it, &claim, &out, err))
        return out;
    json_auto_t *devices = NULL;
    int rc = build_devices(w, claim, &devices, err);
    if (rc == CLAIM_STATUS_BUILD_FAILED)
        return CLAIM_WRITE_RETRY; /* left as it is, the status could contradict the device's health
                                   */
    if (rc < 0) {
        LOG_E("claim status: %s", err->msg);
        return CLAIM_WRITE_DONE; /* the claim itself is malformed: retrying cannot help */
    }
    const json_t *old = json_object_get(json_object_get(claim, "status"), "devices");
    if (devices_equal(old, devices)) {
        pthread_mutex_lock(&w->lock);
        w->stats.unchanged++;
        pthread_mutex_unlock(&w->lock);
        return CLAIM_WRITE_DONE;
    }
    json_auto_t *answer = NULL;
    enum claim_write_result failed;
    if (claim_patch_devices(w->kc, it, claim, devices, &answer, &failed, err) < 0)
        return failed;
    note_written(w, it, devices, answer);
    return CLAIM_WRITE_DONE;
}

/* After an attempt: requeues or frees the claim, and says so.  Lock held. */
static void settle_locked(struct claim_status_writer *w, struct claim_work *it,
                          enum claim_write_result out, const struct error *err)
{
    long delay = 0;
    enum claim_settle s = claim_queue_settle(&w->queue, it, out, monotonic_ms(), &delay);
    if (s == CLAIM_SETTLE_DONE)
        return;
    if (out == CLAIM_WRITE_CONFLICT)
        LOG_V(2, "claim status: claim %s/%s changed while writing (409), re-reading", it->ns,
              it->name);
    if (s == CLAIM_SETTLE_GIVEN_UP) {
        LOG_E("claim status: giving up on claim %s/%s after %d failed attempts: %s", it->ns,
              it->name, it->failures, err->msg);
        claim_work_free(it);
    } else if (s == CLAIM_SETTLE_BACKOFF && out != CLAIM_WRITE_CONFLICT) {
        LOG_W("claim status: writing status of claim %s/%s failed (attempt %d, retry in %ld ms): "
              "%s",
              it->ns, it->name, it->failures, delay, err->msg);
    }
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
        /* Until the first snapshot nothing is written: device data would be missing. */
        long long due = -1;
        struct claim_work *it =
            w->snap != NULL ? claim_queue_pop_due(&w->queue, monotonic_ms(), &due) : NULL;
        if (it == NULL) {
            pthread_cond_broadcast(&w->cond); /* wakes claim_status_wait_idle */
            retry_cond_wait_until(&w->cond, &w->lock, due);
            continue;
        }
        pthread_mutex_unlock(&w->lock);

        struct error err = {{0}};
        enum claim_write_result out = write_claim(w, it, &err);

        pthread_mutex_lock(&w->lock);
        settle_locked(w, it, out, &err);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

struct claim_status_writer *claim_status_start(struct kube_client *kc,
                                               const struct claim_status_options *opts,
                                               struct error *err)
{
    if (!opts->driver_name || !opts->driver_name[0] || !opts->pool_name || !opts->pool_name[0]) {
        error_set(err, "claim status writer: driver name and pool name are required");
        return NULL;
    }
    cleanup_free struct claim_status_writer *w = xcalloc(1, sizeof(*w));
    if (retry_cond_init(&w->cond) < 0) {
        error_set(err, "claim status writer: cannot create a condition variable");
        return NULL;
    }
    w->kc = kc;
    w->driver = xstrdup(opts->driver_name);
    w->pool = xstrdup(opts->pool_name);
    w->opts = *opts;
    w->opts.driver_name = w->driver;
    w->opts.pool_name = w->pool;
    const struct claim_queue_policy policy = {opts->retry_base_ms, opts->retry_max_ms,
                                              opts->max_attempts};
    claim_queue_init(&w->queue, &policy);
    w->changed_since = -1;
    pthread_mutex_init(&w->lock, NULL);
    if (pthread_create(&w->thread, NULL, writer_thread, w) != 0) {
        error_set(err, "claim status writer: cannot start its thread");
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->lock);
        free(w->driver);
        free(w->pool);
        return NULL;
    }
    return steal_pointer(&w);
}

int claim_status_wait_idle(struct claim_status_writer *w, int timeout_ms)
{
    long long deadline = monotonic_ms() + timeout_ms;
    pthread_mutex_lock(&w->lock);
    int rc = 0;
    while (!claim_queue_idle(&w->queue) || (w->snap != NULL && w->n_changed > 0)) {
        if (monotonic_ms() >= deadline) {
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
    st->conflicts = w->queue.conflicts;
    st->failures = w->queue.failures;
    st->given_up = w->queue.given_up;
    st->queued = w->queue.n;
    pthread_mutex_unlock(&w->lock);
}

void claim_status_stop(struct claim_status_writer *w)
{
    if (w == NULL)
        return;
    thread_stop_join(&w->lock, &w->cond, &w->stopping, w->thread);
    claim_queue_clear(&w->queue);
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
