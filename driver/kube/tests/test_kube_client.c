// SPDX-License-Identifier: Apache-2.0
/* Integration tests of the kube client against apiserver-standin: CRUD with
 * conflicts, status patches, retries through injected faults, timeouts,
 * watches, bearer tokens and TLS (server CA, client certificates). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kube_client.h"
#include "kube_internal.h"
#include "monotonic.h"
#include "standin_proc.h"
#include "common/tests/test_main.h"
#include "common/tests/test_json.h"

#define SLICES  "/apis/resource.k8s.io/v1/resourceslices"
#define CLAIMS  "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
#define CLASSES "/apis/resource.k8s.io/v1/deviceclasses"
#define NODE    "/api/v1/nodes/node-1"

static struct standin sa;       /* shared by most tests: plain HTTP, node-1 */
static struct kube_client *ctl; /* for /standin/ control requests, no retries */

static struct kube_client *client_with(const char *url, int attempts, long timeout_ms)
{
    struct kube_config cfg = {.server = (char *)url};
    struct kube_client_options o = {.timeout_ms = timeout_ms,
                                    .max_attempts = attempts,
                                    .backoff_base_ms = 1,
                                    .backoff_max_ms = 20};
    struct error err;
    struct kube_client *c = kube_client_new(&cfg, &o, &err);
    assert_non_null(c);
    return c;
}

static struct kube_client *client(void)
{
    return client_with(sa.url, 4, 5000);
}

/* The method of its wire name (the tests read best with "GET"). */
static enum kube_method method_of(const char *name)
{
    static const enum kube_method all[] = {KUBE_GET, KUBE_HEAD,  KUBE_POST,
                                           KUBE_PUT, KUBE_PATCH, KUBE_DELETE};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (!strcmp(kube_method_name(all[i]), name))
            return all[i];
    fail_msg("unknown method %s", name);
    return KUBE_GET;
}

/* One request whose body is given as text; returns rc, fills status/response/err. */
static int req(struct kube_client *c, const char *method, const char *path, const char *body,
               const char *ctype, long *status, json_t **resp, struct error *err)
{
    json_t *b = body ? test_json(body) : NULL;
    int rc = kube_request(c, method_of(method), path, b, ctype, status, resp, err);
    json_decref(b);
    return rc;
}

static void add_fault(const char *spec)
{
    struct error err;
    long st;
    assert_int_equal(req(ctl, "POST", "/standin/faults", spec, NULL, &st, NULL, &err), 0);
    assert_int_equal(st, 201);
}

static void reset_standin(void)
{
    struct error err;
    assert_int_equal(req(ctl, "DELETE", "/standin/faults", NULL, NULL, NULL, NULL, &err), 0);
    assert_int_equal(req(ctl, "DELETE", "/standin/requests", NULL, NULL, NULL, NULL, &err), 0);
}

/* The request log entries for method and exact path, as an array (new ref). */
static json_t *logged(const char *method, const char *path)
{
    struct error err;
    json_t *log = NULL;
    assert_int_equal(req(ctl, "GET", "/standin/requests", NULL, NULL, NULL, &log, &err), 0);
    json_t *out = json_array(), *e;
    size_t i;
    json_array_foreach(json_object_get(log, "requests"), i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "method")), method) &&
            !strcmp(json_string_value(json_object_get(e, "path")), path))
            json_array_append(out, e);
    }
    json_decref(log);
    return out;
}

static long logged_status(json_t *entries, size_t i)
{
    return (long)json_integer_value(json_object_get(json_array_get(entries, i), "status"));
}

