// SPDX-License-Identifier: Apache-2.0
/* The binder's worker (reconcile, binding-condition writes) and its
 * lifecycle: see binder.h. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "binder_internal.h"
#include "cleanup.h"
#include "driver/device/personality.h"
#include "driver/claims/claim_json.h"
#include "driver/claims/claim_patch.h"
#include "fakehw_attach.h"
#include "log.h"
#include "retry.h"
#include "xalloc.h"

/* --- reconcile --- */

struct scan {
    struct binder *b;
    const json_t *claim;
    json_t *held;     /* "pool/device" -> true */
    json_t *seen;     /* request keys still in use */
    bool needs_write; /* the claim has an outcome to report */
};

static void held_key(const char *pool, const char *device, char *key, size_t size)
{
    snprintf(key, size, "%s/%s", pool, device);
}

static void scan_result(void *ctx, const char *pool, const char *device, bool has_conditions)
{
    struct scan *s = ctx;
    if (!s->b->dev.serves(s->b->dev.ctx, pool))
        return;
    char key[768];
    held_key(pool, device, key, sizeof(key));
    json_object_set_new(s->held, key, json_true());
    if (!has_conditions)
        return;
    binder_request_key(s->claim, pool, device, key, sizeof(key));
    json_object_set_new(s->seen, key, json_true());
    if (binding_claim_reported(s->claim, s->b->driver, pool, device, &s->b->names) !=
        BINDING_REPORTED_NOTHING)
        return;
    if (binder_device_outcome(s->b, s->claim, pool, device, true) != WAIT)
        s->needs_write = true;
}

struct unheld {
    const json_t *held;
    json_t *detach; /* [pool, device] pairs */
};

/* An attachable device that is not detached: detach it unless a claim
 * holds it. */
static void note_engaged(void *ctx, const char *pool, const char *device, enum fakehw_attach state)
{
    struct unheld *u = ctx;
    char key[768];
    held_key(pool, device, key, sizeof(key));
    if (state == FAKEHW_ATTACH_NONE || state == FAKEHW_ATTACH_DETACHED ||
        json_object_get(u->held, key) != NULL)
        return;
    LOG_I("binder: %s is %s but no claim holds it: detaching", key, fakehw_attach_name(state));
    json_array_append_new(u->detach, json_pack("[ss]", pool, device));
}

/* The devices no claim holds any more, detached: from the tree's snapshot,
 * or the devices' own list. */
static void detach_unheld(struct binder *b, const json_t *held, const struct device_snapshot *snap)
{
    if (b->tree) {
        for (size_t i = 0; snap != NULL && snap->tree_up && i < snap->n; i++) {
            const struct fakehw_device *d = &snap->devs[i];
            char key[768];
            held_key(b->pool, d->name, key, sizeof(key));
            if (d->attach == FAKEHW_ATTACH_NONE || d->attach == FAKEHW_ATTACH_DETACHED ||
                json_object_get(held, key) != NULL)
                continue;
            LOG_I("binder: %s is %s but no claim holds it: detaching", d->name,
                  fakehw_attach_name(d->attach));
            binder_write_attach(b, b->pool, fakehw_device_dir(d), "detach");
        }
        return;
    }
    struct unheld u = {held, json_array()};
    if (u.detach == NULL)
        return;
    b->dev.each_engaged(b->dev.ctx, note_engaged, &u);
    size_t i;
    json_t *pair;
    json_array_foreach(u.detach, i, pair)
    {
        binder_write_attach(b, json_string_value(json_array_get(pair, 0)),
                            json_string_value(json_array_get(pair, 1)), "detach");
    }
    json_decref(u.detach);
}

