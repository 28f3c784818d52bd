// SPDX-License-Identifier: Apache-2.0
/* The binder threads: see binder.h. */
#include "binder.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "binding_conditions.h"
#include "driver/health/claim_status_json.h"
#include "driver/health/retry.h"
#include "fakehw_attach.h"
#include "fakehw_tree_read.h"
#include "log.h"

#define CLAIMS_PATH            "/apis/resource.k8s.io/v1/resourceclaims"
#define QUICK_CONFLICT_RETRIES 5

/* A claim whose status needs a write. */
struct item {
    char *ns, *name, *uid;
    long long due_ms;
    int failures, conflicts;
    struct item *next;
};

struct binder {
    struct kube_client *kc;
    char *driver, *pool, *root;
    struct binding_names names;
    long retry_base_ms, retry_max_ms;
    int max_attempts;

    pthread_t watch_thread, worker_thread;
    bool watch_started, worker_started;
    struct kube_cancel *watch_cancel; /* ends the claim watch */

    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t cond;
    bool stopping;
    bool dirty;     /* claims or devices changed since the last reconcile */
    bool synced;    /* a whole list has been seen: unheld devices may be detached */
    json_t *claims; /* uid -> claim, only claims with results of driver and pool */
    struct device_snapshot *snap;
    struct item *items;
    struct binder_stats stats;

    /* Owned by the worker thread: allocations ("uid/device/allocationTime")
     * it asked fakehw to attach. */
    json_t *requested;
};

/* --- the fakehw tree --- */

