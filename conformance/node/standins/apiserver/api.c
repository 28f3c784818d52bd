// SPDX-License-Identifier: Apache-2.0
/* Kubernetes API semantics over the store; see api.h. */
#include "api.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cleanup.h"
#include "fieldsel.h"
#include "patch.h"
#include "status.h"
#include "validate.h"
#include "xalloc.h"

struct route {
    const struct resource *res;
    const char *ns;   /* NULL: no namespace in the path */
    const char *name; /* NULL: the collection */
    const char *sub;  /* NULL: no subresource */
    char buf[1024];   /* the segments point in here */
};

/* ---------- small helpers ---------- */

static void reply_json(struct api_reply *rp, int code, json_t *j)
{
    rp->code = code;
    rp->text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (rp->text == NULL) // jansson fails only when out of memory: fatal, as everywhere
        xalloc_die();
}

/* Scope cleanups: field errors, and the store's lock (set once taken). */
#define cleanup_fe __attribute__((cleanup(fe_free)))
static void store_unlockp(struct store **s)
{
    if (*s != NULL)
        store_unlock(*s);
}
#define cleanup_store_unlock __attribute__((cleanup(store_unlockp)))

static void reply_status(struct api_reply *rp, json_t *status)
{
    reply_json(rp, (int)json_integer_value(json_object_get(status, "code")), status);
}

static void reply_bad_request(struct api_reply *rp, const char *msg)
{
    reply_status(rp, status_new(400, "BadRequest", msg, NULL, NULL));
}

static void reply_not_served(struct api_reply *rp)
{
    reply_status(rp, status_new(404, "NotFound", "the server could not find the requested resource",
                                NULL, NULL));
}

static void reply_method_not_allowed(struct api_reply *rp)
{
    reply_status(rp, status_new(405, "MethodNotAllowed",
                                "the server does not allow this method on the requested resource",
                                NULL, NULL));
}