static long elapsed_ms(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

static int setup(void **state)
{
    (void)state;
    const char *args[] = {"--node", "node-1", NULL};
    if (standin_start(&sa, args) < 0)
        return -1;
    ctl = client_with(sa.url, 1, 5000);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    kube_client_free(ctl);
    return standin_stop(&sa) == 0 ? 0 : -1;
}

/* ---------- requests ---------- */

static void test_get_node(void **state)
{
    (void)state;
    struct kube_client *c = client();
    long st = 0;
    json_t *node = NULL;
    struct error err;
    assert_int_equal(req(c, "GET", NODE, NULL, NULL, &st, &node, &err), 0);
    assert_int_equal(st, 200);
    json_t *meta = json_object_get(node, "metadata");
    assert_string_equal(json_string_value(json_object_get(meta, "name")), "node-1");
    assert_int_equal(strlen(json_string_value(json_object_get(meta, "uid"))), 36);
    assert_string_equal(json_string_value(json_object_get(node, "kind")), "Node");
    json_decref(node);
    kube_client_free(c);
}

static void test_not_found(void **state)
{
    (void)state;
    struct kube_client *c = client();
    long st = 0;
    json_t *resp = NULL;
    struct error err;
    assert_int_equal(req(c, "GET", CLAIMS "/c1", NULL, NULL, &st, &resp, &err), -1);
    assert_int_equal(st, 404);
    assert_string_equal(err.msg, "GET " CLAIMS "/c1: 404 Not Found: "
                                 "resourceclaims.resource.k8s.io \"c1\" not found");
    assert_string_equal(json_string_value(json_object_get(resp, "reason")), "NotFound");
    json_decref(resp);
    kube_client_free(c);
}

static const char *slice_body =
    "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\","
    "\"metadata\":{\"generateName\":\"gpu.example.com-\"},"
    "\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"node-1\","
    "\"pool\":{\"name\":\"node-1\",\"generation\":1,\"resourceSliceCount\":1},"
    "\"devices\":[{\"name\":\"gpu-0\",\"attributes\":{\"uuid\":{\"string\":\"GPU-0\"}}}]}}";

static void test_create_update_conflict_delete(void **state)
{
    (void)state;
    struct kube_client *c = client();
    long st = 0;
    json_t *slice = NULL, *resp = NULL;
    struct error err;
    assert_int_equal(req(c, "POST", SLICES, slice_body, NULL, &st, &slice, &err), 0);
    assert_int_equal(st, 201);
    json_t *meta = json_object_get(slice, "metadata");
    char name[128], path[256], rv1[32];
    snprintf(name, sizeof(name), "%s", json_string_value(json_object_get(meta, "name")));
    snprintf(rv1, sizeof(rv1), "%s", json_string_value(json_object_get(meta, "resourceVersion")));
    assert_int_equal(strlen(name), strlen("gpu.example.com-") + 5);
    assert_memory_equal(name, "gpu.example.com-", 16);
    snprintf(path, sizeof(path), SLICES "/%s", name);

    /* Update with the current resourceVersion: accepted, generation counts it. */
    json_object_set_new(json_object_get(json_object_get(slice, "spec"), "pool"), "generation",
                        json_integer(2));
    assert_int_equal(kube_request(c, KUBE_PUT, path, slice, NULL, &st, &resp, &err), 0);
    assert_int_equal(st, 200);
    json_t *rmeta = json_object_get(resp, "metadata");
    assert_string_not_equal(json_string_value(json_object_get(rmeta, "resourceVersion")), rv1);
    assert_int_equal(json_integer_value(json_object_get(rmeta, "generation")), 2);
    json_decref(resp);

    /* The same update again carries a stale resourceVersion: 409, not retried. */
    assert_int_equal(req(ctl, "DELETE", "/standin/requests", NULL, NULL, NULL, NULL, &err), 0);
    assert_int_equal(kube_request(c, KUBE_PUT, path, slice, NULL, &st, &resp, &err), -1);
    assert_int_equal(st, 409);
    char want[512];
    snprintf(want, sizeof(want),
             "PUT %s: 409 Conflict: Operation cannot be fulfilled on "
             "resourceslices.resource.k8s.io \"%s\": the object has been modified; please apply "
             "your changes to the latest version and try again",
             path, name);
    assert_string_equal(err.msg, want);
    assert_string_equal(json_string_value(json_object_get(resp, "reason")), "Conflict");
    json_decref(resp);
    json_t *puts = logged("PUT", path);
    assert_int_equal(json_array_size(puts), 1);
    json_decref(puts);

    /* DELETE with a wrong UID precondition is refused, then works without. */
    assert_int_equal(
        req(c, "DELETE", path, "{\"preconditions\":{\"uid\":\"nope\"}}", NULL, &st, NULL, &err),
        -1);
    assert_int_equal(st, 409);
    assert_non_null(strstr(err.msg, "Precondition failed: UID in precondition: nope"));
    assert_int_equal(req(c, "DELETE", path, NULL, NULL, &st, NULL, &err), 0);
    assert_int_equal(st, 200);
    assert_int_equal(req(c, "GET", path, NULL, NULL, &st, NULL, &err), -1);
    assert_int_equal(st, 404);
    json_decref(slice);
    kube_client_free(c);
}

static void test_claim_status_patches(void **state)
{
    (void)state;
    struct kube_client *c = client();
    long st = 0;
    json_t *resp = NULL;
    struct error err;
    assert_int_equal(req(c, "POST", CLAIMS,
                         "{\"metadata\":{\"name\":\"c1\"},\"spec\":{\"devices\":{\"requests\":[{"
                         "\"name\":\"gpu\",\"exactly\":{\"deviceClassName\":\"gpu\"}}]}},"
                         "\"status\":{\"reservedFor\":[]}}",
                         NULL, &st, &resp, &err),
                     0);
    assert_int_equal(st, 201);
    assert_null(json_object_get(resp, "status")); /* status only through /status */
    json_decref(resp);

    const char *alloc =
        "{\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"gpu\","
        "\"driver\":\"gpu.example.com\",\"pool\":\"node-1\",\"device\":\"gpu-0\"}]}}}}";
    assert_int_equal(req(c, "PATCH", CLAIMS "/c1/status", alloc, "application/merge-patch+json",
                         &st, &resp, &err),
                     0);
    json_t *results = json_object_get(
        json_object_get(json_object_get(json_object_get(resp, "status"), "allocation"), "devices"),
        "results");
    assert_int_equal(json_array_size(results), 1);
    json_decref(resp);

    /* The driver's device status, as a strategic merge patch: allocation stays. */
    assert_int_equal(req(c, "PATCH", CLAIMS "/c1/status",
                         "{\"status\":{\"devices\":[{\"driver\":\"gpu.example.com\",\"pool\":"
                         "\"node-1\",\"device\":\"gpu-0\",\"conditions\":[{\"type\":\"Ready\","
                         "\"status\":\"True\",\"reason\":\"Prepared\",\"message\":\"\","
                         "\"lastTransitionTime\":\"2025-01-01T00:00:00Z\"}]}]}}",
                         "application/strategic-merge-patch+json", &st, &resp, &err),
                     0);
    json_t *status = json_object_get(resp, "status");
    assert_non_null(json_object_get(status, "allocation"));
    assert_int_equal(json_array_size(json_object_get(status, "devices")), 1);
    json_decref(resp);

    /* A device that is not allocated is refused with the field path. */
    assert_int_equal(req(c, "PATCH", CLAIMS "/c1/status",
                         "{\"status\":{\"devices\":[{\"driver\":\"gpu.example.com\",\"pool\":"
                         "\"node-1\",\"device\":\"gpu-9\"}]}}",
                         "application/merge-patch+json", &st, NULL, &err),
                     -1);
    assert_int_equal(st, 422);
    assert_string_equal(err.msg, "PATCH " CLAIMS "/c1/status: 422 Unprocessable Entity: "
                                 "ResourceClaim.resource.k8s.io \"c1\" is invalid: "
                                 "status.devices[0]: Invalid value: "
                                 "\"gpu.example.com/node-1/gpu-9\": must be an allocated device "
                                 "in the claim");

    /* JSON patch on the object; the spec itself is immutable. */
    assert_int_equal(req(c, "PATCH", CLAIMS "/c1",
                         "[{\"op\":\"test\",\"path\":\"/metadata/name\",\"value\":\"c1\"},"
                         "{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{\"a\":\"b\"}}]",
                         "application/json-patch+json", &st, &resp, &err),
                     0);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(resp, "metadata"), "labels"), "a")),
                        "b");
    json_object_set_new(json_object_get(resp, "spec"), "devices", json_object());
    assert_int_equal(kube_request(c, KUBE_PUT, CLAIMS "/c1", resp, NULL, &st, NULL, &err), -1);
    assert_int_equal(st, 422);
    assert_non_null(strstr(err.msg, "spec: Invalid value: "));
    assert_non_null(strstr(err.msg, "field is immutable"));
    json_decref(resp);
    assert_int_equal(req(c, "DELETE", CLAIMS "/c1", NULL, NULL, &st, NULL, &err), 0);
    kube_client_free(c);
}