static void reconcile(struct binder *b, json_t *claims, const struct device_snapshot *snap,
                      bool synced)
{
    json_auto_t *held = json_object();
    json_auto_t *seen = json_object();
    if (held == NULL || seen == NULL)
        return;
    const char *uid;
    json_t *claim;
    json_object_foreach(claims, uid, claim)
    {
        struct scan s = {b, claim, held, seen, false};
        binding_claim_pool_results(claim, b->driver, b->pool, scan_result, &s);
        if (s.needs_write) {
            const struct claim_ref ref = {claim_meta(claim, "namespace"), claim_meta(claim, "name"),
                                          uid};
            if (ref.ns != NULL && ref.name != NULL) {
                pthread_mutex_lock(&b->lock);
                claim_queue_add(&b->queue, &ref, monotonic_ms(), -1);
                pthread_mutex_unlock(&b->lock);
            }
        }
    }
    /* Forget requests of allocations that are gone. */
    const char *key;
    void *tmp;
    json_t *v;
    json_object_foreach_safe(b->requested, tmp, key, v)
    {
        if (json_object_get(seen, key) == NULL)
            json_object_del(b->requested, key);
    }
    if (synced)
        detach_unheld(b, held, snap);
}

/* --- writing one claim's status --- */

struct build {
    struct binder *b;
    const json_t *claim; /* as read */
    json_t *devices;     /* the new list, built up; NULL until something changes */
    const char *now;
    bool oom;
};

static void build_result(void *ctx, const char *pool, const char *device, bool has_conditions)
{
    struct build *w = ctx;
    struct binder *b = w->b;
    if (!has_conditions || w->oom || !b->dev.serves(b->dev.ctx, pool) ||
        binding_claim_reported(w->claim, b->driver, pool, device, &b->names) !=
            BINDING_REPORTED_NOTHING)
        return;
    enum outcome_kind o = binder_device_outcome(b, w->claim, pool, device, false);
    if (o == WAIT)
        return;
    char message[256];
    snprintf(message, sizeof(message),
             o == ATTACHED ? "fakehw attached %s" : "fakehw could not attach %s", device);
    /* Each device's condition is set on the list built so far. */
    const json_t *base = w->claim;
    json_t *tmp = NULL;
    if (w->devices != NULL) {
        tmp = json_deep_copy(w->claim);
        if (tmp == NULL ||
            json_object_set(json_object_get(tmp, "status"), "devices", w->devices) < 0) {
            json_decref(tmp);
            w->oom = true;
            return;
        }
        base = tmp;
    }
    json_t *next = binding_status_set(
        base, b->driver, pool, device, o == ATTACHED ? b->names.attached : b->names.failed,
        o == ATTACHED ? BINDING_REASON_ATTACHED : BINDING_REASON_FAILED, message, w->now);
    json_decref(tmp);
    if (next == NULL) {
        w->oom = true;
        return;
    }
    json_decref(w->devices);
    w->devices = next;
    LOG_I("binder: claim %s/%s: %s %s%s%s", claim_meta(w->claim, "namespace"),
          claim_meta(w->claim, "name"), o == ATTACHED ? b->names.attached : b->names.failed,
          b->pool ? "" : pool, b->pool ? "" : "/", device);
}

static enum claim_write_result write_claim(struct binder *b, const struct claim_work *it,
                                           struct error *err)
{
    json_auto_t *claim = NULL;
    switch (claim_patch_read(b->kc, it, &claim, err)) {
    case CLAIM_READ_OK:
        break;
    case CLAIM_READ_FAILED:
        return CLAIM_WRITE_RETRY;
    case CLAIM_READ_INVALID:
    case CLAIM_READ_GONE:
    case CLAIM_READ_REPLACED:
        return CLAIM_WRITE_DONE;
    }
    char now[32];
    claim_format_time((long long)time(NULL), now, sizeof(now));
    struct build w = {.b = b, .claim = claim, .now = now};
    binding_claim_pool_results(claim, b->driver, b->pool, build_result, &w);
    json_auto_t *devices = w.devices;
    if (w.oom) {
        error_set(err, "out of memory");
        return CLAIM_WRITE_RETRY;
    }
    if (devices == NULL) /* reported already, or nothing to report any more */
        return CLAIM_WRITE_DONE;
    json_auto_t *answer = NULL;
    enum claim_write_result failed;
    if (claim_patch_devices(b->kc, it, claim, devices, &answer, &failed, err) < 0)
        return failed;
    pthread_mutex_lock(&b->lock);
    b->stats.writes++;
    pthread_mutex_unlock(&b->lock);
    return CLAIM_WRITE_DONE;
}