static const char *meta_string(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

/* obj.metadata, created when missing or not an object. */
static json_t *ensure_meta(json_t *obj)
{
    json_t *m = json_object_get(obj, "metadata");
    if (!json_is_object(m)) {
        m = json_object();
        json_object_set_new(obj, "metadata", m);
    }
    return m;
}

static void now_rfc3339(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void random_bytes(unsigned char *b, size_t n)
{
    if (getrandom(b, n, 0) != (ssize_t)n) {
        /* getrandom on Linux only fails before the pool is ready; be unique anyway. */
        static atomic_ulong counter;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned long x =
            (unsigned long)ts.tv_nsec ^
            (atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed) + 1) * 2654435761UL;
        for (size_t i = 0; i < n; i++, x = x * 6364136223846793005UL + 1)
            b[i] = (unsigned char)(x >> 33);
    }
}

static void new_uid(char *buf, size_t size)
{
    unsigned char b[16];
    random_bytes(b, sizeof(b));
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(buf, size, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

/* generateName: the prefix (cut to 58) and 5 characters from the real
 * server's alphabet (no vowels, no confusable digits). */
static void generate_name(const char *prefix, char *buf, size_t size)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    unsigned char r[5];
    random_bytes(r, sizeof(r));
    char suffix[6];
    for (int i = 0; i < 5; i++)
        suffix[i] = alphabet[r[i] % (sizeof(alphabet) - 1)];
    suffix[5] = '\0';
    snprintf(buf, size, "%.58s%s", prefix, suffix);
}

static void set_rv(json_t *obj, uint64_t rv)
{
    char s[32];
    snprintf(s, sizeof(s), "%llu", (unsigned long long)rv);
    json_object_set_new(ensure_meta(obj), "resourceVersion", json_string(s));
}

/* A copy without kind/apiVersion, as items of a list come from the real server. */
static json_t *list_item(json_t *obj)
{
    json_t *c = json_copy(obj);
    json_object_del(c, "kind");
    json_object_del(c, "apiVersion");
    return c;
}

static json_t *new_list(struct api *a, const struct resource *r, json_t *items)
{
    char kind[96], rv[32];
    snprintf(kind, sizeof(kind), "%sList", r->kind);
    snprintf(rv, sizeof(rv), "%llu", (unsigned long long)a->store.rv);
    return json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind", kind, "apiVersion", r->api_version,
                     "metadata", "resourceVersion", rv, "items", items);
}

/* ---------- routing ---------- */

static int parse_route(const char *path, struct route *rt)
{
    memset(rt, 0, sizeof(*rt));
    if (strlen(path) >= sizeof(rt->buf))
        return -1;
    snprintf(rt->buf, sizeof(rt->buf), "%s", path);
    char *seg[10];
    int n = 0;
    for (char *save, *p = strtok_r(rt->buf, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
        if (n == 10)
            return -1;
        seg[n++] = p;
    }
    const char *group, *version;
    int i;
    if (n >= 2 && !strcmp(seg[0], "api")) {
        group = "";
        version = seg[1];
        i = 2;
    } else if (n >= 3 && !strcmp(seg[0], "apis")) {
        group = seg[1];
        version = seg[2];
        i = 3;
    } else {
        return -1;
    }
    int rest = n - i;
    if (rest >= 3 && !strcmp(seg[i], "namespaces")) {
        rt->ns = seg[i + 1];
        i += 2;
        rest -= 2;
    }
    if (rest < 1 || rest > 3)
        return -1;
    rt->res = resource_find(group, version, seg[i]);
    if (rt->res == NULL)
        return -1;
    rt->name = rest >= 2 ? seg[i + 1] : NULL;
    rt->sub = rest == 3 ? seg[i + 2] : NULL;
    if (rt->ns && !rt->res->namespaced)
        return -1;
    /* A namespaced object is only reachable inside its namespace. */
    if (rt->name && rt->res->namespaced && rt->ns == NULL)
        return -1;
    return 0;
}

/* ---------- request bodies ---------- */

/* The media type of the request body: Content-Type without parameters. */
static void media_type(const struct api_request *rq, char *out, size_t size)
{
    snprintf(out, size, "%s", rq->content_type ? rq->content_type : "");
    char *semi = strchr(out, ';');
    if (semi)
        *semi = '\0';
    for (char *e = out + strlen(out); e > out && e[-1] == ' ';)
        *--e = '\0';
}

/* Encodings a real API server reads and this one does not; say so rather
 * than fail to parse the bytes as JSON.  Protobuf bodies arrive here already
 * read as JSON (server.c); other types (none, curl's form default) are read
 * as JSON. */
static bool unsupported_body(const struct api_request *rq, struct api_reply *rp)
{
    char ctype[128];
    media_type(rq, ctype, sizeof(ctype));
    if (strcmp(ctype, "application/cbor") != 0 && strcmp(ctype, "application/yaml") != 0)
        return false;
    char msg[400];
    snprintf(msg, sizeof(msg),
             "apiserver-standin reads JSON and protobuf request bodies, not %s (a real API "
             "server reads it)",
             ctype);
    reply_status(rp, status_new(415, "UnsupportedMediaType", msg, NULL, NULL));
    return true;
}

static json_t *decode_object(const struct api_request *rq, struct api_reply *rp)
{
    if (unsupported_body(rq, rp))
        return NULL;
    json_error_t jerr;
    json_t *obj = rq->body_len ? json_loadb(rq->body, rq->body_len, 0, &jerr) : NULL;
    if (obj == NULL) {
        char msg[300];
        snprintf(msg, sizeof(msg), "the request body is not valid JSON: %s",
                 rq->body_len ? jerr.text : "it is empty");
        reply_bad_request(rp, msg);
        return NULL;
    }
    if (!json_is_object(obj)) {
        reply_bad_request(rp, "the request body must be a JSON object");
        json_decref(obj);
        return NULL;
    }
    return obj;
}

/* apiVersion and kind, when given, must be those of the path. */
static int check_type(const struct resource *r, const json_t *obj, struct api_reply *rp)
{
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    char msg[300];
    if (av && av[0] && strcmp(av, r->api_version)) {
        snprintf(msg, sizeof(msg),
                 "the API version in the data (%s) does not match the expected API version (%s)",
                 av, r->api_version);
        reply_bad_request(rp, msg);
        return -1;
    }
    if (kind && kind[0] && strcmp(kind, r->kind)) {
        snprintf(msg, sizeof(msg),
                 "the kind in the data (%s) does not match the expected kind (%s)", kind, r->kind);
        reply_bad_request(rp, msg);
        return -1;
    }
    return 0;
}

/* Sets kind and apiVersion, first in the object as the real server writes them. */
static void set_type(const struct resource *r, json_t *obj)
{
    json_t *rest = json_copy(obj);
    json_object_clear(obj);
    json_object_set_new(obj, "kind", json_string(r->kind));
    json_object_set_new(obj, "apiVersion", json_string(r->api_version));
    json_object_del(rest, "kind");
    json_object_del(rest, "apiVersion");
    json_object_update(obj, rest);
    json_decref(rest);
}

/* Server-side defaults on a write: DeviceTaint.timeAdded, or no taints at
 * all on a server without the DRADeviceTaints feature. */
static void prepare_write(struct api *a, const struct resource *r, json_t *obj)
{
    if (r != &RES_RESOURCESLICES)
        return;
    /* The type gate depends on DRAPartitionableDevices: off with it. */
    if (a->partitionable == PARTITIONABLE_DROP || a->drop_partition_type)
        slice_drop_partition_type(obj);
    if (a->partitionable == PARTITIONABLE_DROP)
        slice_drop_counters(obj);
    if (a->drop_consumable_capacity)
        slice_drop_shares(obj);
    char now[32];
    now_rfc3339(now, sizeof(now));
    size_t i, j;
    json_t *d, *t;
    json_array_foreach(json_object_get(json_object_get(obj, "spec"), "devices"), i, d)
    {
        json_t *taints = json_object_get(d, "taints");
        if (taints == NULL)
            continue;
        if (a->drop_device_taints) {
            json_object_del(d, "taints");
            continue;
        }
        json_array_foreach(taints, j, t)
        {
            const char *ta = json_string_value(json_object_get(t, "timeAdded"));
            if (json_is_object(t) && (ta == NULL || ta[0] == '\0'))
                json_object_set_new(t, "timeAdded", json_string(now));
        }
    }
}

static void note_target(struct api_reply *rp, const struct resource *r, const char *ns,
                        const char *name)
{
    rp->res = r;
    snprintf(rp->ns, sizeof(rp->ns), "%s", ns ? ns : "");
    snprintf(rp->name, sizeof(rp->name), "%s", name ? name : "");
}

/* ---------- create ---------- */

/* A new object's checks before the store is locked: its type, its
 * namespace (set from the request), no resourceVersion, a name or a
 * generateName.  -1 with rp answered. */
static int check_new(const struct resource *r, const struct route *rt, json_t *obj,
                     struct api_reply *rp)
{
    if (check_type(r, obj, rp) < 0)
        return -1;
    json_t *meta = ensure_meta(obj);
    const char *bns = json_string_value(json_object_get(meta, "namespace"));
    if (r->namespaced) {
        if (bns && bns[0] && strcmp(bns, rt->ns)) {
            reply_bad_request(rp, "the namespace of the provided object does not match the "
                                  "namespace sent on the request");
            return -1;
        }
        json_object_set_new(meta, "namespace", json_string(rt->ns));
    } else {
        json_object_del(meta, "namespace");
    }
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    if (rv && rv[0]) {
        /* The real server fails this in storage, hence a 500. */
        reply_status(rp, status_new(500, "InternalError",
                                    "Internal error occurred: resourceVersion should not be set "
                                    "on objects to be created",
                                    NULL, NULL));
        return -1;
    }
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *gen = json_string_value(json_object_get(meta, "generateName"));
    if ((name == NULL || name[0] == '\0') && (gen == NULL || gen[0] == '\0')) {
        cleanup_fe struct field_errors fe;
        fe_init(&fe);
        fe_add(&fe, "Required", "Required value: name or generateName is required",
               "metadata.name");
        reply_status(rp, status_invalid(r, "", &fe));
        return -1;
    }
    return 0;
}

/* Store locked: the new object's name (made from generateName when it has
 * none) into namebuf, and what the server sets on a create. */
static void name_and_stamp(struct api *a, const struct resource *r, const struct route *rt,
                           json_t *obj, char *namebuf, size_t size)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *gen = json_string_value(json_object_get(meta, "generateName"));
    if (name == NULL || name[0] == '\0') {
        for (int tries = 0; tries < 16; tries++) {
            generate_name(gen, namebuf, size);
            if (store_get(&a->store, r, rt->ns, namebuf) == NULL)
                break;
        }
        json_object_set_new(meta, "name", json_string(namebuf));
    } else {
        snprintf(namebuf, size, "%s", name);
    }
    char uid[40], now[32];
    new_uid(uid, sizeof(uid));
    now_rfc3339(now, sizeof(now));
    json_object_set_new(meta, "uid", json_string(uid));
    json_object_set_new(meta, "creationTimestamp", json_string(now));
    if (r->has_generation)
        json_object_set_new(meta, "generation", json_integer(1));
    json_object_del(meta, "deletionTimestamp");
    json_object_del(meta, "deletionGracePeriodSeconds");
    if (r->has_status)
        json_object_del(obj, "status"); /* status is written through /status only */
    set_type(r, obj);
    prepare_write(a, r, obj);
}

static void do_create(struct api *a, const struct route *rt, json_t *owned, struct api_reply *rp)
{
    const struct resource *r = rt->res;
    json_auto_t *obj = owned; /* stored at the end, else released */
    if (check_new(r, rt, obj, rp) < 0)
        return;
    struct store *s = &a->store;
    cleanup_store_unlock struct store *locked = NULL;
    store_lock(s);
    locked = s;
    char name[300];
    name_and_stamp(a, r, rt, obj, name, sizeof(name));
    note_target(rp, r, rt->ns, name);
    cleanup_fe struct field_errors fe;
    fe_init(&fe);
    validate_name(name, &fe);
    validate_object(r, obj, NULL, &fe);
    if (r == &RES_RESOURCESLICES && a->partitionable == PARTITIONABLE_REFUSE)
        slice_refuse_counters(obj, &fe);
    if (fe.count) {
        reply_status(rp, status_invalid(r, name, &fe));
        return;
    }
    if (store_get(s, r, rt->ns, name)) {
        reply_status(rp, status_already_exists(r, name));
        return;
    }
    set_rv(obj, store_next_rv(s));
    reply_json(rp, 201, json_incref(obj));
    store_put(s, r, steal_pointer(&obj), NULL);
}

int api_create_node(struct api *a, const char *name)
{
    struct route rt = {.res = &RES_NODES};
    struct api_reply rp = {0};
    json_t *obj = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Node", "metadata",
                            "name", name);
    if (obj == NULL)
        return -1;
    do_create(a, &rt, obj, &rp);
    free(rp.text);
    return rp.code == 201 ? 0 : -1;
}