/* ---------- retries ---------- */

/* One GET of node-1 through an injected fault, and what it must come to:
 * its result and status, its error text, and the GETs the stand-in logged. */
struct fault_case {
    const char *fault;       /* the stand-in's fault, as JSON */
    int attempts;            /* the client's max_attempts */
    int rc;                  /* kube_request's result */
    long status;             /* the last answer's HTTP status */
    const char *msg;         /* the whole error text, or NULL */
    size_t tries;            /* GETs the stand-in logged */
    long logged[3];          /* their statuses, in order (0: no answer) */
    const char *first_fault; /* the fault the first GET logged, or NULL */
};

static void get_node_through_fault(const struct fault_case *fc)
{
    reset_standin();
    add_fault(fc->fault);
    struct kube_client *c = client_with(sa.url, fc->attempts, 5000);
    long st = 0;
    struct error err;
    assert_int_equal(req(c, "GET", NODE, NULL, NULL, &st, NULL, &err), fc->rc);
    assert_int_equal(st, fc->status);
    if (fc->msg != NULL)
        assert_string_equal(err.msg, fc->msg);
    json_t *gets = logged("GET", NODE);
    assert_int_equal(json_array_size(gets), fc->tries);
    for (size_t i = 0; i < fc->tries; i++)
        assert_int_equal(logged_status(gets, i), fc->logged[i]);
    if (fc->first_fault != NULL)
        assert_string_equal(json_string_value(json_object_get(json_array_get(gets, 0), "fault")),
                            fc->first_fault);
    json_decref(gets);
    reset_standin();
    kube_client_free(c);
}

static void test_retry_through_500(void **state)
{
    (void)state;
    get_node_through_fault(
        &(struct fault_case){.fault = "{\"status\":500,\"count\":2,\"path\":\"/api/v1/nodes/\"}",
                             .attempts = 4,
                             .status = 200,
                             .tries = 3,
                             .logged = {500, 500, 200}});
}

