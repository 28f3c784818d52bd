// SPDX-License-Identifier: Apache-2.0
/* The slice publisher threads: see slice_publisher.h. */
#include "slice_publisher.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api_names.h"
#include "cleanup.h"
#include "dns_names.h"
#include "log.h"
#include "retry.h"
#include "slice_builder.h"
#include "slice_fingerprint.h"
#include "slice_sync.h"

/* Re-plans at once after a conflict this many times, then backs off. */
#define QUICK_REPLANS 5
/* A watch event is acted on after this delay, so a burst (a wiped pool, our
 * own writes) costs one sync. */
#define WATCH_DEBOUNCE_MS 100
/* How long stop() keeps trying to delete the slices. */
#define CLEANUP_BUDGET_MS 10000
/* Syncs start at least this far apart by default: a device that flaps
 * costs at most twenty syncs a second, not one per flip. */
#define MIN_SYNC_INTERVAL_MS 50
/* Kept "sent vs stored" spec pairs (see slice_sync_input.equivalents). */
#define EQUIVALENTS_MAX 16
/* Own writes whose watch events may still come (see "echoes" below), and
 * how long one is waited for. */
#define ECHOES_MAX      1024
#define ECHO_TTL_MS     60000
#define UNEXPLAINED_MAX 256

struct slice_publisher {
    struct kube_client *kc;
    char *driver, *node;
    char *list_path;  /* KUBE_PATH_RESOURCESLICES?fieldSelector=... */
    char *watch_path; /* list_path&limit=1: the watch's LIST only wants the resourceVersion */
    enum taint_effect effect;
    enum unhealthy_policy policy;
    enum personality personality;
    const struct xid_policy *xids;
    int resync_ms, retry_base_ms, retry_max_ms, min_sync_interval_ms;
    void (*on_published)(void *ctx, long latency_ms);
    void *on_published_ctx;

    pthread_t sync_thread, watch_thread;
    bool sync_started, watch_started;
    struct kube_cancel *watch_cancel; /* ends the watch */
    bool shared_watch;                /* the owner watches: no watch thread */
    struct sync_gate *gate;           /* shared; NULL: no limit */
    atomic_bool halting;              /* set by halt: a wait at the gate gives up */

    /* Held while a LIST answer is in memory, so the sync's and the watch's
     * (on servers that ignore limit: the whole pool) are never both there. */
    pthread_mutex_t list_lock;
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t cond;
    bool stopping;
    struct device_snapshot *snap; /* desired input (a reference) */
    bool have_desired;
    bool dirty;               /* a sync is wanted */
    long long kick_at;        /* a watch event asks for a sync at this time; -1: none */
    long long next_resync;    /* periodic sync */
    long long pending_since;  /* first flip not yet published; -1: none */
    long long uid_checked_at; /* when the node's uid was last read */
    long long last_sync_at;   /* when the last sync (or skipped one) started; 0: none yet */
    char node_uid[128];
    bool taints_dropped;
    bool partitions_refused;     /* partitionable devices off: see partitions_refused() */
    bool partition_type_dropped; /* see partition_type_dropped() */
    /* Echoes: the watch reports our own writes too.  Each successful write
     * is remembered by its key (echo_key) -> the time it was made; a watch
     * event with that key is no news and starts no sync.  Events that match
     * nothing yet (an event can come before the write's answer) wait in
     * unexplained; a sync that only they asked for is skipped when they all
     * turn out to be echoes. */
    json_t *echoes;      /* key -> time (ms) */
    json_t *unexplained; /* keys of events not matched yet */
    bool foreign;        /* a change that is not ours, or too many to track */
    json_t *equivalents; /* sync thread only */
    bool synced_once;    /* sync thread only: a sync succeeded */
    /* Sync thread only: the digest of what the last successful sync
     * published; unset after a failure (the pool may be half written). */
    struct slice_fingerprint published;
    bool have_published;
    char last_rejected[ERROR_MSG_MAX]; /* sync thread only: what was last logged */
    struct slice_publisher_status st;
};

/* --- input side --- */

void slice_publisher_update(struct slice_publisher *p, struct device_snapshot *snap, bool flip)
{
    if (p == NULL || snap == NULL)
        return;
    device_snapshot_get(snap);
    pthread_mutex_lock(&p->lock);
    struct device_snapshot *old = p->snap;
    p->snap = snap;
    p->have_desired = true;
    p->dirty = true;
    if (flip && p->pending_since < 0)
        p->pending_since = monotonic_ms();
    p->st.in_sync = false;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    device_snapshot_put(old);
}

static void kick_locked(struct slice_publisher *p, long long delay_ms)
{
    long long at = monotonic_ms() + delay_ms;
    if (p->kick_at < 0 || at < p->kick_at)
        p->kick_at = at;
    pthread_cond_broadcast(&p->cond);
}

/* Asks for a sync whatever the echoes say (e.g. after the watch listed
 * again: anything may have happened while it was down). */
static void kick(struct slice_publisher *p, long long delay_ms)
{
    pthread_mutex_lock(&p->lock);
    p->foreign = true;
    kick_locked(p, delay_ms);
    pthread_mutex_unlock(&p->lock);
}

/* --- echoes of our own writes --- */

/* The key of a write or watch event: "W\n<name>\n<resourceVersion>" for a
 * create or update, "D\n<name>" for a delete.  -1 when a part is missing. */