/* ---------- delete ---------- */

/* Deletes old (store locked): at once, or, while finalizers remain, by
 * setting deletionTimestamp.  Returns the object to answer with and sets
 * *code (200 deleted, 202 waiting for finalizers). */
static json_t *delete_locked(struct api *a, const struct resource *r, json_t *old, int *code)
{
    struct store *s = &a->store;
    if (json_array_size(json_object_get(json_object_get(old, "metadata"), "finalizers")) > 0) {
        *code = 202;
        if (meta_string(old, "deletionTimestamp"))
            return json_incref(old);
        json_t *n = json_deep_copy(old);
        char now[32];
        now_rfc3339(now, sizeof(now));
        json_t *meta = ensure_meta(n);
        json_object_set_new(meta, "deletionTimestamp", json_string(now));
        json_object_set_new(meta, "deletionGracePeriodSeconds", json_integer(0));
        set_rv(n, store_next_rv(s));
        store_put(s, r, json_incref(n), old);
        return n;
    }
    *code = 200;
    json_t *ret = json_incref(old);
    json_t *final = json_deep_copy(old);
    set_rv(final, store_next_rv(s));
    store_delete(s, r, final);
    return ret;
}

static void do_delete(struct api *a, const struct route *rt, const struct api_request *rq,
                      struct api_reply *rp)
{
    const struct resource *r = rt->res;
    json_t *opts = NULL;
    note_target(rp, r, rt->ns, rt->name);
    if (rq->body_len > 0 && (opts = decode_object(rq, rp)) == NULL)
        return;
    json_t *pre = json_object_get(opts, "preconditions");
    const char *puid = json_string_value(json_object_get(pre, "uid"));
    const char *prv = json_string_value(json_object_get(pre, "resourceVersion"));
    struct store *s = &a->store;
    store_lock(s);
    json_t *old = store_get(s, r, rt->ns, rt->name);
    char why[600];
    if (old == NULL) {
        reply_status(rp, status_not_found(r, rt->name));
    } else if (puid && strcmp(puid, meta_string(old, "uid"))) {
        snprintf(why, sizeof(why),
                 "Precondition failed: UID in precondition: %s, UID in object meta: %s", puid,
                 meta_string(old, "uid"));
        reply_status(rp, status_conflict(r, rt->name, why));
    } else if (prv && strcmp(prv, meta_string(old, "resourceVersion"))) {
        snprintf(why, sizeof(why),
                 "Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in "
                 "object meta: %s",
                 prv, meta_string(old, "resourceVersion"));
        reply_status(rp, status_conflict(r, rt->name, why));
    } else {
        int code;
        json_t *ret = delete_locked(a, r, old, &code);
        reply_json(rp, code, ret);
    }
    store_unlock(s);
    json_decref(opts);
}