/* Lock held: after an attempt, requeue or free, and say so. */
static void settle_locked(struct binder *b, struct claim_work *it, enum claim_write_result out,
                          const struct error *err)
{
    long delay = 0;
    enum claim_settle s = claim_queue_settle(&b->queue, it, out, monotonic_ms(), &delay);
    if (s == CLAIM_SETTLE_GIVEN_UP) {
        LOG_E("binder: giving up on claim %s/%s after %d failed attempts: %s", it->ns, it->name,
              it->failures, err->msg);
        claim_work_free(it);
    } else if (s == CLAIM_SETTLE_BACKOFF) {
        LOG_W("binder: writing the binding conditions of claim %s/%s failed (attempt %d, retry "
              "in %ld ms): %s",
              it->ns, it->name, it->failures, delay, err->msg);
    }
}

static void binder_free(struct binder *b);

static void *worker_main(void *arg)
{
    struct binder *b = arg;
    pthread_mutex_lock(&b->lock);
    while (!b->stopping) {
        if (b->dirty && monotonic_ms() >= b->next_reconcile_ms) {
            b->dirty = false;
            struct device_snapshot *snap = device_snapshot_get(b->snap);
            pthread_mutex_unlock(&b->lock);
            bool synced = false; /* the watch's lock is never taken under b->lock */
            json_t *claims = claim_watch_claims(b->watch, &synced);
            if (claims != NULL)
                reconcile(b, claims, snap, synced);
            json_decref(claims);
            device_snapshot_put(snap);
            pthread_mutex_lock(&b->lock);
            if (b->reconcile_gap_ms > 0)
                b->next_reconcile_ms = monotonic_ms() + b->reconcile_gap_ms;
            continue;
        }
        long long due = -1;
        struct claim_work *it = claim_queue_pop_due(&b->queue, monotonic_ms(), &due);
        if (it == NULL) {
            /* A reconcile held back by the gap is due then. */
            if (b->dirty && (due < 0 || b->next_reconcile_ms < due))
                due = b->next_reconcile_ms;
            retry_cond_wait_until(&b->cond, &b->lock, due);
            continue;
        }
        pthread_mutex_unlock(&b->lock);
        struct error err = {{0}};
        enum claim_write_result out = write_claim(b, it, &err);
        pthread_mutex_lock(&b->lock);
        settle_locked(b, it, out, &err);
    }
    pthread_mutex_unlock(&b->lock);
    if (thread_end_mark(&b->worker_end))
        binder_free(b); /* left behind by binder_stop_by */
    return NULL;
}

/* --- lifecycle --- */

void binder_devices_changed(struct binder *b, struct device_snapshot *snap)
{
    if (b == NULL || snap == NULL)
        return;
    device_snapshot_get(snap);
    pthread_mutex_lock(&b->lock);
    struct device_snapshot *old = b->snap;
    b->snap = snap;
    b->dirty = true;
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
    device_snapshot_put(old);
}

void binder_devices_kick(struct binder *b)
{
    if (b == NULL)
        return;
    pthread_mutex_lock(&b->lock);
    b->dirty = true;
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
}

void binder_get_stats(struct binder *b, struct binder_stats *st)
{
    pthread_mutex_lock(&b->lock);
    *st = b->stats;
    st->conflicts = b->queue.conflicts;
    st->failures = b->queue.failures;
    pthread_mutex_unlock(&b->lock);
}

/* The claim watch's listener: called with the watch's lock held. */
static void claims_changed(void *ctx)
{
    struct binder *b = ctx;
    pthread_mutex_lock(&b->lock);
    b->dirty = true;
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
}