static void test_retries_are_bounded(void **state)
{
    (void)state;
    get_node_through_fault(&(struct fault_case){
        .fault = "{\"status\":503,\"count\":10}",
        .attempts = 3,
        .rc = -1,
        .status = 503,
        .msg = "GET " NODE ": 503 Service Unavailable: apiserver-standin: injected fault "
               "(status 503) (after 3 attempts)",
        .tries = 3,
        .logged = {503, 503, 503}});
}

static void test_retry_after_is_honoured(void **state)
{
    (void)state;
    reset_standin();
    add_fault("{\"status\":429,\"retryAfter\":1,\"count\":1}");
    struct kube_config cfg = {.server = sa.url};
    struct kube_client_options o = {.backoff_base_ms = 1, .backoff_max_ms = 3000};
    struct error err;
    struct kube_client *c = kube_client_new(&cfg, &o, &err);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long st = 0;
    assert_int_equal(req(c, "GET", NODE, NULL, NULL, &st, NULL, &err), 0);
    assert_true(elapsed_ms(&t0) >= 950); /* waited for Retry-After: 1, not 1..2 ms */
    kube_client_free(c);
}

static void test_4xx_is_not_retried(void **state)
{
    (void)state;
    get_node_through_fault(&(struct fault_case){.fault = "{\"status\":403,\"count\":5}",
                                                .attempts = 4,
                                                .rc = -1,
                                                .status = 403,
                                                .tries = 1,
                                                .logged = {403}});
}

static void test_dropped_connections_are_retried(void **state)
{
    (void)state;
    get_node_through_fault(&(struct fault_case){.fault = "{\"close\":true,\"count\":2}",
                                                .attempts = 4,
                                                .status = 200,
                                                .tries = 3,
                                                .logged = {0, 0, 200},
                                                .first_fault = "close"});
}

static void test_post_is_not_repeated_after_a_drop(void **state)
{
    (void)state;
    reset_standin();
    /* The create happens, the answer is lost: a retry would make a second slice. */
    add_fault("{\"close\":true,\"after\":true,\"method\":\"POST\",\"count\":1}");
    struct kube_client *c = client();
    long st = 0;
    struct error err;
    json_t *list = NULL;
    const char *body = "{\"metadata\":{\"generateName\":\"drop-\"},\"spec\":{\"driver\":"
                       "\"drop.example.com\",\"nodeName\":\"node-1\",\"pool\":{\"name\":\"p\","
                       "\"resourceSliceCount\":1}}}";
    assert_int_equal(req(c, "POST", SLICES, body, NULL, &st, NULL, &err), -1);
    assert_int_equal(st, 0);
    char want[256];
    snprintf(want, sizeof(want), "POST " SLICES ": no answer from %s: ", sa.url);
    assert_memory_equal(err.msg, want, strlen(want));
    json_t *posts = logged("POST", SLICES);
    assert_int_equal(json_array_size(posts), 1);
    json_decref(posts);
    assert_int_equal(req(c, "GET", SLICES "?fieldSelector=spec.driver%3Ddrop.example.com", NULL,
                         NULL, &st, &list, &err),
                     0);
    assert_int_equal(json_array_size(json_object_get(list, "items")), 1);
    json_decref(list);
    assert_int_equal(req(c, "DELETE", SLICES "?fieldSelector=spec.driver%3Ddrop.example.com", NULL,
                         NULL, &st, NULL, &err),
                     0);
    kube_client_free(c);
}

static void test_timeouts(void **state)
{
    (void)state;
    reset_standin();
    /* A server that stalls 3 s: one attempt of 800 ms fails ... */
    add_fault("{\"delayMs\":3000,\"count\":1,\"path\":\"/api/v1/nodes/node-1\"}");
    struct kube_client *one = client_with(sa.url, 1, 800);
    long st = 0;
    struct error err;
    assert_int_equal(req(one, "GET", NODE, NULL, NULL, &st, NULL, &err), -1);
    assert_int_equal(st, 0);
    assert_non_null(strstr(err.msg, "GET /api/v1/nodes/node-1: no answer from"));
    assert_non_null(strstr(err.msg, "imed out")); /* curl: "Operation timed out after ..." */
    kube_client_free(one);
    /* ... and a second attempt gets through. */
    add_fault("{\"delayMs\":3000,\"count\":1,\"path\":\"/api/v1/nodes/node-1\"}");
    struct kube_client *two = client_with(sa.url, 2, 800);
    assert_int_equal(req(two, "GET", NODE, NULL, NULL, &st, NULL, &err), 0);
    assert_int_equal(st, 200);
    kube_client_free(two);
}

static void test_connection_refused(void **state)
{
    (void)state;
    struct kube_client *c = client_with("http://127.0.0.1:1", 3, 1000);
    long st = 7;
    json_t *resp = (json_t *)1;
    struct error err;
    assert_int_equal(req(c, "GET", NODE, NULL, NULL, &st, &resp, &err), -1);
    assert_int_equal(st, 0);
    assert_null(resp);
    assert_memory_equal(err.msg,
                        "GET /api/v1/nodes/node-1: no answer from http://127.0.0.1:1: ", 60);
    assert_non_null(strstr(err.msg, "(after 3 attempts)"));
    kube_client_free(c);
}