/* ---------- list / watch / deletecollection ---------- */

static const char *q(const struct api_request *rq, const char *key)
{
    return rq->query ? rq->query(rq->query_ctx, key) : NULL;
}

/* The selectors of a collection request; -1 with a 400 reply. */
static int parse_selectors(const struct route *rt, const struct api_request *rq, struct fsel *sel,
                           struct api_reply *rp)
{
    const char *ls = q(rq, "labelSelector");
    if (ls && ls[0]) {
        reply_bad_request(rp, "apiserver-standin does not support labelSelector");
        return -1;
    }
    char msg[512];
    if (fsel_parse(q(rq, "fieldSelector"), rt->res, sel, msg, sizeof(msg)) < 0) {
        reply_bad_request(rp, msg);
        return -1;
    }
    return 0;
}

/* What list and deletecollection do with each object that matches. */
typedef json_t *(*matched_fn)(struct api *a, const struct route *rt, json_t *obj);

/* Answers the list of what take makes of each object of the route that
 * matches the request's selectors, under the store's lock. */
static void reply_matching(struct api *a, const struct route *rt, const struct api_request *rq,
                           struct api_reply *rp, matched_fn take)
{
    struct fsel sel;
    if (parse_selectors(rt, rq, &sel, rp) < 0)
        return;
    struct store *s = &a->store;
    store_lock(s);
    json_t *all = store_list(s, rt->res, rt->ns), *items = json_array(), *obj;
    size_t i;
    json_array_foreach(all, i, obj)
    {
        if (fsel_match_object(&sel, obj))
            json_array_append_new(items, take(a, rt, obj));
    }
    json_decref(all);
    reply_json(rp, 200, new_list(a, rt->res, items));
    store_unlock(s);
    fsel_free(&sel);
}