static int check_options(const struct binder_options *opts, struct error *err)
{
    if (!opts->driver_name || !opts->driver_name[0])
        return error_set(err, "binder: a driver name is required");
    if (opts->devices == NULL &&
        (!opts->pool_name || !opts->pool_name[0] || !opts->fakehw_root || !opts->fakehw_root[0]))
        return error_set(err, "binder: pool name and fakehw root are required");
    const struct binder_devices *d = opts->devices;
    if (d != NULL && (!d->serves || !d->read_attach || !d->write_attach || !d->each_engaged ||
                      (opts->pool_name != NULL && !opts->pool_name[0])))
        return error_set(err, "binder: its devices need every function, and a pool name is "
                              "not empty");
    return 0;
}

struct binder *binder_start(struct kube_client *kc, struct claim_watch *watch,
                            const struct binder_options *opts, struct error *err)
{
    if (check_options(opts, err) < 0)
        return NULL;
    cleanup_free struct binder *b = xcalloc(1, sizeof(*b));
    if ((b->requested = json_object()) == NULL) {
        error_set(err, "binder: out of memory");
        return NULL;
    }
    if (retry_cond_init(&b->cond) < 0) {
        json_decref(b->requested);
        error_set(err, "binder: cannot create a condition variable");
        return NULL;
    }
    if (thread_end_init(&b->worker_end) < 0) {
        pthread_cond_destroy(&b->cond);
        json_decref(b->requested);
        error_set(err, "binder: cannot create a condition variable");
        return NULL;
    }
    b->kc = kc;
    b->watch = watch;
    b->driver = xstrdup(opts->driver_name);
    b->pool = opts->pool_name != NULL ? xstrdup(opts->pool_name) : NULL;
    b->root = xstrdup(opts->fakehw_root != NULL ? opts->fakehw_root : "");
    b->tree = opts->devices == NULL;
    if (b->tree)
        binder_tree_devices(b, &b->dev);
    else
        b->dev = *opts->devices;
    b->reconcile_gap_ms = opts->reconcile_gap_ms > 0 ? opts->reconcile_gap_ms : 0;
    binding_names_make(b->driver, &b->names);
    const struct claim_queue_policy policy = {opts->retry_base_ms, opts->retry_max_ms,
                                              opts->max_attempts};
    claim_queue_init(&b->queue, &policy);
    pthread_mutex_init(&b->lock, NULL);
    b->dirty = true; /* the watch may have listed before the binder listens */
    if (pthread_create(&b->worker_thread, NULL, worker_main, b) != 0) {
        error_set(err, "binder: cannot start its worker thread");
        binder_free(steal_pointer(&b));
        return NULL;
    }
    b->worker_started = true;
    claim_watch_listen(watch, claims_changed, b);
    return steal_pointer(&b);
}

static void binder_free(struct binder *b)
{
    thread_end_destroy(&b->worker_end);
    claim_queue_clear(&b->queue);
    device_snapshot_put(b->snap);
    json_decref(b->requested);
    pthread_cond_destroy(&b->cond);
    pthread_mutex_destroy(&b->lock);
    free(b->driver);
    free(b->pool);
    free(b->root);
    free(b);
}

int binder_stop_by(struct binder *b, long long deadline_ms)
{
    if (b == NULL)
        return 0;
    if (b->worker_started)
        claim_watch_listen(b->watch, NULL, NULL);
    pthread_mutex_lock(&b->lock);
    b->stopping = true;
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
    if (b->worker_started && !thread_end_wait(&b->worker_end, b->worker_thread, deadline_ms)) {
        LOG_W("binder: its worker is still blocked in the fakehw tree %s (a hung or stopped "
              "fakehw?); leaving it behind",
              b->root);
        return -1;
    }
    binder_free(b);
    return 0;
}

void binder_stop(struct binder *b)
{
    binder_stop_by(b, -1);
}