/* 25 GETs on the client arg; returns how many failed. */
static void *hammer_thread(void *arg)
{
    intptr_t failures = 0;
    for (int i = 0; i < 25; i++) {
        struct error err;
        json_t *node = NULL;
        if (kube_request(arg, KUBE_GET, NODE, NULL, NULL, NULL, &node, &err) < 0 ||
            !json_is_object(node))
            failures++;
        json_decref(node);
    }
    return (void *)failures;
}

static void test_concurrent_requests(void **state)
{
    (void)state;
    struct kube_client *c = client();
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, hammer_thread, c), 0);
    for (int i = 0; i < 4; i++) {
        void *failures;
        pthread_join(t[i], &failures);
        assert_int_equal((intptr_t)failures, 0);
    }
    kube_client_free(c);
}

/* ---------- shutdown deadline ---------- */

struct slow_get {
    struct kube_client *c;
    int rc;
    struct error err;
};

static void *slow_get_thread(void *arg)
{
    struct slow_get *g = arg;
    g->rc = kube_request(g->c, KUBE_GET, NODE, NULL, NULL, NULL, NULL, &g->err);
    return NULL;
}

static void test_deadline_cancels_requests_in_flight(void **state)
{
    (void)state;
    reset_standin();
    /* Every request answered after 4 s (the client would wait for it). */
    add_fault("{\"delayMs\":4000,\"seconds\":60,\"path\":\"/api/v1/nodes/\"}");
    struct slow_get g = {.c = client_with(sa.url, 5, 20000)};
    pthread_t t;
    pthread_create(&t, NULL, slow_get_thread, &g);
    struct timespec ts = {0, 300 * 1000000L}, t0;
    nanosleep(&ts, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    kube_client_set_deadline(g.c, monotonic_ms());
    pthread_join(t, NULL);
    long took = elapsed_ms(&t0);
    assert_int_equal(g.rc, -1);
    assert_non_null(
        strstr(g.err.msg, "GET /api/v1/nodes/node-1: cancelled: the client is shutting down"));
    assert_true(took < 1000); /* a behaviour bound: the transfer ends, it does not time out */
    assert_true(kube_client_expired(g.c));
    /* Nothing starts after the deadline... */
    assert_int_equal(kube_request(g.c, KUBE_GET, NODE, NULL, NULL, NULL, NULL, &g.err), -1);
    assert_non_null(strstr(g.err.msg, "cancelled"));
    /* ... a future deadline caps the next request ... */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    kube_client_set_deadline(g.c, monotonic_ms() + 500);
    assert_int_equal(kube_request(g.c, KUBE_GET, NODE, NULL, NULL, NULL, NULL, &g.err), -1);
    took = elapsed_ms(&t0);
    assert_true(took >= 400 && took < 2000);
    /* ... and without a deadline the client works again. */
    reset_standin();
    kube_client_set_deadline(g.c, 0);
    long st = 0;
    assert_int_equal(kube_request(g.c, KUBE_GET, NODE, NULL, NULL, &st, NULL, &g.err), 0);
    assert_int_equal(st, 200);
    kube_client_free(g.c);
}

/* ---------- watches ---------- */

struct seen {
    pthread_mutex_t lock;
    char types[16][12];
    char names[16][80];
    long codes[16];
    int n;
    int stop_after_deleted;
    struct kube_client *c;
    const char *path, *rv;
    struct kube_cancel *stop;
    int rc;
    struct error err;
};

static int on_event(void *ctx, const char *type, json_t *object)
{
    struct seen *s = ctx;
    pthread_mutex_lock(&s->lock);
    if (s->n < 16) {
        snprintf(s->types[s->n], sizeof(s->types[0]), "%s", type);
        const char *name =
            json_string_value(json_object_get(json_object_get(object, "metadata"), "name"));
        snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name ? name : "");
        s->codes[s->n] = (long)json_integer_value(json_object_get(object, "code"));
        s->n++;
    }
    pthread_mutex_unlock(&s->lock);
    return (s->stop_after_deleted && !strcmp(type, "DELETED")) || !strcmp(type, "ERROR");
}

static void *watch_thread(void *arg)
{
    struct seen *s = arg;
    s->rc = kube_watch(s->c, s->path, s->rv, on_event, s, s->stop, &s->err);
    return NULL;
}

static int seen_count(struct seen *s)
{
    pthread_mutex_lock(&s->lock);
    int n = s->n;
    pthread_mutex_unlock(&s->lock);
    return n;
}

static void list_rv(struct kube_client *c, const char *path, char *rv, size_t size)
{
    json_t *list = NULL;
    struct error err;
    assert_int_equal(req(c, "GET", path, NULL, NULL, NULL, &list, &err), 0);
    snprintf(
        rv, size, "%s",
        json_string_value(json_object_get(json_object_get(list, "metadata"), "resourceVersion")));
    json_decref(list);
}