static json_t *listed(struct api *a, const struct route *rt, json_t *obj)
{
    (void)a;
    (void)rt;
    return list_item(obj);
}

static void do_list(struct api *a, const struct route *rt, const struct api_request *rq,
                    struct api_reply *rp)
{
    const char *cont = q(rq, "continue");
    if (cont && cont[0]) {
        reply_status(rp, status_new(400, "BadRequest",
                                    "continue key is not valid: apiserver-standin never hands "
                                    "out continue tokens (it ignores limit)",
                                    NULL, NULL));
        return;
    }
    reply_matching(a, rt, rq, rp, listed);
}

static void do_watch(struct api *a, const struct route *rt, const struct api_request *rq,
                     struct api_reply *rp)
{
    struct fsel sel;
    const char *rvs = q(rq, "resourceVersion");
    const char *ts = q(rq, "timeoutSeconds");
    const char *sie = q(rq, "sendInitialEvents");
    if (sie && strcmp(sie, "true") && strcmp(sie, "false")) {
        reply_bad_request(rp, "sendInitialEvents must be true or false");
        return;
    }
    /* A watch-list request (client-go's WatchListClient): the current objects
     * as ADDED events, then a BOOKMARK that marks their end, then changes. */
    bool watch_list = sie && !strcmp(sie, "true");
    if (watch_list) {
        const char *rvm = q(rq, "resourceVersionMatch"), *bookmarks = q(rq, "allowWatchBookmarks");
        const char *why = !rvm || strcmp(rvm, "NotOlderThan")
                              ? "resourceVersionMatch: Forbidden: sendInitialEvents requires "
                                "setting resourceVersionMatch to NotOlderThan"
                          : !bookmarks || strcmp(bookmarks, "true")
                              ? "allowWatchBookmarks: Forbidden: sendInitialEvents requires "
                                "setting allowWatchBookmarks to true"
                              : NULL;
        if (why) {
            char msg[300];
            snprintf(msg, sizeof(msg), "ListOptions.meta.k8s.io \"\" is invalid: %s", why);
            reply_status(rp, status_new(422, "Invalid", msg, NULL, NULL));
            return;
        }
    }
    uint64_t from = 0;
    bool initial = watch_list || rvs == NULL || rvs[0] == '\0' || !strcmp(rvs, "0");
    if (!initial) {
        char *end;
        errno = 0;
        from = strtoull(rvs, &end, 10);
        if (errno || *end || rvs[0] == '-') {
            char msg[200];
            snprintf(msg, sizeof(msg), "invalid resource version: \"%.64s\"", rvs);
            reply_bad_request(rp, msg);
            return;
        }
    }
    long timeout = a->watch_timeout_s;
    if (ts && ts[0]) {
        char *end;
        timeout = strtol(ts, &end, 10);
        if (*end || timeout <= 0) {
            reply_bad_request(rp, "timeoutSeconds must be a positive integer");
            return;
        }
    }
    if (parse_selectors(rt, rq, &sel, rp) < 0)
        return;
    store_lock(&a->store);
    const struct watch_opts wo = {.initial = initial,
                                  .from_rv = from,
                                  .timeout_s = timeout,
                                  .initial_events_end = watch_list,
                                  .protobuf = rq->protobuf};
    rp->watch = watch_new(&a->store, rt->res, rt->ns, &sel, &wo);
    store_unlock(&a->store);
    fsel_free(&sel);
    rp->code = 200;
}

