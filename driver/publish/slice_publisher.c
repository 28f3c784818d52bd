/* The slice publisher threads: see slice_publisher.h. */
#include "slice_publisher.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api_names.h"
#include "driver/health/retry.h"
#include "log.h"
#include "slice_builder.h"
#include "slice_sync.h"

#define SLICES_PATH "/apis/resource.k8s.io/v1/resourceslices"
/* Re-plans at once after a conflict this many times, then backs off. */
#define QUICK_REPLANS 5
/* A watch event is acted on after this delay, so a burst (a wiped pool, our
 * own writes) costs one sync. */
#define WATCH_DEBOUNCE_MS 100
/* How long stop() keeps trying to delete the slices. */
#define CLEANUP_BUDGET_MS 10000
/* Kept "sent vs stored" spec pairs (see slice_sync_input.equivalents). */
#define EQUIVALENTS_MAX 16

struct slice_publisher {
    struct kube_client *kc;
    char *driver, *node;
    char *list_path; /* SLICES_PATH?fieldSelector=... */
    enum taint_effect effect;
    enum unhealthy_policy policy;
    int resync_ms, retry_base_ms, retry_max_ms;

    pthread_t sync_thread, watch_thread;
    bool sync_started, watch_started;
    volatile bool watch_stop; /* read by kube_watch */

    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t cond;
    bool stopping;
    struct fakehw_device *devs; /* desired input */
    size_t n_devs;
    bool tree_up;
    bool have_desired;
    bool dirty;               /* a sync is wanted */
    long long kick_at;        /* a watch event asks for a sync at this time; -1: none */
    long long next_resync;    /* periodic sync */
    long long pending_since;  /* first update not yet published; -1: none */
    long long uid_checked_at; /* when the node's uid was last read */
    char node_uid[128];
    bool taints_dropped;
    json_t *equivalents;               /* sync thread only */
    char last_rejected[ERROR_MSG_MAX]; /* sync thread only: what was last logged */
    struct slice_publisher_status st;
};

/* --- input side --- */