static void test_watch_events_from_list_rv(void **state)
{
    (void)state;
    struct kube_client *c = client();
    struct error err;
    long st;
    char rv[32];
    const char *path = SLICES "?fieldSelector=spec.nodeName%3Dnode-w";
    list_rv(c, path, rv, sizeof(rv));
    struct seen s = {
        .lock = PTHREAD_MUTEX_INITIALIZER, .stop_after_deleted = 1, .c = c, .path = path, .rv = rv};
    pthread_t t;
    pthread_create(&t, NULL, watch_thread, &s);

    const char *mine = "{\"metadata\":{\"name\":\"w1\"},\"spec\":{\"driver\":\"gpu.example.com\","
                       "\"nodeName\":\"node-w\",\"pool\":{\"name\":\"node-w\","
                       "\"resourceSliceCount\":1}}}";
    const char *other = "{\"metadata\":{\"name\":\"w2\"},\"spec\":{\"driver\":\"gpu.example.com\","
                        "\"nodeName\":\"node-x\",\"pool\":{\"name\":\"node-x\","
                        "\"resourceSliceCount\":1}}}";
    json_t *obj = NULL;
    assert_int_equal(req(c, "POST", SLICES, mine, NULL, &st, &obj, &err), 0);
    assert_int_equal(req(c, "POST", SLICES, other, NULL, &st, NULL, &err), 0);
    json_object_set_new(json_object_get(json_object_get(obj, "spec"), "pool"), "generation",
                        json_integer(5));
    assert_int_equal(kube_request(c, KUBE_PUT, SLICES "/w1", obj, NULL, &st, NULL, &err), 0);
    assert_int_equal(req(c, "DELETE", SLICES "/w1", NULL, NULL, &st, NULL, &err), 0);
    assert_int_equal(req(c, "DELETE", SLICES "/w2", NULL, NULL, &st, NULL, &err), 0);
    pthread_join(t, NULL);
    assert_int_equal(s.rc, 0);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.types[0], "ADDED");
    assert_string_equal(s.types[1], "MODIFIED");
    assert_string_equal(s.types[2], "DELETED");
    for (int i = 0; i < 3; i++)
        assert_string_equal(s.names[i], "w1");
    json_decref(obj);
    kube_client_free(c);
}