static int attach_path(const struct binder *b, const char *device, char *path, size_t size)
{
    int n = snprintf(path, size, "%s/%s/%s/%s", b->root, FAKEHW_DIR_DEVICES, device,
                     FAKEHW_ATTR_ATTACH);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

static int read_attach(const struct binder *b, const char *device, enum fakehw_attach *state)
{
    char path[PATH_MAX], value[32];
    struct error err;
    if (attach_path(b, device, path, sizeof(path)) < 0)
        return -1;
    if (fakehw_tree_read_value(path, value, sizeof(value), &err) < 0) {
        if (errno == ENOENT) { /* an older tree: nothing to attach */
            *state = FAKEHW_ATTACH_NONE;
            return 0;
        }
        LOG_W("binder: %s", err.msg);
        return -1;
    }
    if (!fakehw_attach_parse(value, state)) {
        LOG_W("binder: %s: \"%s\" is not an attach state", path, value);
        return -1;
    }
    return 0;
}

/* Writes one command to the device's attach file. */
static int write_attach(struct binder *b, const char *device, const char *command)
{
    char path[PATH_MAX];
    if (attach_path(b, device, path, sizeof(path)) < 0)
        return -1;
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    size_t len = strlen(command);
    ssize_t w = fd < 0 ? -1 : write(fd, command, len);
    int saved = errno;
    if (fd >= 0)
        close(fd);
    if (w != (ssize_t)len) {
        LOG_W("binder: writing \"%s\" to %s: %s", command, path, strerror(saved));
        return -1;
    }
    pthread_mutex_lock(&b->lock);
    if (!strcmp(command, "attach"))
        b->stats.attach_requests++;
    else
        b->stats.detach_requests++;
    pthread_mutex_unlock(&b->lock);
    return 0;
}

/* --- deciding, per allocated device --- */

enum outcome_kind { WAIT, ATTACHED, FAILED };

static void request_key(const json_t *claim, const char *device, char *key, size_t size)
{
    const char *uid = json_string_value(json_object_get(json_object_get(claim, "metadata"), "uid"));
    snprintf(key, size, "%s/%s/%s", uid ? uid : "", device, binding_allocation_time(claim));
}

/* What the tree says about an allocated device; act asks fakehw to attach
 * when nobody has yet (only the reconcile pass acts, the status write only
 * looks). */
static enum outcome_kind device_outcome(struct binder *b, const json_t *claim, const char *device,
                                        bool act)
{
    char key[512];
    request_key(claim, device, key, sizeof(key));
    bool asked = json_object_get(b->requested, key) != NULL;
    enum fakehw_attach state;
    if (read_attach(b, device, &state) < 0)
        return WAIT;
    if (act && !asked &&
        (state == FAKEHW_ATTACH_DETACHED || state == FAKEHW_ATTACH_FAILED ||
         state == FAKEHW_ATTACH_ATTACHING)) {
        /* Attaching already (another claim's request, or ours before a
         * restart): wait for it like for our own. */
        if (state != FAKEHW_ATTACH_ATTACHING) {
            const json_t *meta = json_object_get(claim, "metadata");
            const char *ns = json_string_value(json_object_get(meta, "namespace"));
            const char *name = json_string_value(json_object_get(meta, "name"));
            LOG_I("binder: claim %s/%s (allocated %s) needs %s attached: asking fakehw",
                  ns ? ns : "?", name ? name : "?", binding_allocation_time(claim), device);
            if (write_attach(b, device, "attach") < 0)
                return WAIT;
        }
        json_object_set_new(b->requested, key, json_true());
        asked = true;
        if (read_attach(b, device, &state) < 0)
            return WAIT;
    } else if (act && asked && state == FAKEHW_ATTACH_DETACHED) {
        /* Detached under us (by hand): ask again. */
        if (write_attach(b, device, "attach") < 0 || read_attach(b, device, &state) < 0)
            return WAIT;
    }
    switch (state) {
    case FAKEHW_ATTACH_NONE:
    case FAKEHW_ATTACH_ATTACHED:
        return ATTACHED;
    case FAKEHW_ATTACH_FAILED:
        /* A failure left from an earlier allocation is not this one's. */
        return asked ? FAILED : WAIT;
    case FAKEHW_ATTACH_DETACHED:
    case FAKEHW_ATTACH_ATTACHING:
        break;
    }
    return WAIT;
}

/* --- the write queue --- */

static struct item *find_item(struct binder *b, const char *uid)
{
    for (struct item *it = b->items; it; it = it->next)
        if (!strcmp(it->uid, uid))
            return it;
    return NULL;
}

static void item_free(struct item *it)
{
    if (it == NULL)
        return;
    free(it->ns);
    free(it->name);
    free(it->uid);
    free(it);
}

/* Lock held. */
static void enqueue_locked(struct binder *b, const char *ns, const char *name, const char *uid)
{
    struct item *it = find_item(b, uid);
    long long now = retry_now_ms();
    if (it != NULL) {
        if (it->due_ms > now)
            it->due_ms = now;
        it->failures = it->conflicts = 0;
        return;
    }
    it = calloc(1, sizeof(*it));
    if (it != NULL) {
        it->ns = strdup(ns);
        it->name = strdup(name);
        it->uid = strdup(uid);
    }
    if (it == NULL || !it->ns || !it->name || !it->uid) {
        LOG_E("binder: out of memory queueing claim %s/%s", ns, name);
        item_free(it);
        return;
    }
    it->due_ms = now;
    it->next = b->items;
    b->items = it;
}

/* --- reconcile --- */

struct scan {
    struct binder *b;
    const json_t *claim;
    json_t *held;     /* device -> true */
    json_t *seen;     /* request keys still in use */
    bool needs_write; /* the claim has an outcome to report */
};

static void scan_result(void *ctx, const char *device, bool has_conditions)
{
    struct scan *s = ctx;
    json_object_set_new(s->held, device, json_true());
    if (!has_conditions)
        return;
    char key[512];
    request_key(s->claim, device, key, sizeof(key));
    json_object_set_new(s->seen, key, json_true());
    if (binding_claim_reported(s->claim, s->b->driver, s->b->pool, device, &s->b->names) !=
        BINDING_REPORTED_NOTHING)
        return;
    if (device_outcome(s->b, s->claim, device, true) != WAIT)
        s->needs_write = true;
}

static void reconcile(struct binder *b, json_t *claims, const struct device_snapshot *snap,
                      bool synced)
{
    json_t *held = json_object(), *seen = json_object();
    if (held == NULL || seen == NULL)
        goto out;
    const char *uid;
    json_t *claim;
    json_object_foreach(claims, uid, claim)
    {
        struct scan s = {b, claim, held, seen, false};
        binding_claim_results(claim, b->driver, b->pool, scan_result, &s);
        if (s.needs_write) {
            const json_t *meta = json_object_get(claim, "metadata");
            const char *ns = json_string_value(json_object_get(meta, "namespace"));
            const char *name = json_string_value(json_object_get(meta, "name"));
            if (ns != NULL && name != NULL) {
                pthread_mutex_lock(&b->lock);
                enqueue_locked(b, ns, name, uid);
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
    for (size_t i = 0; synced && snap != NULL && snap->tree_up && i < snap->n; i++) {
        const struct fakehw_device *d = &snap->devs[i];
        if (d->attach == FAKEHW_ATTACH_NONE || d->attach == FAKEHW_ATTACH_DETACHED ||
            json_object_get(held, d->name) != NULL)
            continue;
        LOG_I("binder: %s is %s but no claim holds it: detaching", d->name,
              fakehw_attach_name(d->attach));
        write_attach(b, d->name, "detach");
    }
out:
    json_decref(held);
    json_decref(seen);
}

/* --- writing one claim's status --- */

enum write_result { DONE, RETRY, CONFLICT };

struct build {
    struct binder *b;
    const json_t *claim; /* as read */
    json_t *devices;     /* the new list, built up; NULL until something changes */
    const char *now;
    bool oom;
};

static void build_result(void *ctx, const char *device, bool has_conditions)
{
    struct build *w = ctx;
    struct binder *b = w->b;
    if (!has_conditions || w->oom ||
        binding_claim_reported(w->claim, b->driver, b->pool, device, &b->names) !=
            BINDING_REPORTED_NOTHING)
        return;
    enum outcome_kind o = device_outcome(b, w->claim, device, false);
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
        base, b->driver, b->pool, device, o == ATTACHED ? b->names.attached : b->names.failed,
        o == ATTACHED ? BINDING_REASON_ATTACHED : BINDING_REASON_FAILED, message, w->now);
    json_decref(tmp);
    if (next == NULL) {
        w->oom = true;
        return;
    }
    json_decref(w->devices);
    w->devices = next;
    LOG_I("binder: claim %s/%s: %s %s",
          json_string_value(json_object_get(json_object_get(w->claim, "metadata"), "namespace")),
          json_string_value(json_object_get(json_object_get(w->claim, "metadata"), "name")),
          o == ATTACHED ? b->names.attached : b->names.failed, device);
}

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

static enum write_result write_claim(struct binder *b, const struct item *it, struct error *err)
{
    char path[768];
    if (!path_safe(it->ns) || !path_safe(it->name))
        return DONE;
    snprintf(path, sizeof(path), "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s", it->ns,
             it->name);
    long status = 0;
    json_t *claim = NULL, *patch = NULL, *answer = NULL;
    enum write_result out = RETRY;
    struct build w = {.b = b};
    if (kube_request(b->kc, "GET", path, NULL, NULL, &status, &claim, err) < 0) {
        if (status == 404)
            out = DONE;
        goto done;
    }
    const char *uid = json_string_value(json_object_get(json_object_get(claim, "metadata"), "uid"));
    if (uid == NULL || strcmp(uid, it->uid) != 0) {
        out = DONE;
        goto done;
    }
    char now[32];
    claim_status_format_time((long long)time(NULL), now, sizeof(now));
    w.claim = claim;
    w.now = now;
    binding_claim_results(claim, b->driver, b->pool, build_result, &w);
    if (w.oom) {
        error_set(err, "out of memory");
        goto done;
    }
    if (w.devices == NULL) { /* reported already, or nothing to report any more */
        out = DONE;
        goto done;
    }
    patch = claim_status_patch(claim, w.devices);
    if (patch == NULL) {
        error_set(err, "out of memory");
        goto done;
    }
    strncat(path, "/status", sizeof(path) - strlen(path) - 1);
    if (kube_request(b->kc, "PATCH", path, patch, "application/merge-patch+json", &status, &answer,
                     err) < 0) {
        out = status == 409 ? CONFLICT : status == 404 ? DONE : RETRY;
        goto done;
    }
    pthread_mutex_lock(&b->lock);
    b->stats.writes++;
    pthread_mutex_unlock(&b->lock);
    out = DONE;
done:
    json_decref(w.devices);
    json_decref(claim);
    json_decref(patch);
    json_decref(answer);
    return out;
}

/* Lock held: after an attempt, requeue or free. */
static void settle_locked(struct binder *b, struct item *it, enum write_result out,
                          const struct error *err)
{
    if (out == DONE || find_item(b, it->uid) != NULL) {
        item_free(it);
        return;
    }
    long long now = retry_now_ms();
    if (out == CONFLICT) {
        b->stats.conflicts++;
        it->conflicts++;
        if (it->conflicts <= QUICK_CONFLICT_RETRIES) {
            it->due_ms = now;
            goto requeue;
        }
    } else {
        b->stats.failures++;
        it->conflicts = 0;
    }
    it->failures++;
    if (it->failures >= b->max_attempts) {
        LOG_E("binder: giving up on claim %s/%s after %d failed attempts: %s", it->ns, it->name,
              it->failures, err->msg);
        item_free(it);
        return;
    }
    long delay = retry_backoff_ms(it->failures, b->retry_base_ms, b->retry_max_ms);
    LOG_W("binder: writing the binding conditions of claim %s/%s failed (attempt %d, retry in "
          "%ld ms): %s",
          it->ns, it->name, it->failures, delay, err->msg);
    it->due_ms = now + delay;
requeue:
    it->next = b->items;
    b->items = it;
}

static void *worker_main(void *arg)
{
    struct binder *b = arg;
    pthread_mutex_lock(&b->lock);
    while (!b->stopping) {
        if (b->dirty) {
            b->dirty = false;
            json_t *claims = json_copy(b->claims); /* shallow: claims are replaced, not edited */
            struct device_snapshot *snap = device_snapshot_get(b->snap);
            bool synced = b->synced;
            pthread_mutex_unlock(&b->lock);
            if (claims != NULL)
                reconcile(b, claims, snap, synced);
            json_decref(claims);
            device_snapshot_put(snap);
            pthread_mutex_lock(&b->lock);
            continue;
        }
        struct item *best = NULL;
        for (struct item *it = b->items; it; it = it->next)
            if (best == NULL || it->due_ms < best->due_ms)
                best = it;
        if (best == NULL || best->due_ms > retry_now_ms()) {
            retry_cond_wait_until(&b->cond, &b->lock, best ? best->due_ms : -1);
            continue;
        }
        struct item **link = &b->items;
        while (*link != best)
            link = &(*link)->next;
        *link = best->next;
        best->next = NULL;
        pthread_mutex_unlock(&b->lock);
        struct error err = {{0}};
        enum write_result out = write_claim(b, best, &err);
        pthread_mutex_lock(&b->lock);
        settle_locked(b, best, out, &err);
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

/* --- the claim watch --- */

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

/* Lists every claim; replaces the kept set.  rv gets the list's version. */
static int list_claims(struct binder *b, char *rv, size_t rv_size, struct error *err)
{
    json_t *list = NULL;
    if (kube_request(b->kc, "GET", CLAIMS_PATH, NULL, NULL, NULL, &list, err) < 0) {
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
    long long until = retry_now_ms() + ms;
    pthread_mutex_lock(&b->lock);
    while (!b->stopping && retry_now_ms() < until)
        retry_cond_wait_until(&b->cond, &b->lock, until);
    pthread_mutex_unlock(&b->lock);
}

static void *watch_main(void *arg)
{
    struct binder *b = arg;
    int failures = 0;
    while (!kube_cancel_fired(b->watch_cancel)) {
        char rv[128];
        struct error err = {{0}};
        int rc = list_claims(b, rv, sizeof(rv), &err);
        if (rc == 0)
            rc = kube_watch(b->kc, CLAIMS_PATH, rv, on_event, b, b->watch_cancel, &err);
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

void binder_get_stats(struct binder *b, struct binder_stats *st)
{
    pthread_mutex_lock(&b->lock);
    *st = b->stats;
    pthread_mutex_unlock(&b->lock);
}

struct binder *binder_start(struct kube_client *kc, const struct binder_options *opts,
                            struct error *err)
{
    struct binder *b = calloc(1, sizeof(*b));
    if (b == NULL) {
        error_set(err, "binder: out of memory");
        return NULL;
    }
    b->kc = kc;
    b->watch_cancel = kube_cancel_new();
    b->driver = strdup(opts->driver_name ? opts->driver_name : "");
    b->pool = strdup(opts->pool_name ? opts->pool_name : "");
    b->root = strdup(opts->fakehw_root ? opts->fakehw_root : "");
    b->claims = json_object();
    b->requested = json_object();
    b->retry_base_ms = opts->retry_base_ms > 0 ? opts->retry_base_ms : 500;
    b->retry_max_ms = opts->retry_max_ms > 0 ? opts->retry_max_ms : 30000;
    b->max_attempts = opts->max_attempts > 0 ? opts->max_attempts : 12;
    pthread_mutex_init(&b->lock, NULL);
    if (!b->driver || !b->pool || !b->root || !b->claims || !b->requested) {
        error_set(err, "binder: out of memory");
        goto fail;
    }
    if (!b->driver[0] || !b->pool[0] || !b->root[0]) {
        error_set(err, "binder: driver name, pool name and fakehw root are required");
        goto fail;
    }
    binding_names_make(b->driver, &b->names);
    if (retry_cond_init(&b->cond) < 0) {
        error_set(err, "binder: cannot create a condition variable");
        goto fail;
    }
    if (pthread_create(&b->worker_thread, NULL, worker_main, b) != 0) {
        error_set(err, "binder: cannot start its worker thread");
        pthread_cond_destroy(&b->cond);
        goto fail;
    }
    b->worker_started = true;
    if (pthread_create(&b->watch_thread, NULL, watch_main, b) != 0) {
        error_set(err, "binder: cannot start its watch thread");
        binder_stop(b);
        return NULL;
    }
    b->watch_started = true;
    return b;
fail:
    pthread_mutex_destroy(&b->lock);
    json_decref(b->claims);
    json_decref(b->requested);
    free(b->driver);
    free(b->pool);
    free(b->root);
    kube_cancel_free(b->watch_cancel);
    free(b);
    return NULL;
}

void binder_stop(struct binder *b)
{
    if (b == NULL)
        return;
    kube_cancel_fire(b->watch_cancel);
    pthread_mutex_lock(&b->lock);
    b->stopping = true;
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
    if (b->watch_started)
        pthread_join(b->watch_thread, NULL);
    if (b->worker_started)
        pthread_join(b->worker_thread, NULL);
    while (b->items != NULL) {
        struct item *it = b->items;
        b->items = it->next;
        item_free(it);
    }
    device_snapshot_put(b->snap);
    json_decref(b->claims);
    json_decref(b->requested);
    pthread_cond_destroy(&b->cond);
    pthread_mutex_destroy(&b->lock);
    free(b->driver);
    free(b->pool);
    free(b->root);
    kube_cancel_free(b->watch_cancel);
    free(b);
}