static json_t *deleted(struct api *a, const struct route *rt, json_t *obj)
{
    int code;
    json_t *gone = delete_locked(a, rt->res, obj, &code);
    json_t *item = list_item(gone);
    json_decref(gone);
    return item;
}

static void do_delete_collection(struct api *a, const struct route *rt,
                                 const struct api_request *rq, struct api_reply *rp)
{
    note_target(rp, rt->res, rt->ns, NULL);
    reply_matching(a, rt, rq, rp, deleted);
}

/* ---------- update / patch ---------- */

static void copy_meta(json_t *to, const json_t *from, const char *key)
{
    json_t *v = json_object_get(json_object_get(from, "metadata"), key);
    if (v)
        json_object_set_new(ensure_meta(to), key, json_deep_copy(v));
    else
        json_object_del(ensure_meta(to), key);
}

/* The candidate's preconditions against the stored object: its name and
 * namespace, resourceVersion and uid when it names them.  -1 with rp
 * answered. */
static int check_preconditions(const struct resource *r, const struct route *rt, const json_t *cand,
                               const json_t *old, struct api_reply *rp)
{
    json_t *cmeta = json_object_get(cand, "metadata");
    const char *cname = json_string_value(json_object_get(cmeta, "name"));
    const char *cns = json_string_value(json_object_get(cmeta, "namespace"));
    const char *crv = json_string_value(json_object_get(cmeta, "resourceVersion"));
    const char *cuid = json_string_value(json_object_get(cmeta, "uid"));
    char msg[700];
    if (cname == NULL || strcmp(cname, rt->name)) {
        snprintf(msg, sizeof(msg),
                 "the name of the object (%s) does not match the name on the URL (%s)",
                 cname ? cname : "", rt->name);
        reply_bad_request(rp, msg);
        return -1;
    }
    if (r->namespaced && cns && cns[0] && strcmp(cns, rt->ns)) {
        reply_bad_request(rp, "the namespace of the provided object does not match the namespace "
                              "sent on the request");
        return -1;
    }
    if (crv && crv[0] && strcmp(crv, meta_string(old, "resourceVersion"))) {
        reply_status(rp, status_modified(r, rt->name));
        return -1;
    }
    if (cuid && cuid[0] && strcmp(cuid, meta_string(old, "uid"))) {
        snprintf(msg, sizeof(msg),
                 "Precondition failed: UID in precondition: %s, UID in object meta: %s", cuid,
                 meta_string(old, "uid"));
        reply_status(rp, status_conflict(r, rt->name, msg));
        return -1;
    }
    return 0;
}

/* The object an update makes of the candidate: through /status its status
 * and nothing else; otherwise the candidate with what the server owns
 * (uid, times, generation, namespace, the status) kept from old, and the
 * generation counted up when the spec changed.  A new reference. */