static void test_watch_initial_state_and_stop(void **state)
{
    (void)state;
    struct kube_client *c = client();
    struct error err;
    long st;
    assert_int_equal(req(c, "POST", CLASSES, "{\"metadata\":{\"name\":\"gpu\"},\"spec\":{}}", NULL,
                         &st, NULL, &err),
                     0);
    struct seen s = {
        .lock = PTHREAD_MUTEX_INITIALIZER, .c = c, .path = CLASSES, .stop = kube_cancel_new()};
    pthread_t t;
    pthread_create(&t, NULL, watch_thread, &s);
    for (int i = 0; i < 500 && seen_count(&s) < 1; i++)
        usleep(10000);
    assert_int_equal(seen_count(&s), 1);
    assert_string_equal(s.types[0], "ADDED");
    assert_string_equal(s.names[0], "gpu");
    /* Cancelled, the watch ends without waiting for its once-a-second
     * wake-up: well under that, even on a loaded machine. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    kube_cancel_fire(s.stop);
    pthread_join(t, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    kube_cancel_free(s.stop);
    long waited_ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    assert_int_equal(s.rc, 0);
    assert_true(waited_ms < 900);
    assert_int_equal(req(c, "DELETE", CLASSES "/gpu", NULL, NULL, &st, NULL, &err), 0);
    kube_client_free(c);
}

/* A token fired before the watch starts: the watch returns at once; a NULL
 * token is never fired and firing it is no error. */
static void test_watch_cancelled_before_start(void **state)
{
    (void)state;
    struct kube_client *c = client();
    struct seen s = {
        .lock = PTHREAD_MUTEX_INITIALIZER, .c = c, .path = CLASSES, .stop = kube_cancel_new()};
    kube_cancel_fire(NULL);
    assert_false(kube_cancel_fired(NULL));
    kube_cancel_fire(s.stop);
    pthread_t t;
    pthread_create(&t, NULL, watch_thread, &s);
    pthread_join(t, NULL);
    assert_int_equal(s.rc, 0);
    kube_cancel_free(s.stop);
    kube_client_free(c);
}

static void test_watch_ends_with_the_server(void **state)
{
    (void)state;
    struct kube_client *c = client();
    struct error err;
    struct kube_cancel *stop = kube_cancel_new(); /* never fired */
    struct seen s = {.lock = PTHREAD_MUTEX_INITIALIZER};
    int rc = kube_watch(c, SLICES "?fieldSelector=spec.driver%3Dnone&timeoutSeconds=1", NULL,
                        on_event, &s, stop, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(s.n, 0);
    kube_cancel_free(stop);
    kube_client_free(c);
}

static void test_watch_errors(void **state)
{
    (void)state;
    struct kube_client *c = client();
    struct error err;
    struct kube_cancel *stop = NULL; /* no token */
    struct seen s = {.lock = PTHREAD_MUTEX_INITIALIZER};
    int rc =
        kube_watch(c, SLICES "?fieldSelector=spec.pool.name%3Dx", NULL, on_event, &s, stop, &err);
    assert_int_equal(rc, -1);
    assert_string_equal(err.msg, "watch: GET " SLICES "?fieldSelector=spec.pool.name%3Dx: 400 "
                                 "Bad Request: field label not supported for "
                                 "resource.k8s.io/v1, Kind=ResourceSlice: spec.pool.name");
    kube_client_free(c);

    /* A resourceVersion older than the server's history: an ERROR event, 410. */
    struct standin small;
    const char *args[] = {"--watch-history", "2", NULL};
    assert_int_equal(standin_start(&small, args), 0);
    c = client_with(small.url, 2, 5000);
    for (int i = 0; i < 4; i++) {
        char body[128];
        snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"class-%d\"}}", i);
        assert_int_equal(req(c, "POST", CLASSES, body, NULL, NULL, NULL, &err), 0);
    }
    rc = kube_watch(c, CLASSES, "1", on_event, &s, stop, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.types[0], "ERROR");
    assert_int_equal(s.codes[0], 410);
    kube_client_free(c);
    assert_int_equal(standin_stop(&small), 0);
}

/* ---------- authentication ---------- */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_token_file_is_reread(void **state)
{
    (void)state;
    struct standin sec;
    const char *args[] = {"--token", "t1", "--node", "node-1", NULL};
    assert_int_equal(standin_start(&sec, args), 0);
    char tok[128];
    snprintf(tok, sizeof(tok), "%s.token", sec.dir);
    write_text(tok, "t1\n");
    struct kube_config cfg = {.server = sec.url, .token_file = tok};
    struct error err;
    struct kube_client *c = kube_client_new(&cfg, NULL, &err);
    struct kube_client *sctl = client_with(sec.url, 1, 5000);
    long st = 0;
    assert_int_equal(req(c, "GET", NODE, NULL, NULL, &st, NULL, &err), 0);
    /* The token rotates: the server wants t2 now, the file says t2. */
    assert_int_equal(
        req(sctl, "PUT", "/standin/token", "{\"token\":\"t2\"}", NULL, NULL, NULL, &err), 0);
    write_text(tok, "t2\n");
    assert_int_equal(req(c, "GET", NODE, NULL, NULL, &st, NULL, &err), 0);
    /* A wrong token is a 401 at once, not a retry. */
    write_text(tok, "wrong\n");
    assert_int_equal(req(c, "GET", NODE, NULL, NULL, &st, NULL, &err), -1);
    assert_int_equal(st, 401);
    assert_string_equal(err.msg, "GET /api/v1/nodes/node-1: 401 Unauthorized: Unauthorized");
    unlink(tok);
    assert_int_equal(req(c, "GET", NODE, NULL, NULL, &st, NULL, &err), -1);
    assert_int_equal(st, 0);
    assert_non_null(strstr(err.msg, "reading the bearer token: "));
    kube_client_free(sctl);
    kube_client_free(c);
    assert_int_equal(standin_stop(&sec), 0);
}

static char *slurp(const char *path)
{
    char *text = NULL;
    struct error err;
    if (kube_read_file(path, 1 << 20, &text, NULL, &err) < 0)
        fail_msg("%s", err.msg);
    return text;
}

static char *b64(const char *path)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "base64 -w0 < %s", path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    static char out[3][8192];
    static int next;
    char *o = out[next++ % 3];
    size_t n = fread(o, 1, 8191, p);
    o[n] = '\0';
    pclose(p);
    return o;
}

/* A client of cfg GETs node-1, which comes to rc and status; err keeps its error. */
static void get_node_as(const struct kube_config *cfg, int rc, long status, struct error *err)
{
    struct kube_client *c = kube_client_new(cfg, NULL, err);
    assert_non_null(c);
    long st = -1;
    assert_int_equal(req(c, "GET", NODE, NULL, NULL, &st, NULL, err), rc);
    assert_int_equal(st, status);
    kube_client_free(c);
}