void slice_publisher_update(struct slice_publisher *p, const struct fakehw_device *devs, size_t n,
                            bool tree_up)
{
    if (p == NULL)
        return;
    struct fakehw_device *copy = NULL;
    if (n > 0) {
        copy = malloc(n * sizeof(*copy));
        if (copy == NULL) {
            LOG_E("slice publisher: out of memory copying %zu devices", n);
            return;
        }
        memcpy(copy, devs, n * sizeof(*copy));
    }
    pthread_mutex_lock(&p->lock);
    free(p->devs);
    p->devs = copy;
    p->n_devs = n;
    p->tree_up = tree_up;
    p->have_desired = true;
    p->dirty = true;
    if (p->pending_since < 0)
        p->pending_since = retry_now_ms();
    p->st.in_sync = false;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

static void kick(struct slice_publisher *p, long long delay_ms)
{
    pthread_mutex_lock(&p->lock);
    long long at = retry_now_ms() + delay_ms;
    if (p->kick_at < 0 || at < p->kick_at)
        p->kick_at = at;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

/* --- one sync --- */

static const char *str_at(const json_t *obj, const char *a, const char *b)
{
    const json_t *v = json_object_get(obj, a);
    if (b != NULL)
        v = json_object_get(v, b);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int list_slices(struct slice_publisher *p, json_t **items, char *rv, size_t rv_size,
                       struct error *err)
{
    json_t *answer = NULL;
    if (kube_request(p->kc, "GET", p->list_path, NULL, NULL, NULL, &answer, err) < 0) {
        json_decref(answer); /* the Status of a failed answer */
        return -1;
    }
    json_t *list = json_object_get(answer, "items");
    if (list != NULL && !json_is_array(list)) {
        json_decref(answer);
        return error_set(err, "GET %s: items is not a list", p->list_path);
    }
    if (rv != NULL) {
        const char *v = str_at(answer, "metadata", "resourceVersion");
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

/* Checks what the server stored against what was sent.  Returns true when
 * the policy must change (taints dropped under policy auto). */
static bool check_stored(struct slice_publisher *p, const json_t *sent, const json_t *stored,
                         bool ignore_taints)
{
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
              str_at(stored, "metadata", "name") ? str_at(stored, "metadata", "name") : "?");
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
            LOG_E("slice publisher: device %s is not published: %s", str_at(r, "device", NULL),
                  str_at(r, "error", NULL));
        snprintf(p->last_rejected, sizeof(p->last_rejected), "%s", text);
    }
    free(text);
}

enum step { STEP_OK, STEP_REPLAN, STEP_FAIL };

/* One API call of the plan. */
static enum step apply_one(struct slice_publisher *p, const char *method, const json_t *obj,
                           bool ignore_taints, struct error *err)
{
    char path[512];
    const char *name = str_at(obj, "metadata", "name");
    long status = 0;
    json_t *answer = NULL, *body = NULL;
    if (strcmp(method, "POST") == 0) {
        snprintf(path, sizeof(path), "%s", SLICES_PATH);
        body = json_incref((json_t *)obj);
    } else if (strcmp(method, "PUT") == 0) {
        snprintf(path, sizeof(path), "%s/%s", SLICES_PATH, name ? name : "");
        body = json_incref((json_t *)obj);
    } else {
        snprintf(path, sizeof(path), "%s/%s", SLICES_PATH, name ? name : "");
        const char *uid = str_at(obj, "metadata", "uid");
        const char *rv = str_at(obj, "metadata", "resourceVersion");
        body = json_pack("{s:s, s:s, s:{s:s?, s:s?}}", "apiVersion", "v1", "kind", "DeleteOptions",
                         "preconditions", "uid", uid, "resourceVersion", rv);
    }
    int rc = kube_request(p->kc, method, path, body, NULL, &status, &answer, err);
    json_decref(body);
    enum step out = STEP_OK;
    if (rc < 0) {
        if (status == 409) {
            pthread_mutex_lock(&p->lock);
            p->st.conflicts++;
            pthread_mutex_unlock(&p->lock);
            LOG_V(2, "slice publisher: %s %s: conflict, re-reading", method, path);
            out = STEP_REPLAN;
        } else if (status == 404 && strcmp(method, "DELETE") == 0) {
            out = STEP_OK; /* already gone */
        } else if (status == 404) {
            out = STEP_REPLAN; /* deleted under our feet */
        } else {
            out = STEP_FAIL;
        }
        json_decref(answer);
        return out;
    }
    pthread_mutex_lock(&p->lock);
    if (method[0] == 'P' && method[1] == 'O')
        p->st.creates++;
    else if (method[0] == 'P')
        p->st.updates++;
    else
        p->st.deletes++;
    pthread_mutex_unlock(&p->lock);
    LOG_V(3, "slice publisher: %s %s: %ld", method, name ? name : path, status);
    if (method[0] == 'P' && json_is_object(answer) && check_stored(p, obj, answer, ignore_taints))
        out = STEP_REPLAN;
    json_decref(answer);
    return out;
}

static enum step apply_list(struct slice_publisher *p, const char *method, const json_t *objs,
                            bool ignore_taints, struct error *err)
{
    size_t i;
    const json_t *o;
    json_array_foreach(objs, i, o)
    {
        enum step s = apply_one(p, method, o, ignore_taints, err);
        if (s != STEP_OK)
            return s;
    }
    return STEP_OK;
}

struct sync_input {
    struct fakehw_device *devs;
    size_t n_devs;
    bool tree_up;
    char node_uid[128];
};

static int sync_once(struct slice_publisher *p, const struct sync_input *in, struct error *err)
{
    for (int round = 0; round <= QUICK_REPLANS; round++) {
        pthread_mutex_lock(&p->lock);
        bool dropped = p->taints_dropped;
        pthread_mutex_unlock(&p->lock);
        bool remove =
            p->policy == UNHEALTHY_POLICY_REMOVE || (p->policy == UNHEALTHY_POLICY_AUTO && dropped);
        bool ignore_taints = p->policy == UNHEALTHY_POLICY_TAINT && dropped;

        struct slice_build_input bin = {
            .driver = p->driver,
            .node = p->node,
            .node_uid = in->node_uid,
            .devs = in->devs,
            .n_devs = in->n_devs,
            .tree_up = in->tree_up,
            .effect = p->effect,
            .remove_unhealthy = remove,
        };
        struct slice_build_result built;
        if (slice_build(&bin, &built, err) < 0)
            return -1;
        log_rejected(p, built.rejected);

        json_t *items = NULL;
        if (list_slices(p, &items, NULL, 0, err) < 0) {
            slice_build_result_free(&built);
            return -1;
        }
        struct slice_sync_input sin = {
            .driver = p->driver,
            .node = p->node,
            .node_uid = in->node_uid,
            .existing = items,
            .desired = built.slices,
            .ignore_taints = ignore_taints,
            .equivalents = p->equivalents,
        };
        struct slice_sync_plan plan;
        if (slice_sync_plan(&sin, &plan, err) < 0) {
            json_decref(items);
            slice_build_result_free(&built);
            return -1;
        }
        bool wrote = !slice_sync_plan_empty(&plan);
        enum step s = apply_list(p, "PUT", plan.updates, ignore_taints, err);
        if (s == STEP_OK)
            s = apply_list(p, "POST", plan.creates, ignore_taints, err);
        if (s == STEP_OK)
            s = apply_list(p, "DELETE", plan.deletes, ignore_taints, err);
        if (s == STEP_OK) {
            pthread_mutex_lock(&p->lock);
            bool changed_shape = p->st.generation != plan.generation ||
                                 p->st.devices != built.published ||
                                 p->st.tainted != built.tainted || !p->st.published;
            p->st.generation = plan.generation;
            p->st.slices = json_array_size(built.slices);
            p->st.devices = built.published;
            p->st.tainted = built.tainted;
            p->st.removed = built.removed;
            p->st.rejected = json_array_size(built.rejected);
            p->st.removing_unhealthy = remove;
            pthread_mutex_unlock(&p->lock);
            if (wrote && changed_shape)
                LOG_I("slice publisher: pool %s generation %lld: %zu devices in %zu slices "
                      "(%zu tainted, %zu left out as unhealthy, %zu rejected)",
                      p->node, (long long)plan.generation, built.published,
                      json_array_size(built.slices), built.tainted, built.removed,
                      json_array_size(built.rejected));
            else if (wrote)
                LOG_V(2,
                      "slice publisher: pool %s generation %lld: %zu updated, %zu created, "
                      "%zu deleted",
                      p->node, (long long)plan.generation, json_array_size(plan.updates),
                      json_array_size(plan.creates), json_array_size(plan.deletes));
        }
        slice_sync_plan_free(&plan);
        json_decref(items);
        slice_build_result_free(&built);
        if (s == STEP_OK)
            return 0;
        if (s == STEP_FAIL)
            return -1;
    }
    return error_set(err, "pool %s: still conflicting after %d re-reads", p->node, QUICK_REPLANS);
}

/* --- the sync thread --- */

static int fetch_node_uid(struct slice_publisher *p, struct error *err)
{
    char path[320];
    snprintf(path, sizeof(path), "/api/v1/nodes/%s", p->node);
    json_t *node = NULL;
    if (kube_request(p->kc, "GET", path, NULL, NULL, NULL, &node, err) < 0) {
        json_decref(node);
        return -1;
    }
    const char *uid = str_at(node, "metadata", "uid");
    int rc = 0;
    if (uid == NULL || uid[0] == '\0' || strlen(uid) >= sizeof(p->node_uid)) {
        rc = error_set(err, "GET %s: the node has no usable metadata.uid", path);
    } else {
        pthread_mutex_lock(&p->lock);
        bool changed = p->st.have_node_uid && strcmp(p->node_uid, uid) != 0;
        snprintf(p->node_uid, sizeof(p->node_uid), "%s", uid);
        p->st.have_node_uid = true;
        p->uid_checked_at = retry_now_ms();
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

static void *sync_thread(void *arg)
{
    struct slice_publisher *p = arg;
    int failures = 0;
    long long retry_at = 0;
    pthread_mutex_lock(&p->lock);
    while (!p->stopping) {
        long long now = retry_now_ms();
        if (now < retry_at) {
            retry_cond_wait_until(&p->cond, &p->lock, retry_at);
            continue;
        }
        if (!p->st.have_node_uid) {
            pthread_mutex_unlock(&p->lock);
            struct error err = {{0}};
            int rc = fetch_node_uid(p, &err);
            pthread_mutex_lock(&p->lock);
            if (rc < 0) {
                failures++;
                long delay = retry_backoff_ms(failures, p->retry_base_ms, p->retry_max_ms);
                LOG_W("slice publisher: reading the node's uid (retry in %ld ms): %s", delay,
                      err.msg);
                snprintf(p->st.last_error, sizeof(p->st.last_error), "%s", err.msg);
                retry_at = retry_now_ms() + delay;
            } else {
                failures = 0;
            }
            continue;
        }
        bool kicked = p->kick_at >= 0 && now >= p->kick_at;
        bool due = p->have_desired && (p->dirty || kicked || now >= p->next_resync);
        if (!due) {
            long long deadline = p->have_desired ? p->next_resync : -1;
            if (p->kick_at >= 0 && (deadline < 0 || p->kick_at < deadline))
                deadline = p->kick_at;
            retry_cond_wait_until(&p->cond, &p->lock, deadline);
            continue;
        }
        if (now - p->uid_checked_at >= p->resync_ms) {
            pthread_mutex_unlock(&p->lock);
            struct error uerr;
            if (fetch_node_uid(p, &uerr) < 0)
                LOG_V(2, "slice publisher: re-reading the node's uid: %s", uerr.msg);
            pthread_mutex_lock(&p->lock);
            p->uid_checked_at = retry_now_ms(); /* also after a failure: once per period */
            continue;
        }
        struct sync_input in = {.n_devs = p->n_devs, .tree_up = p->tree_up};
        if (p->n_devs > 0) {
            in.devs = malloc(p->n_devs * sizeof(*in.devs));
            if (in.devs == NULL) {
                LOG_E("slice publisher: out of memory");
                retry_at = now + p->retry_max_ms;
                continue;
            }
            memcpy(in.devs, p->devs, p->n_devs * sizeof(*in.devs));
        }
        snprintf(in.node_uid, sizeof(in.node_uid), "%s", p->node_uid);
        p->dirty = false;
        p->kick_at = -1;
        p->st.syncs++;
        long long since = p->pending_since;
        p->pending_since = -1;
        pthread_mutex_unlock(&p->lock);

        struct error err = {{0}};
        int rc = sync_once(p, &in, &err);
        free(in.devs);

        pthread_mutex_lock(&p->lock);
        now = retry_now_ms();
        if (rc == 0) {
            failures = 0;
            p->st.published = true;
            p->st.in_sync = !p->dirty;
            p->st.last_error[0] = '\0';
            p->next_resync = now + p->resync_ms;
            if (since >= 0)
                p->st.last_update_latency_ms = (long)(now - since);
        } else {
            failures++;
            p->st.failures++;
            p->dirty = true; /* try again after the backoff */
            if (since >= 0 && (p->pending_since < 0 || since < p->pending_since))
                p->pending_since = since;
            long delay = retry_backoff_ms(failures, p->retry_base_ms, p->retry_max_ms);
            LOG_W("slice publisher: syncing pool %s failed (attempt %d, retry in %ld ms): %s",
                  p->node, failures, delay, err.msg);
            snprintf(p->st.last_error, sizeof(p->st.last_error), "%s", err.msg);
            retry_at = now + delay;
        }
        pthread_cond_broadcast(&p->cond);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* --- the watch thread --- */

static int on_event(void *ctx, const char *type, json_t *object)
{
    struct slice_publisher *p = ctx;
    if (strcmp(type, "ERROR") == 0) {
        LOG_V(2, "slice publisher: watch error event: %s",
              str_at(object, "message", NULL) ? str_at(object, "message", NULL) : "?");
        return 1; /* e.g. 410 Gone: list again */
    }
    if (strcmp(type, "BOOKMARK") == 0)
        return 0;
    LOG_V(4, "slice publisher: watch: %s %s", type,
          str_at(object, "metadata", "name") ? str_at(object, "metadata", "name") : "?");
    kick(p, WATCH_DEBOUNCE_MS);
    return 0;
}

/* Sleeps up to ms, returning early when stop is requested. */
static void watch_pause(struct slice_publisher *p, long ms)
{
    long long until = retry_now_ms() + ms;
    pthread_mutex_lock(&p->lock);
    while (!p->stopping && retry_now_ms() < until)
        retry_cond_wait_until(&p->cond, &p->lock, until);
    pthread_mutex_unlock(&p->lock);
}

static void *watch_thread(void *arg)
{
    struct slice_publisher *p = arg;
    int failures = 0;
    while (!__atomic_load_n(&p->watch_stop, __ATOMIC_ACQUIRE)) {
        char rv[128];
        json_t *items = NULL;
        struct error err = {{0}};
        if (list_slices(p, &items, rv, sizeof(rv), &err) < 0) {
            failures++;
            long delay = retry_backoff_ms(failures, p->retry_base_ms, p->retry_max_ms);
            LOG_V(2, "slice publisher: listing for the watch (retry in %ld ms): %s", delay,
                  err.msg);
            watch_pause(p, delay);
            continue;
        }
        json_decref(items);
        /* Anything may have happened while no watch was open, including
         * before the first one (the sync may have run while listing failed). */
        kick(p, 0);
        int rc = kube_watch(p->kc, p->list_path, rv, on_event, p, &p->watch_stop, &err);
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

struct slice_publisher *slice_publisher_start(struct kube_client *kc,
                                              const struct slice_publisher_options *opts,
                                              struct error *err)
{
    if (!api_dns_subdomain_valid(opts->driver_name) || strlen(opts->driver_name) > 63) {
        error_set(err, "driver name \"%s\" is not a DNS subdomain of at most 63 characters",
                  opts->driver_name ? opts->driver_name : "");
        return NULL;
    }
    if (!api_dns_subdomain_valid(opts->node_name)) {
        error_set(err, "node name \"%s\" is not a DNS subdomain",
                  opts->node_name ? opts->node_name : "");
        return NULL;
    }
    struct slice_publisher *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        error_set(err, "out of memory");
        return NULL;
    }
    p->kc = kc;
    p->driver = strdup(opts->driver_name);
    p->node = strdup(opts->node_name);
    p->effect = opts->taint_effect;
    p->policy = opts->policy;
    p->resync_ms = opts->resync_ms > 0 ? opts->resync_ms : 30000;
    p->retry_base_ms = opts->retry_base_ms > 0 ? opts->retry_base_ms : 200;
    p->retry_max_ms = opts->retry_max_ms > 0 ? opts->retry_max_ms : 10000;
    p->kick_at = -1;
    p->pending_since = -1;
    p->equivalents = json_array();
    char selector[400];
    snprintf(selector, sizeof(selector), "spec.nodeName=%s,spec.driver=%s", p->node, p->driver);
    char *escaped = kube_query_escape(selector);
    if (escaped != NULL && asprintf(&p->list_path, "%s?fieldSelector=%s", SLICES_PATH, escaped) < 0)
        p->list_path = NULL;
    free(escaped);
    if (!p->driver || !p->node || !p->equivalents || !p->list_path) {
        error_set(err, "out of memory");
        goto fail;
    }
    pthread_mutex_init(&p->lock, NULL);
    if (retry_cond_init(&p->cond) < 0) {
        pthread_mutex_destroy(&p->lock);
        error_set(err, "slice publisher: cannot create a condition variable");
        goto fail;
    }
    if (pthread_create(&p->sync_thread, NULL, sync_thread, p) != 0) {
        error_set(err, "slice publisher: cannot start the sync thread");
        goto fail_threads;
    }
    p->sync_started = true;
    if (pthread_create(&p->watch_thread, NULL, watch_thread, p) != 0) {
        error_set(err, "slice publisher: cannot start the watch thread");
        goto fail_threads;
    }
    p->watch_started = true;
    LOG_V(2, "slice publisher: started for driver %s, node %s (unhealthy devices: %s, effect %s)",
          p->driver, p->node, unhealthy_policy_name(p->policy), taint_effect_name(p->effect));
    return p;
fail_threads:
    slice_publisher_stop(p, false, NULL);
    return NULL;
fail:
    json_decref(p->equivalents);
    free(p->list_path);
    free(p->driver);
    free(p->node);
    free(p);
    return NULL;
}

int slice_publisher_wait_published(struct slice_publisher *p, int timeout_ms)
{
    long long deadline = retry_now_ms() + timeout_ms;
    pthread_mutex_lock(&p->lock);
    while (!p->st.published && retry_now_ms() < deadline)
        retry_cond_wait_until(&p->cond, &p->lock, deadline);
    int rc = p->st.published ? 0 : -1;
    pthread_mutex_unlock(&p->lock);
    return rc;
}

int slice_publisher_wait_in_sync(struct slice_publisher *p, int timeout_ms)
{
    long long deadline = retry_now_ms() + timeout_ms;
    pthread_mutex_lock(&p->lock);
    while (!(p->st.in_sync && !p->dirty && p->kick_at < 0) && retry_now_ms() < deadline)
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

/* Deletes every slice of this driver and node, for up to CLEANUP_BUDGET_MS. */
static int delete_all(struct slice_publisher *p, struct error *err)
{
    long long deadline = retry_now_ms() + CLEANUP_BUDGET_MS;
    for (int attempt = 1;; attempt++) {
        json_t *items = NULL;
        int failed = 0;
        size_t deleted = 0;
        if (list_slices(p, &items, NULL, 0, err) < 0) {
            failed = 1;
        } else {
            size_t i;
            const json_t *s;
            json_array_foreach(items, i, s)
            {
                const char *drv = str_at(s, "spec", "driver"),
                           *node = str_at(s, "spec", "nodeName");
                const char *name = str_at(s, "metadata", "name");
                if (!drv || !node || !name || strcmp(drv, p->driver) != 0 ||
                    strcmp(node, p->node) != 0)
                    continue;
                char path[512];
                snprintf(path, sizeof(path), "%s/%s", SLICES_PATH, name);
                long status = 0;
                if (kube_request(p->kc, "DELETE", path, NULL, NULL, &status, NULL, err) < 0 &&
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
        if (retry_now_ms() + delay > deadline)
            return error_prefix(err, "deleting the ResourceSlices of node %s", p->node);
        struct timespec ts = {delay / 1000, (delay % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

int slice_publisher_stop(struct slice_publisher *p, bool delete_slices, struct error *err)
{
    if (p == NULL)
        return 0;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    __atomic_store_n(&p->watch_stop, true, __ATOMIC_RELEASE);
    kube_watch_interrupt(&p->watch_stop);
    if (p->watch_started)
        pthread_join(p->watch_thread, NULL);
    if (p->sync_started)
        pthread_join(p->sync_thread, NULL);
    int rc = 0;
    if (delete_slices)
        rc = delete_all(p, err);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    json_decref(p->equivalents);
    free(p->devs);
    free(p->list_path);
    free(p->driver);
    free(p->node);
    free(p);
    return rc;
}