static json_t *updated_object(struct api *a, const struct resource *r, json_t *cand,
                              const json_t *old, bool status_only)
{
    if (status_only) {
        json_t *nobj = json_deep_copy(old);
        json_t *st = json_object_get(cand, "status");
        if (st && !json_is_null(st))
            json_object_set_new(nobj, "status", json_deep_copy(st));
        else
            json_object_del(nobj, "status");
        return nobj;
    }
    json_t *nobj = json_incref(cand);
    static const char *const server_owned[] = {"uid", "creationTimestamp", "generation",
                                               "deletionTimestamp", "deletionGracePeriodSeconds"};
    for (size_t i = 0; i < sizeof(server_owned) / sizeof(server_owned[0]); i++)
        copy_meta(nobj, old, server_owned[i]);
    copy_meta(nobj, old, "namespace");
    if (r->has_status) {
        json_t *ost = json_object_get(old, "status");
        if (ost)
            json_object_set_new(nobj, "status", json_deep_copy(ost));
        else
            json_object_del(nobj, "status");
    }
    set_type(r, nobj);
    prepare_write(a, r, nobj);
    if (r->has_generation &&
        !json_equal(json_object_get(nobj, "spec"), json_object_get(old, "spec"))) {
        json_int_t g =
            json_integer_value(json_object_get(json_object_get(old, "metadata"), "generation"));
        json_object_set_new(ensure_meta(nobj), "generation", json_integer(g + 1));
    }
    return nobj;
}

/* The shared end of PUT and PATCH (store locked): preconditions, the
 * spec/status split, generation, validation, no-op detection, write. */
static void update_locked(struct api *a, const struct route *rt, json_t *owned, bool status_only,
                          struct api_reply *rp)
{
    const struct resource *r = rt->res;
    struct store *s = &a->store;
    json_auto_t *cand = owned;
    cleanup_fe struct field_errors fe;
    fe_init(&fe);
    note_target(rp, r, rt->ns, rt->name);

    json_t *old = store_get(s, r, rt->ns, rt->name);
    if (old == NULL) {
        reply_status(rp, status_not_found(r, rt->name));
        return;
    }
    if (check_type(r, cand, rp) < 0)
        return;
    ensure_meta(cand);
    if (check_preconditions(r, rt, cand, old, rp) < 0)
        return;
    json_auto_t *nobj = updated_object(a, r, cand, old, status_only);
    validate_object(r, nobj, old, &fe);
    if (r == &RES_RESOURCESLICES && a->partitionable == PARTITIONABLE_REFUSE)
        slice_refuse_counters(nobj, &fe);
    if (fe.count) {
        reply_status(rp, status_invalid(r, rt->name, &fe));
        return;
    }
    /* An update that changes nothing is not a write: same resourceVersion, no event. */
    json_object_set_new(ensure_meta(nobj), "resourceVersion",
                        json_string(meta_string(old, "resourceVersion")));
    if (json_equal(nobj, old)) {
        reply_json(rp, 200, json_incref(old));
        return;
    }
    set_rv(nobj, store_next_rv(s));
    reply_json(rp, 200, json_incref(nobj));
    if (meta_string(old, "deletionTimestamp") &&
        json_array_size(json_object_get(json_object_get(nobj, "metadata"), "finalizers")) == 0)
        store_delete(s, r, steal_pointer(&nobj)); /* the last finalizer is gone */
    else
        store_put(s, r, steal_pointer(&nobj), old);
}

static void do_update(struct api *a, const struct route *rt, json_t *cand, bool status_only,
                      struct api_reply *rp)
{
    store_lock(&a->store);
    update_locked(a, rt, cand, status_only, rp);
    store_unlock(&a->store);
}