static void test_tls(void **state)
{
    (void)state;
    char dir[] = "/tmp/kube-tls.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[4096];
    /* A CA, a server certificate for 127.0.0.1, a client certificate, and an
     * unrelated CA; EC keys keep it fast. */
    snprintf(cmd, sizeof(cmd),
             "set -e; cd %s; k='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'; "
             "openssl req -x509 $k -keyout ca.key -out ca.crt -days 1 -subj /CN=test-ca; "
             "openssl req -x509 $k -keyout other.key -out other.crt -days 1 -subj /CN=other; "
             "printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' > srv.ext; "
             "printf 'extendedKeyUsage=clientAuth\\n' > cli.ext; "
             "openssl req $k -keyout server.key -out server.csr -subj /CN=127.0.0.1; "
             "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
             "-out server.crt -days 1 -extfile srv.ext; "
             "openssl req $k -keyout client.key -out client.csr -subj /CN=kubelet-plugin; "
             "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
             "-out client.crt -days 1 -extfile cli.ext",
             dir);
    char quiet[4200];
    snprintf(quiet, sizeof(quiet), "(%s) >/dev/null 2>&1", cmd);
    assert_int_equal(system(quiet), 0);
    char cert[128], key[128], ca[128], ccert[128], ckey[128], other[128];
    snprintf(cert, sizeof(cert), "%s/server.crt", dir);
    snprintf(key, sizeof(key), "%s/server.key", dir);
    snprintf(ca, sizeof(ca), "%s/ca.crt", dir);
    snprintf(ccert, sizeof(ccert), "%s/client.crt", dir);
    snprintf(ckey, sizeof(ckey), "%s/client.key", dir);
    snprintf(other, sizeof(other), "%s/other.crt", dir);
    struct standin tls;
    const char *args[] = {
        "--tls-cert-file", cert, "--tls-key-file", key, "--client-ca-file", ca, "--node",
        "node-1",          NULL};
    assert_int_equal(standin_start(&tls, args), 0);
    struct error err;
    long st = 0;

    /* Inline PEM data (as from a kubeconfig's *-data): CA and client certificate. */
    char *ca_pem = slurp(ca), *cert_pem = slurp(ccert), *key_pem = slurp(ckey);
    struct kube_config data = {.server = tls.url,
                               .ca_data = ca_pem,
                               .client_cert_data = cert_pem,
                               .client_key_data = key_pem};
    get_node_as(&data, 0, 200, &err);

    /* Files; without a client certificate the server does not know us. */
    struct kube_config files = {.server = tls.url, .ca_file = ca};
    get_node_as(&files, -1, 401, &err);
    files.client_cert_file = ccert;
    files.client_key_file = ckey;
    get_node_as(&files, 0, 200, &err);

    /* The wrong CA fails the handshake, once, with curl's reason. */
    char *other_pem = slurp(other);
    struct kube_config wrong = {.server = tls.url,
                                .ca_data = other_pem,
                                .client_cert_data = cert_pem,
                                .client_key_data = key_pem};
    get_node_as(&wrong, -1, 0, &err);
    assert_non_null(strstr(err.msg, "certificate"));
    assert_null(strstr(err.msg, "attempts"));
    /* ... unless verification is off. */
    struct kube_config insecure = {.server = tls.url,
                                   .insecure_skip_tls_verify = true,
                                   .client_cert_file = ccert,
                                   .client_key_file = ckey};
    get_node_as(&insecure, 0, 200, &err);

    /* The whole way from a kind-style kubeconfig. */
    char kc[128], text[16384];
    snprintf(kc, sizeof(kc), "%s/kubeconfig", dir);
    snprintf(text, sizeof(text),
             "apiVersion: v1\nkind: Config\ncurrent-context: kind-test\n"
             "clusters:\n- cluster:\n    certificate-authority-data: %s\n    server: %s\n"
             "  name: kind-test\ncontexts:\n- context:\n    cluster: kind-test\n"
             "    user: kind-test\n  name: kind-test\nusers:\n- name: kind-test\n  user:\n"
             "    client-certificate-data: %s\n    client-key-data: %s\n",
             b64(ca), tls.url, b64(ccert), b64(ckey));
    write_text(kc, text);
    struct kube_config loaded;
    assert_int_equal(kube_config_load(kc, &loaded, &err), 0);
    struct kube_client *c = kube_client_new(&loaded, NULL, &err);
    kube_config_free(&loaded);
    json_t *node = NULL;
    assert_int_equal(req(c, "GET", NODE, NULL, NULL, &st, &node, &err), 0);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(node, "metadata"), "name")), "node-1");
    json_decref(node);
    kube_client_free(c);

    free(ca_pem);
    free(cert_pem);
    free(key_pem);
    free(other_pem);
    assert_int_equal(standin_stop(&tls), 0);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

TEST_MAIN_GROUP_FIXTURE("kube_client", setup, teardown, test_get_node, test_not_found,
                        test_create_update_conflict_delete, test_claim_status_patches,
                        test_retry_through_500, test_retries_are_bounded,
                        test_retry_after_is_honoured, test_4xx_is_not_retried,
                        test_dropped_connections_are_retried,
                        test_post_is_not_repeated_after_a_drop, test_timeouts,
                        test_connection_refused, test_concurrent_requests,
                        test_deadline_cancels_requests_in_flight, test_watch_events_from_list_rv,
                        test_watch_initial_state_and_stop, test_watch_cancelled_before_start,
                        test_watch_ends_with_the_server, test_watch_errors,
                        test_token_file_is_reread, test_tls)