static int echo_key(char *buf, size_t size, bool deleted, const char *name, const char *rv)
{
    if (name == NULL || name[0] == '\0' || (!deleted && (rv == NULL || rv[0] == '\0')))
        return -1;
    int n =
        deleted ? snprintf(buf, size, "D\n%s", name) : snprintf(buf, size, "W\n%s\n%s", name, rv);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* After a successful write: its watch event will be an echo. */
static void remember_echo(struct slice_publisher *p, bool deleted, const char *name, const char *rv)
{
    char key[512];
    if (echo_key(key, sizeof(key), deleted, name, rv) < 0)
        return;
    pthread_mutex_lock(&p->lock);
    if (json_object_size(p->echoes) < ECHOES_MAX)
        json_object_set_new(p->echoes, key, json_integer(monotonic_ms()));
    pthread_mutex_unlock(&p->lock);
}

/* Sync thread, lock held: true when every event since the last sync was an
 * echo of our own writes (those are then forgotten). */
static bool only_echoes_locked(struct slice_publisher *p)
{
    if (p->foreign)
        return false;
    size_t i;
    json_t *k;
    json_array_foreach(p->unexplained, i, k)
    {
        if (json_object_get(p->echoes, json_string_value(k)) == NULL)
            return false;
    }
    json_array_foreach(p->unexplained, i, k) json_object_del(p->echoes, json_string_value(k));
    json_array_clear(p->unexplained);
    return true;
}

/* Sync thread, lock held, as a sync starts: its LIST sees every change so
 * far; echoes that never came are forgotten after a while. */
static void start_sync_locked(struct slice_publisher *p, long long now)
{
    json_array_clear(p->unexplained);
    p->foreign = false;
    const char *key;
    json_t *at, *tmp;
    json_object_foreach_safe(p->echoes, tmp, key, at)
    {
        if (now - (long long)json_integer_value(at) > ECHO_TTL_MS)
            json_object_del(p->echoes, key);
    }
}

/* --- one sync --- */

static int list_slices(struct slice_publisher *p, const char *path, json_t **items, char *rv,
                       size_t rv_size, struct error *err)
{
    json_t *answer = NULL;
    if (kube_request(p->kc, KUBE_GET, path, NULL, NULL, NULL, &answer, err) < 0) {
        json_decref(answer); /* the Status of a failed answer */
        return -1;
    }
    json_t *list = json_object_get(answer, "items");
    if (list != NULL && !json_is_array(list)) {
        json_decref(answer);
        return error_set(err, "GET %s: items is not a list", path);
    }
    if (rv != NULL) {
        const char *v = slice_json_string(answer, "metadata", "resourceVersion");
        snprintf(rv, rv_size, "%s", v ? v : "");
    }
    *items = list ? json_incref(list) : json_array();
    json_decref(answer);
    return 0;
}

static void remember_equivalent(struct slice_publisher *p, const json_t *sent, const json_t *stored)
{
    if (json_array_size(p->equivalents) >= EQUIVALENTS_MAX)
        json_array_remove(p->equivalents, 0);
    json_array_append_new(p->equivalents, json_pack("{s:O, s:O}", "sent", sent, "stored", stored));
}

/* True when obj (a slice) uses partitionable devices: a counter set or a
 * device that consumes counters. */
static bool uses_counters(const json_t *obj)
{
    const json_t *spec = json_object_get(obj, "spec");
    if (json_array_size(json_object_get(spec, "sharedCounters")) > 0)
        return true;
    size_t i;
    const json_t *d;
    json_array_foreach(json_object_get(spec, "devices"), i, d)
    {
        if (json_array_size(json_object_get(d, "consumesCounters")) > 0)
            return true;
    }
    return false;
}

/* Sets a switch of the publisher and its mirror in the status, under the
 * lock; true when this call set it. */
static bool switch_once(struct slice_publisher *p, bool *flag, bool *status_flag)
{
    pthread_mutex_lock(&p->lock);
    bool first = !*flag;
    *flag = true;
    *status_flag = true;
    pthread_mutex_unlock(&p->lock);
    return first;
}

/* The server does not take partitionable devices (an older release, or the
 * DRAPartitionableDevices gate off): it refused a slice that uses them, or
 * stored it without them.  From then on the pool is whole GPUs only; said
 * once.  Returns true when this call switched. */
static bool partitions_refused(struct slice_publisher *p, const char *how)
{
    bool first = switch_once(p, &p->partitions_refused, &p->st.partitions_refused);
    if (first)
        LOG_W("slice publisher: the API server %s partitionable devices (counter sets and "
              "consumesCounters: is the DRAPartitionableDevices feature gate off, or the "
              "release older than 1.35, which wants counter sets in the devices' own "
              "slice?); publishing whole GPUs only: MIG partitions of "
              "dynamic-mode GPUs are left out",
              how);
    return first;
}

/* The server stored a slice without the partitionTypeAttribute it was sent
 * (1.34-1.36 do not know the field; 1.37 drops it with the
 * DRAPartitionableDevicesType gate off).  From then on it is not sent, so
 * what is sent and what is stored agree; said once.  Returns true when this
 * call switched. */
static bool partition_type_dropped(struct slice_publisher *p, const json_t *sent,
                                   const json_t *stored)
{
    const json_t *sent_spec = json_object_get(sent, "spec");
    const json_t *stored_spec = json_object_get(stored, "spec");
    if (json_object_get(sent_spec, "partitionTypeAttribute") == NULL || stored_spec == NULL ||
        json_object_get(stored_spec, "partitionTypeAttribute") != NULL)
        return false;
    bool first = switch_once(p, &p->partition_type_dropped, &p->st.partition_type_dropped);
    if (first)
        LOG_W("slice publisher: the API server dropped spec.partitionTypeAttribute of the "
              "ResourceSlices (is the DRAPartitionableDevicesType feature gate off, or the "
              "release older than 1.37?); publishing partitions without it");
    return first;
}

/* Checks what the server stored against what was sent.  Returns true when
 * the policy must change (taints dropped under policy auto, counters
 * dropped). */
static bool check_stored(struct slice_publisher *p, const json_t *sent, const json_t *stored,
                         bool ignore_taints)
{
    if (uses_counters(sent) && !uses_counters(stored) &&
        partitions_refused(p, "dropped (stored a slice without)"))
        return true;
    if (partition_type_dropped(p, sent, stored))
        return true;
    bool switch_policy = false;
    pthread_mutex_lock(&p->lock);
    bool known = p->taints_dropped;
    pthread_mutex_unlock(&p->lock);
    if (!known && slice_taints_dropped(sent, stored)) {
        pthread_mutex_lock(&p->lock);
        p->taints_dropped = true;
        p->st.taints_dropped = true;
        pthread_mutex_unlock(&p->lock);
        ignore_taints = p->policy == UNHEALTHY_POLICY_TAINT;
        if (p->policy == UNHEALTHY_POLICY_AUTO) {
            LOG_W("slice publisher: the API server dropped the device taints (is the "
                  "DRADeviceTaints feature gate off?); unhealthy devices are now left out of "
                  "the ResourceSlices (--unhealthy-device-policy=auto)");
            switch_policy = true;
        } else {
            LOG_W("slice publisher: the API server dropped the device taints (is the "
                  "DRADeviceTaints feature gate off?); unhealthy devices stay published "
                  "without a taint (--unhealthy-device-policy=taint)");
        }
    }
    const json_t *sent_spec = json_object_get(sent, "spec");
    const json_t *stored_spec = json_object_get(stored, "spec");
    if (!switch_policy && stored_spec != NULL &&
        !slice_spec_equal(sent_spec, stored_spec, ignore_taints)) {
        LOG_W("slice publisher: the API server stored slice %s differently from what was sent; "
              "accepting its form",
              slice_json_string(stored, "metadata", "name")
                  ? slice_json_string(stored, "metadata", "name")
                  : "?");
        remember_equivalent(p, sent_spec, stored_spec);
    }
    return switch_policy;
}

static void log_rejected(struct slice_publisher *p, const json_t *rejected)
{
    char *text = json_dumps(rejected, JSON_COMPACT);
    if (text == NULL)
        return;
    if (strncmp(text, p->last_rejected, sizeof(p->last_rejected) - 1) != 0) {
        size_t i;
        const json_t *r;
        json_array_foreach(rejected, i, r)
            LOG_E("slice publisher: device %s is not published: %s",
                  slice_json_string(r, "device", NULL), slice_json_string(r, "error", NULL));
        snprintf(p->last_rejected, sizeof(p->last_rejected), "%s", text);
    }
    free(text);
}

enum step { STEP_OK, STEP_REPLAN, STEP_FAIL };

/* The request that carries out one step of the plan. */
static enum kube_method op_method(enum slice_sync_op op)
{
    switch (op) {
    case SLICE_SYNC_CREATE:
        return KUBE_POST;
    case SLICE_SYNC_UPDATE:
        return KUBE_PUT;
    case SLICE_SYNC_DELETE:
        break;
    }
    return KUBE_DELETE;
}

/* One API call of the plan. */
static enum step apply_one(struct slice_publisher *p, enum slice_sync_op op, const json_t *obj,
                           bool ignore_taints, struct error *err)
{
    char path[KUBE_PATH_MAX];
    const enum kube_method m = op_method(op);
    const char *method = kube_method_name(m);    /* for the log */
    const bool writes = op != SLICE_SYNC_DELETE; /* the object is the body, the answer stored */
    const char *name = slice_json_string(obj, "metadata", "name");
    long status = 0;
    json_t *answer = NULL, *body = NULL;
    if (op != SLICE_SYNC_CREATE &&
        kube_path_resourceslice(path, sizeof(path), name ? name : "") < 0) {
        error_set(err, "%s slice %.64s...: the name is too long for a path", method, name);
        return STEP_FAIL;
    }
    if (op == SLICE_SYNC_CREATE) {
        snprintf(path, sizeof(path), "%s", KUBE_PATH_RESOURCESLICES);
        body = json_incref((json_t *)obj);
    } else if (op == SLICE_SYNC_UPDATE) {
        body = json_incref((json_t *)obj);
    } else {
        const char *uid = slice_json_string(obj, "metadata", "uid");
        const char *rv = slice_json_string(obj, "metadata", "resourceVersion");
        body = json_pack("{s:s, s:s, s:{s:s?, s:s?}}", "apiVersion", "v1", "kind", "DeleteOptions",
                         "preconditions", "uid", uid, "resourceVersion", rv);
    }
    int rc = kube_request(p->kc, m, path, body, NULL, &status, &answer, err);
    json_decref(body);
    enum step out = STEP_OK;
    if (rc < 0) {
        if (status == 409) {
            pthread_mutex_lock(&p->lock);
            p->st.conflicts++;
            pthread_mutex_unlock(&p->lock);
            LOG_V(2, "slice publisher: %s %s: conflict, re-reading", method, path);
            out = STEP_REPLAN;
        } else if (status == 404 && op == SLICE_SYNC_DELETE) {
            out = STEP_OK; /* already gone */
        } else if (status == 404) {
            out = STEP_REPLAN; /* deleted under our feet */
        } else if ((status == 422 || status == 400) && writes && uses_counters(obj)) {
            LOG_W("slice publisher: %s %s: %ld: %s", method, path, status, err->msg);
            partitions_refused(p, "refused");
            out = STEP_REPLAN;
        } else {
            out = STEP_FAIL;
        }
        json_decref(answer);
        return out;
    }
    pthread_mutex_lock(&p->lock);
    if (op == SLICE_SYNC_CREATE)
        p->st.creates++;
    else if (op == SLICE_SYNC_UPDATE)
        p->st.updates++;
    else
        p->st.deletes++;
    pthread_mutex_unlock(&p->lock);
    LOG_V(3, "slice publisher: %s %s: %ld", method, name ? name : path, status);
    if (writes)
        remember_echo(p, false, slice_json_string(answer, "metadata", "name"),
                      slice_json_string(answer, "metadata", "resourceVersion"));
    else
        remember_echo(p, true, name, NULL);
    if (writes && json_is_object(answer) && check_stored(p, obj, answer, ignore_taints))
        out = STEP_REPLAN;
    json_decref(answer);
    return out;
}

/* slice_sync_input.would_store: a dry-run PUT of obj; the spec the server
 * answers is what it would store, and is remembered as stored for what was
 * sent, as after a real write. */
static int dry_run_update(void *ctx, const json_t *obj, json_t **stored_spec)
{
    struct slice_publisher *p = ctx;
    char path[KUBE_PATH_MAX];
    const char *name = slice_json_string(obj, "metadata", "name");
    struct error err = {0};
    long status = 0;
    json_t *answer = NULL;
    int n = kube_path_resourceslice(path, sizeof(path), name ? name : "");
    if (n < 0 || strlen(path) + sizeof("?dryRun=All") > sizeof(path))
        return -1;
    strcat(path, "?dryRun=All");
    if (kube_request(p->kc, KUBE_PUT, path, obj, NULL, &status, &answer, &err) < 0) {
        LOG_V(2, "slice publisher: dry-run PUT %s: %ld: %s", name ? name : "?", status, err.msg);
        json_decref(answer);
        return -1;
    }
    json_t *spec = json_object_get(answer, "spec");
    if (!json_is_object(spec)) {
        json_decref(answer);
        return -1;
    }
    pthread_mutex_lock(&p->lock);
    p->st.dry_runs++;
    pthread_mutex_unlock(&p->lock);
    remember_equivalent(p, json_object_get(obj, "spec"), spec);
    *stored_spec = json_incref(spec);
    json_decref(answer);
    return 0;
}

struct sync_input {
    struct device_snapshot *snap; /* a reference */
    char node_uid[128];
    /* Only a device update asked for this sync (no watch event, no resync):
     * when it leaves the pool as the last successful sync published it,
     * nothing needs reading or writing. */
    bool may_skip;
};

/* sync_once's answer when nothing published changed: no request made. */
#define SYNC_SKIPPED 1
/* sync_once's answer when the publisher stopped while waiting at the gate. */
#define SYNC_HALTED 2

/* The run's builder and writer (slice_sync_run): one slice of the layout at
 * a time, one API call at a time. */
struct sync_call {
    struct slice_publisher *p;
    const struct slice_build_input *bin;
    const struct slice_layout *layout;
    bool ignore_taints;
};

static json_t *build_slice(void *ctx, size_t index, struct error *err)
{
    struct sync_call *c = ctx;
    return slice_layout_slice(c->bin, c->layout, index, err);
}

static int write_slice(void *ctx, enum slice_sync_op op, size_t index, const json_t *obj,
                       struct error *err)
{
    (void)index;
    struct sync_call *c = ctx;
    enum step s = apply_one(c->p, op, obj, c->ignore_taints, err);
    return s == STEP_OK ? 0 : s == STEP_REPLAN ? 1 : -1;
}

/* What one round of sync_once came to. */
enum round { ROUND_DONE, ROUND_SKIPPED, ROUND_AGAIN, ROUND_FAILED, ROUND_HALTED };

/* The builder's input as the publisher's state stands: what the server
 * dropped decides whether unhealthy devices are left out (*remove) and
 * whether taints are compared (*ignore_taints). */
static void build_input(struct slice_publisher *p, const struct sync_input *in,
                        struct slice_build_input *bin, bool *remove, bool *ignore_taints)
{
    pthread_mutex_lock(&p->lock);
    bool dropped = p->taints_dropped;
    bool partitions = !p->partitions_refused;
    bool partition_type = !p->partition_type_dropped;
    pthread_mutex_unlock(&p->lock);
    *remove =
        p->policy == UNHEALTHY_POLICY_REMOVE || (p->policy == UNHEALTHY_POLICY_AUTO && dropped);
    *ignore_taints = p->policy == UNHEALTHY_POLICY_TAINT && dropped;
    *bin = (struct slice_build_input){
        .driver = p->driver,
        .node = p->node,
        .node_uid = in->node_uid,
        .devs = in->snap->devs,
        .n_devs = in->snap->n,
        .tree_up = in->snap->tree_up,
        .effect = p->effect,
        .remove_unhealthy = *remove,
        .partitions = partitions,
        .partition_type = partition_type,
        .personality = p->personality,
        .xids = p->xids,
    };
}

/* A sync that succeeded: the status, and a log line when it wrote. */
static void note_synced(struct slice_publisher *p, const struct slice_layout *layout,
                        const struct slice_sync_summary *sum, bool remove)
{
    bool wrote = sum->updates + sum->creates + sum->deletes > 0;
    pthread_mutex_lock(&p->lock);
    bool changed_shape = p->st.generation != sum->generation ||
                         p->st.devices != layout->published || p->st.tainted != layout->tainted ||
                         !p->st.published;
    p->st.generation = sum->generation;
    p->st.slices = layout->n_slices;
    p->st.devices = layout->published;
    p->st.tainted = layout->tainted;
    p->st.counted = layout->counted;
    p->st.removed = layout->removed;
    p->st.rejected = json_array_size(layout->rejected);
    p->st.removing_unhealthy = remove;
    pthread_mutex_unlock(&p->lock);
    if (wrote && changed_shape)
        LOG_I("slice publisher: pool %s generation %lld: %zu devices in %zu slices "
              "(%zu tainted, %zu left out as unhealthy, %zu rejected)",
              p->node, (long long)sum->generation, layout->published, layout->n_slices,
              layout->tainted, layout->removed, json_array_size(layout->rejected));
    else if (wrote)
        LOG_V(2,
              "slice publisher: pool %s generation %lld: %zu updated, %zu created, "
              "%zu deleted",
              p->node, (long long)sum->generation, sum->updates, sum->creates, sum->deletes);
}

/* The LIST of the pool's slices and the run against it (slice_sync_run),
 * one slice of the layout at a time: 0 when synced, 1 to re-read (a
 * conflict), -1 with err. */
static int list_and_run(struct slice_publisher *p, const struct sync_input *in,
                        const struct slice_build_input *bin, const struct slice_layout *layout,
                        bool ignore_taints, struct slice_sync_summary *sum, struct error *err)
{
    json_t *items = NULL;
    pthread_mutex_lock(&p->list_lock);
    if (list_slices(p, p->list_path, &items, NULL, 0, err) < 0) {
        pthread_mutex_unlock(&p->list_lock);
        return -1;
    }
    struct slice_sync_input sin = {
        .driver = p->driver,
        .node = p->node,
        .node_uid = in->node_uid,
        .existing = items,
        .ignore_taints = ignore_taints,
        .equivalents = p->equivalents,
        /* Until this process has synced once: afterwards what the server
         * stored for what it sent is remembered (equivalents). */
        .would_store = p->synced_once ? NULL : dry_run_update,
        .would_store_ctx = p,
    };
    struct sync_call call = {p, bin, layout, ignore_taints};
    int rc = slice_sync_run(&sin, layout->n_slices, build_slice, write_slice, &call, sum, err);
    json_decref(items); /* the biggest thing a sync holds: freed first */
    pthread_mutex_unlock(&p->list_lock);
    return rc;
}

/* Takes the gate's slot for the rest of the sync (sync_once gives it
 * back); false when the publisher is stopping. */
static bool hold_gate(struct slice_publisher *p, bool *held)
{
    if (!*held)
        *held = sync_gate_enter(p->gate, &p->halting);
    return *held;
}

static enum round sync_round(struct slice_publisher *p, const struct sync_input *in, int round,
                             bool *held, struct error *err)
{
    struct slice_build_input bin;
    bool remove, ignore_taints;
    build_input(p, in, &bin, &remove, &ignore_taints);
    struct slice_layout layout;
    if (slice_layout_make(&bin, &layout, err) < 0)
        return ROUND_FAILED;
    log_rejected(p, layout.rejected);
    struct slice_fingerprint fp;
    struct error ferr;
    bool have_fp = slice_fingerprint_make(&bin, &layout, ignore_taints, &fp, &ferr) == 0;
    if (!have_fp)
        LOG_W("slice publisher: %s", ferr.msg);
    if (round == 0 && in->may_skip && have_fp && p->have_published &&
        slice_fingerprint_equal(&fp, &p->published)) {
        slice_layout_free(&layout);
        return ROUND_SKIPPED;
    }
    if (!hold_gate(p, held)) {
        slice_layout_free(&layout);
        return ROUND_HALTED;
    }
    p->have_published = false; /* until this sync succeeds */
    if (round == 0) {
        /* The LIST below sees every change so far: the watch events that
         * came before it need no sync of their own. */
        pthread_mutex_lock(&p->lock);
        p->kick_at = -1;
        start_sync_locked(p, monotonic_ms());
        pthread_mutex_unlock(&p->lock);
    }
    struct slice_sync_summary sum;
    int rc = list_and_run(p, in, &bin, &layout, ignore_taints, &sum, err);
    if (rc == 0) {
        p->synced_once = true;
        p->published = fp;
        p->have_published = have_fp;
        note_synced(p, &layout, &sum, remove);
    }
    slice_layout_free(&layout);
    return rc == 0 ? ROUND_DONE : rc < 0 ? ROUND_FAILED : ROUND_AGAIN;
}

static int sync_rounds(struct slice_publisher *p, const struct sync_input *in, bool *held,
                       struct error *err)
{
    for (int round = 0; round <= QUICK_REPLANS; round++) {
        switch (sync_round(p, in, round, held, err)) {
        case ROUND_DONE:
            return 0;
        case ROUND_SKIPPED:
            return SYNC_SKIPPED;
        case ROUND_FAILED:
            return -1;
        case ROUND_HALTED:
            return SYNC_HALTED;
        case ROUND_AGAIN:
            break;
        }
    }
    return error_set(err, "pool %s: still conflicting after %d re-reads", p->node, QUICK_REPLANS);
}

/* One sync, its re-reads included; the gate's slot is taken once it needs
 * the server and held to the end (a re-read does not queue again). */
static int sync_once(struct slice_publisher *p, const struct sync_input *in, struct error *err)
{
    bool held = false;
    int rc = sync_rounds(p, in, &held, err);
    if (held)
        sync_gate_leave(p->gate);
    return rc;
}

/* --- the sync thread --- */

static int fetch_node_uid(struct slice_publisher *p, struct error *err)
{
    char path[KUBE_PATH_MAX];
    if (kube_path_node(path, sizeof(path), p->node) < 0)
        return error_set(err, "node %.64s...: the name is too long for a path", p->node);
    json_t *node = NULL;
    if (kube_request(p->kc, KUBE_GET, path, NULL, NULL, NULL, &node, err) < 0) {
        json_decref(node);
        return -1;
    }
    const char *uid = slice_json_string(node, "metadata", "uid");
    int rc = 0;
    if (uid == NULL || uid[0] == '\0' || strlen(uid) >= sizeof(p->node_uid)) {
        rc = error_set(err, "GET %s: the node has no usable metadata.uid", path);
    } else {
        pthread_mutex_lock(&p->lock);
        bool changed = p->st.have_node_uid && strcmp(p->node_uid, uid) != 0;
        snprintf(p->node_uid, sizeof(p->node_uid), "%s", uid);
        p->st.have_node_uid = true;
        p->uid_checked_at = monotonic_ms();
        pthread_mutex_unlock(&p->lock);
        /* A Node deleted and made again: the old owner reference would get
         * every new slice garbage-collected. */
        if (changed)
            LOG_I("slice publisher: node %s has a new uid %s; owner references follow", p->node,
                  uid);
        else
            LOG_V(2, "slice publisher: node %s has uid %s", p->node, uid);
    }
    json_decref(node);
    return rc;
}

/* fetch_node_uid within a slot of the gate; -1 with err when stopping. */
static int fetch_node_uid_gated(struct slice_publisher *p, struct error *err)
{
    if (!sync_gate_enter(p->gate, &p->halting))
        return error_set(err, "slice publisher: stopping");
    int rc = fetch_node_uid(p, err);
    sync_gate_leave(p->gate);
    return rc;
}

/* The sync thread's own state: failed attempts in a row and when the next
 * may start. */
struct sync_loop {
    int failures;
    long long retry_at;
};

/* Lock held (dropped meanwhile): the node's uid, which owner references
 * need before any slice is written. */
static void read_node_uid_locked(struct slice_publisher *p, struct sync_loop *l)
{
    pthread_mutex_unlock(&p->lock);
    struct error err = {{0}};
    int rc = fetch_node_uid_gated(p, &err);
    pthread_mutex_lock(&p->lock);
    if (rc == 0) {
        l->failures = 0;
        return;
    }
    if (p->stopping)
        return; /* the gate gave up: nothing to retry */
    l->failures++;
    long delay = retry_backoff_ms(l->failures, p->retry_base_ms, p->retry_max_ms);
    LOG_W("slice publisher: reading the node's uid (retry in %ld ms): %s", delay, err.msg);
    snprintf(p->st.last_error, sizeof(p->st.last_error), "%s", err.msg);
    l->retry_at = monotonic_ms() + delay;
}

/* Lock held: waits for what makes a sync due (a change, a watch event's
 * kick, the resync). */
static void wait_for_work_locked(struct slice_publisher *p)
{
    long long deadline = p->have_desired ? p->next_resync : -1;
    if (p->kick_at >= 0 && (deadline < 0 || p->kick_at < deadline))
        deadline = p->kick_at;
    retry_cond_wait_until(&p->cond, &p->lock, deadline);
}

/* Lock held: a kick that only our own writes coming back through the
 * watch made.  The pool is as the last sync left it: true when nothing
 * else is due either. */
static bool only_echoes_kicked_locked(struct slice_publisher *p)
{
    p->kick_at = -1;
    p->st.echoes++;
    if (p->dirty)
        return false;
    pthread_cond_broadcast(&p->cond);
    return true;
}

/* Lock held: what a sync's result says, for the status and the next try. */
static void settle_sync_locked(struct slice_publisher *p, struct sync_loop *l, int rc,
                               long long since, const struct error *err)
{
    long long now = monotonic_ms();
    if (rc == SYNC_SKIPPED) {
        /* What the slices say already: no request, and no latency sample
         * (a flip and its flip back merged into nothing). */
        p->st.skipped++;
        p->st.in_sync = !p->dirty;
    } else if (rc == 0) {
        p->st.syncs++;
        l->failures = 0;
        p->st.published = true;
        p->st.in_sync = !p->dirty;
        p->st.last_error[0] = '\0';
        p->next_resync = now + p->resync_ms;
        if (since >= 0) {
            p->st.last_update_latency_ms = (long)(now - since);
            if (p->on_published != NULL)
                p->on_published(p->on_published_ctx, p->st.last_update_latency_ms);
        }
    } else {
        p->st.syncs++;
        l->failures++;
        p->st.failures++;
        p->dirty = true; /* try again after the backoff */
        if (since >= 0 && (p->pending_since < 0 || since < p->pending_since))
            p->pending_since = since;
        long delay = retry_backoff_ms(l->failures, p->retry_base_ms, p->retry_max_ms);
        LOG_W("slice publisher: syncing pool %s failed (attempt %d, retry in %ld ms): %s", p->node,
              l->failures, delay, err->msg);
        snprintf(p->st.last_error, sizeof(p->st.last_error), "%s", err->msg);
        l->retry_at = now + delay;
    }
    pthread_cond_broadcast(&p->cond);
}

/* Lock held (dropped meanwhile): one sync of the newest snapshot. */
static void sync_locked(struct slice_publisher *p, struct sync_loop *l, long long now,
                        bool may_skip)
{
    /* A reference, not a copy: the snapshot never changes. */
    struct sync_input in = {.snap = device_snapshot_get(p->snap), .may_skip = may_skip};
    snprintf(in.node_uid, sizeof(in.node_uid), "%s", p->node_uid);
    p->dirty = false;
    p->last_sync_at = now;
    long long since = p->pending_since;
    p->pending_since = -1;
    pthread_mutex_unlock(&p->lock);
    struct error err = {{0}};
    int rc = sync_once(p, &in, &err);
    device_snapshot_put(in.snap);
    pthread_mutex_lock(&p->lock);
    if (rc == SYNC_HALTED) {
        p->dirty = true; /* stopping: not a failure, nothing to report */
        return;
    }
    settle_sync_locked(p, l, rc, since, &err);
}

static void *sync_thread(void *arg)
{
    struct slice_publisher *p = arg;
    struct sync_loop l = {0, 0};
    pthread_mutex_lock(&p->lock);
    while (!p->stopping) {
        long long now = monotonic_ms();
        if (now < l.retry_at) {
            retry_cond_wait_until(&p->cond, &p->lock, l.retry_at);
            continue;
        }
        if (!p->st.have_node_uid) {
            read_node_uid_locked(p, &l);
            continue;
        }
        bool kicked = p->kick_at >= 0 && now >= p->kick_at;
        bool resync = now >= p->next_resync;
        if (!(p->have_desired && (p->dirty || kicked || resync))) {
            wait_for_work_locked(p);
            continue;
        }
        if (kicked && !resync && only_echoes_locked(p)) {
            kicked = false;
            if (only_echoes_kicked_locked(p))
                continue;
        }
        /* At most one sync per interval: what comes meanwhile waits for the
         * next one, which takes the newest snapshot (every change in
         * between is merged into it). */
        long long earliest = p->last_sync_at + p->min_sync_interval_ms;
        if (p->last_sync_at > 0 && now < earliest) {
            retry_cond_wait_until(&p->cond, &p->lock, earliest);
            continue;
        }
        if (now - p->uid_checked_at >= p->resync_ms) {
            pthread_mutex_unlock(&p->lock);
            struct error uerr;
            if (fetch_node_uid_gated(p, &uerr) < 0)
                LOG_V(2, "slice publisher: re-reading the node's uid: %s", uerr.msg);
            pthread_mutex_lock(&p->lock);
            p->uid_checked_at = monotonic_ms(); /* also after a failure: once per period */
            continue;
        }
        sync_locked(p, &l, now, !kicked && !resync);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* --- the watch thread --- */

int slice_publisher_watch_event(struct slice_publisher *p, const char *type, json_t *object)
{
    if (strcmp(type, "ERROR") == 0) {
        LOG_V(2, "slice publisher: watch error event: %s",
              slice_json_string(object, "message", NULL)
                  ? slice_json_string(object, "message", NULL)
                  : "?");
        return 1; /* e.g. 410 Gone: list again */
    }
    if (strcmp(type, "BOOKMARK") == 0)
        return 0;
    const char *name = slice_json_string(object, "metadata", "name");
    LOG_V(4, "slice publisher: watch: %s %s", type, name ? name : "?");
    char key[512];
    bool keyed = echo_key(key, sizeof(key), strcmp(type, "DELETED") == 0, name,
                          slice_json_string(object, "metadata", "resourceVersion")) == 0;
    pthread_mutex_lock(&p->lock);
    if (keyed && json_object_get(p->echoes, key) != NULL) {
        /* Our own write coming back: no news. */
        json_object_del(p->echoes, key);
    } else {
        if (!keyed || json_array_size(p->unexplained) >= UNEXPLAINED_MAX ||
            json_array_append_new(p->unexplained, json_string(key)) < 0)
            p->foreign = true;
        kick_locked(p, WATCH_DEBOUNCE_MS);
    }
    pthread_mutex_unlock(&p->lock);
    return 0;
}

static int on_event(void *ctx, const char *type, json_t *object)
{
    return slice_publisher_watch_event(ctx, type, object);
}

void slice_publisher_watch_listed(struct slice_publisher *p)
{
    kick(p, 0);
}

/* Sleeps up to ms, returning early when stop is requested. */
static void watch_pause(struct slice_publisher *p, long ms)
{
    pthread_mutex_lock(&p->lock);
    retry_cond_pause_until(&p->cond, &p->lock, &p->stopping, monotonic_ms() + ms);
    pthread_mutex_unlock(&p->lock);
}

static void *watch_thread(void *arg)
{
    struct slice_publisher *p = arg;
    int failures = 0;
    while (!kube_cancel_fired(p->watch_cancel)) {
        char rv[128];
        json_t *items = NULL;
        struct error err = {{0}};
        pthread_mutex_lock(&p->list_lock);
        int listed = list_slices(p, p->watch_path, &items, rv, sizeof(rv), &err);
        json_decref(items);
        pthread_mutex_unlock(&p->list_lock);
        if (listed < 0) {
            failures++;
            long delay = retry_backoff_ms(failures, p->retry_base_ms, p->retry_max_ms);
            LOG_V(2, "slice publisher: listing for the watch (retry in %ld ms): %s", delay,
                  err.msg);
            watch_pause(p, delay);
            continue;
        }
        /* Anything may have happened while no watch was open, including
         * before the first one (the sync may have run while listing failed). */
        kick(p, 0);
        int rc = kube_watch(p->kc, p->list_path, rv, on_event, p, p->watch_cancel, &err);
        if (rc < 0) {
            failures++;
            long delay = retry_backoff_ms(failures, p->retry_base_ms, p->retry_max_ms);
            LOG_V(2, "slice publisher: watch ended (retry in %ld ms): %s", delay, err.msg);
            watch_pause(p, delay);
        } else {
            failures = 0;
        }
    }
    return NULL;
}

/* --- lifecycle --- */

static int check_names(const struct slice_publisher_options *opts, struct error *err)
{
    if (!dns_subdomain_valid(opts->driver_name) || strlen(opts->driver_name) > 63)
        return error_set(err, "driver name \"%s\" is not a DNS subdomain of at most 63 characters",
                         opts->driver_name ? opts->driver_name : "");
    if (!dns_subdomain_valid(opts->node_name))
        return error_set(err, "node name \"%s\" is not a DNS subdomain",
                         opts->node_name ? opts->node_name : "");
    return 0;
}

/* The LIST path of this node's and driver's slices, and the watch path. */
static void make_paths(struct slice_publisher *p)
{
    char selector[400];
    snprintf(selector, sizeof(selector), "spec.nodeName=%s,spec.driver=%s", p->node, p->driver);
    cleanup_free char *escaped = kube_query_escape(selector);
    if (escaped != NULL &&
        asprintf(&p->list_path, "%s?fieldSelector=%s", KUBE_PATH_RESOURCESLICES, escaped) < 0)
        p->list_path = NULL;
    if (p->list_path != NULL && asprintf(&p->watch_path, "%s&limit=1", p->list_path) < 0)
        p->watch_path = NULL;
}

/* Frees a publisher whose locks and threads were never made. */
static void free_unstarted(struct slice_publisher *p)
{
    json_decref(p->equivalents);
    json_decref(p->echoes);
    json_decref(p->unexplained);
    free(p->watch_path);
    free(p->list_path);
    free(p->driver);
    free(p->node);
    kube_cancel_free(p->watch_cancel);
    free(p);
}

static struct slice_publisher *new_publisher(struct kube_client *kc,
                                             const struct slice_publisher_options *opts)
{
    struct slice_publisher *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    p->kc = kc;
    p->watch_cancel = kube_cancel_new();
    p->driver = strdup(opts->driver_name);
    p->personality = opts->personality;
    p->xids = opts->xids;
    p->node = strdup(opts->node_name);
    p->effect = opts->taint_effect;
    p->policy = opts->policy;
    p->resync_ms = opts->resync_ms > 0 ? opts->resync_ms : 30000;
    p->retry_base_ms = opts->retry_base_ms > 0 ? opts->retry_base_ms : 200;
    p->retry_max_ms = opts->retry_max_ms > 0 ? opts->retry_max_ms : 10000;
    p->min_sync_interval_ms =
        opts->min_sync_interval_ms > 0 ? opts->min_sync_interval_ms : MIN_SYNC_INTERVAL_MS;
    p->on_published = opts->on_published;
    p->on_published_ctx = opts->on_published_ctx;
    p->shared_watch = opts->shared_watch;
    p->gate = opts->gate;
    atomic_init(&p->halting, false);
    p->kick_at = -1;
    p->pending_since = -1;
    p->equivalents = json_array();
    p->echoes = json_object();
    p->unexplained = json_array();
    if (p->driver && p->node)
        make_paths(p);
    if (!p->driver || !p->node || !p->equivalents || !p->echoes || !p->unexplained ||
        !p->list_path || !p->watch_path) {
        free_unstarted(p);
        return NULL;
    }
    return p;
}

struct slice_publisher *slice_publisher_start(struct kube_client *kc,
                                              const struct slice_publisher_options *opts,
                                              struct error *err)
{
    if (check_names(opts, err) < 0)
        return NULL;
    struct slice_publisher *p = new_publisher(kc, opts);
    if (p == NULL) {
        error_set(err, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_mutex_init(&p->list_lock, NULL);
    if (retry_cond_init(&p->cond) < 0) {
        pthread_mutex_destroy(&p->list_lock);
        pthread_mutex_destroy(&p->lock);
        free_unstarted(p);
        error_set(err, "slice publisher: cannot create a condition variable");
        return NULL;
    }
    bool sync = pthread_create(&p->sync_thread, NULL, sync_thread, p) == 0;
    p->sync_started = sync;
    bool watch =
        sync && (p->shared_watch || pthread_create(&p->watch_thread, NULL, watch_thread, p) == 0);
    p->watch_started = watch && !p->shared_watch;
    if (!watch) {
        error_set(err, "slice publisher: cannot start the %s thread", sync ? "watch" : "sync");
        slice_publisher_stop(p, false, NULL);
        return NULL;
    }
    LOG_V(2, "slice publisher: started for driver %s, node %s (unhealthy devices: %s, effect %s)",
          p->driver, p->node, unhealthy_policy_name(p->policy), taint_effect_name(p->effect));
    return p;
}

int slice_publisher_wait_published(struct slice_publisher *p, int timeout_ms)
{
    long long deadline = monotonic_ms() + timeout_ms;
    pthread_mutex_lock(&p->lock);
    while (!p->st.published && monotonic_ms() < deadline)
        retry_cond_wait_until(&p->cond, &p->lock, deadline);
    int rc = p->st.published ? 0 : -1;
    pthread_mutex_unlock(&p->lock);
    return rc;
}

int slice_publisher_wait_in_sync(struct slice_publisher *p, int timeout_ms)
{
    long long deadline = monotonic_ms() + timeout_ms;
    pthread_mutex_lock(&p->lock);
    while (!(p->st.in_sync && !p->dirty && p->kick_at < 0) && monotonic_ms() < deadline)
        retry_cond_wait_until(&p->cond, &p->lock, deadline);
    int rc = p->st.in_sync && !p->dirty && p->kick_at < 0 ? 0 : -1;
    pthread_mutex_unlock(&p->lock);
    return rc;
}

void slice_publisher_get_status(struct slice_publisher *p, struct slice_publisher_status *st)
{
    pthread_mutex_lock(&p->lock);
    *st = p->st;
    pthread_mutex_unlock(&p->lock);
}

/* Deletes every slice of this driver and node, for up to CLEANUP_BUDGET_MS
 * or until the client's deadline (kube_client_set_deadline), if sooner. */
static int delete_all(struct slice_publisher *p, struct error *err)
{
    long long deadline = monotonic_ms() + CLEANUP_BUDGET_MS;
    for (int attempt = 1;; attempt++) {
        json_t *items = NULL;
        int failed = 0;
        size_t deleted = 0;
        if (list_slices(p, p->list_path, &items, NULL, 0, err) < 0) {
            failed = 1;
        } else {
            size_t i;
            const json_t *s;
            json_array_foreach(items, i, s)
            {
                const char *drv = slice_json_string(s, "spec", "driver"),
                           *node = slice_json_string(s, "spec", "nodeName");
                const char *name = slice_json_string(s, "metadata", "name");
                if (!drv || !node || !name || strcmp(drv, p->driver) != 0 ||
                    strcmp(node, p->node) != 0)
                    continue;
                char path[KUBE_PATH_MAX];
                long status = 0;
                if (kube_path_resourceslice(path, sizeof(path), name) < 0)
                    failed++;
                else if (kube_request(p->kc, KUBE_DELETE, path, NULL, NULL, &status, NULL, err) <
                             0 &&
                         status != 404)
                    failed++;
                else
                    deleted++;
            }
            json_decref(items);
        }
        if (!failed) {
            LOG_I("slice publisher: deleted %zu ResourceSlices of driver %s on node %s", deleted,
                  p->driver, p->node);
            return 0;
        }
        long delay = retry_backoff_ms(attempt, p->retry_base_ms, p->retry_max_ms);
        /* The client's shutdown deadline (the plugin's exit budget) ends it too. */
        if (monotonic_ms() + delay > deadline || kube_client_expired(p->kc))
            return error_prefix(err, "deleting the ResourceSlices of node %s", p->node);
        struct timespec ts = {delay / 1000, (delay % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

void slice_publisher_halt(struct slice_publisher *p)
{
    if (p == NULL)
        return;
    /* The cancel first: the watch loop ends on it, and while stopping is
     * set without it a listing that fails at once would loop. */
    kube_cancel_fire(p->watch_cancel);
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    /* After stopping: a sync thread that gives up at the gate finds it set. */
    atomic_store(&p->halting, true);
    sync_gate_wake(p->gate, &p->halting);
    if (p->watch_started)
        pthread_join(p->watch_thread, NULL);
    if (p->sync_started)
        pthread_join(p->sync_thread, NULL);
    p->watch_started = p->sync_started = false;
}

int slice_publisher_stop(struct slice_publisher *p, bool delete_slices, struct error *err)
{
    if (p == NULL)
        return 0;
    slice_publisher_halt(p);
    int rc = 0;
    if (delete_slices)
        rc = delete_all(p, err);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->list_lock);
    pthread_mutex_destroy(&p->lock);
    device_snapshot_put(p->snap);
    free_unstarted(p); /* what is left is what an unstarted one holds */
    return rc;
}