static void do_patch(struct api *a, const struct route *rt, const struct api_request *rq,
                     bool status_only, struct api_reply *rp)
{
    char ctype[128];
    media_type(rq, ctype, sizeof(ctype));
    bool merge = !strcmp(ctype, "application/merge-patch+json");
    bool smp = !strcmp(ctype, "application/strategic-merge-patch+json");
    bool jsonpatch = !strcmp(ctype, "application/json-patch+json");
    note_target(rp, rt->res, rt->ns, rt->name);
    if (!strcmp(ctype, "application/apply-patch+yaml")) {
        reply_status(rp, status_new(415, "UnsupportedMediaType",
                                    "apiserver-standin does not support server-side apply "
                                    "(application/apply-patch+yaml)",
                                    NULL, NULL));
        return;
    }
    if (!merge && !smp && !jsonpatch) {
        reply_status(rp, status_new(415, "UnsupportedMediaType",
                                    "the body of the request was in an unknown format - accepted "
                                    "media types include: application/json-patch+json, "
                                    "application/merge-patch+json, "
                                    "application/strategic-merge-patch+json",
                                    NULL, NULL));
        return;
    }
    json_error_t jerr;
    json_t *patch = rq->body_len ? json_loadb(rq->body, rq->body_len, 0, &jerr) : NULL;
    if (patch == NULL || (jsonpatch ? !json_is_array(patch) : !json_is_object(patch))) {
        json_decref(patch);
        reply_bad_request(rp, jsonpatch ? "a JSON patch must be a JSON list of operations"
                                        : "a merge patch must be a JSON object");
        return;
    }
    const char *directive = smp ? smp_directive(patch) : NULL;
    if (directive) {
        char msg[300];
        snprintf(msg, sizeof(msg),
                 "apiserver-standin treats strategic merge patches as merge patches and does not "
                 "support the directive \"%.64s\"",
                 directive);
        reply_bad_request(rp, msg);
        json_decref(patch);
        return;
    }
    struct store *s = &a->store;
    store_lock(s);
    json_t *old = store_get(s, rt->res, rt->ns, rt->name);
    if (old == NULL) {
        reply_status(rp, status_not_found(rt->res, rt->name));
    } else {
        json_t *cand = json_deep_copy(old);
        char msg[512];
        if (jsonpatch) {
            if (json_patch_apply(&cand, patch, msg, sizeof(msg)) < 0) {
                json_decref(cand);
                cand = NULL;
                reply_status(rp, status_newf(422, "Invalid", rt->res, rt->name,
                                             "the JSON patch cannot be applied: %s", msg));
            }
        } else {
            cand = merge_patch(cand, patch);
        }
        if (cand && !json_is_object(cand)) {
            json_decref(cand);
            cand = NULL;
            reply_bad_request(rp, "the patched object is not a JSON object");
        }
        if (cand)
            update_locked(a, rt, cand, status_only, rp);
    }
    store_unlock(s);
    json_decref(patch);
}

static void do_get(struct api *a, const struct route *rt, struct api_reply *rp)
{
    store_lock(&a->store);
    json_t *obj = store_get(&a->store, rt->res, rt->ns, rt->name);
    if (obj)
        reply_json(rp, 200, json_incref(obj));
    else
        reply_status(rp, status_not_found(rt->res, rt->name));
    store_unlock(&a->store);
}

/* ---------- dispatch ---------- */

void api_handle(struct api *a, const struct api_request *rq, struct api_reply *rp)
{
    memset(rp, 0, sizeof(*rp));
    struct route rt;
    if (parse_route(rq->path, &rt) < 0) {
        reply_not_served(rp);
        return;
    }
    const char *m = rq->method;
    rp->mutating =
        !strcmp(m, "POST") || !strcmp(m, "PUT") || !strcmp(m, "PATCH") || !strcmp(m, "DELETE");
    if (rt.name == NULL) {
        const char *w = q(rq, "watch");
        if (!strcmp(m, "GET")) {
            if (w && (!strcmp(w, "true") || !strcmp(w, "1")))
                do_watch(a, &rt, rq, rp);
            else
                do_list(a, &rt, rq, rp);
        } else if (rt.res->namespaced && rt.ns == NULL) {
            reply_method_not_allowed(rp);
        } else if (!strcmp(m, "POST")) {
            json_t *obj = decode_object(rq, rp);
            if (obj)
                do_create(a, &rt, obj, rp);
        } else if (!strcmp(m, "DELETE")) {
            do_delete_collection(a, &rt, rq, rp);
        } else {
            reply_method_not_allowed(rp);
        }
        return;
    }
    if (rt.sub && (strcmp(rt.sub, "status") || !rt.res->has_status)) {
        reply_not_served(rp);
        return;
    }
    bool status_only = rt.sub != NULL;
    if (!strcmp(m, "GET")) {
        do_get(a, &rt, rp);
    } else if (!strcmp(m, "PUT")) {
        json_t *obj = decode_object(rq, rp);
        note_target(rp, rt.res, rt.ns, rt.name);
        if (obj)
            do_update(a, &rt, obj, status_only, rp);
    } else if (!strcmp(m, "PATCH")) {
        do_patch(a, &rt, rq, status_only, rp);
    } else if (!strcmp(m, "DELETE") && !status_only) {
        do_delete(a, &rt, rq, rp);
    } else {
        reply_method_not_allowed(rp);
    }
}
