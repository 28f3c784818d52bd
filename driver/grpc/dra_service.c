// SPDX-License-Identifier: Apache-2.0
#include "dra_service.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver/grpc/dra_codec.h"
#include "cleanup.h"
#include "log.h"
#include "monotonic.h"
#include "utf8.h"
#include "xalloc.h"

struct dra_service {
    struct prepare_state *st;
    dra_claim_observer observe;
    void *observe_ctx;
    bool unprepare_may_wait; /* on a worker thread, not on the poller */
    /* Method contexts: the api version travels with the handler. */
    struct dra_method_ctx {
        struct dra_service *svc;
        enum dra_api api;
    } v1, v1beta1;
};

static const char *api_name(enum dra_api api)
{
    return api == DRA_API_V1 ? "v1" : "v1beta1";
}

/* Checks the claim list of a request: returns 0, or -1 with the reason for
 * an INVALID_ARGUMENT.  Fields that are empty but present are left to the
 * per-claim path; only a missing uid (the answer's map key) and non-UTF-8
 * strings (which the kubelet could not decode back) refuse the request. */
static int check_claims(const struct dra_claim_ref *claims, size_t n, struct error *err)
{
    if (n > DRA_MAX_CLAIMS_PER_REQUEST)
        return error_set(err, "%zu claims in one request; the limit is %d", n,
                         DRA_MAX_CLAIMS_PER_REQUEST);
    for (size_t i = 0; i < n; i++) {
        const struct dra_claim_ref *c = &claims[i];
        if (c->uid[0] == '\0')
            return error_set(err, "claims[%zu] (%s/%s): uid is empty", i, c->ns, c->name);
        const char *fields[] = {c->ns, c->name, c->uid};
        const char *names[] = {"namespace", "name", "uid"};
        for (size_t f = 0; f < 3; f++)
            if (!utf8_valid(fields[f], strlen(fields[f])))
                return error_set(err, "claims[%zu]: %s is not valid UTF-8", i, names[f]);
    }
    return 0;
}

/* Sort order of claim indices: by uid, then by position, so the first of
 * equal uids is the one that comes first in the request. */
static int by_uid_then_index(const void *a, const void *b, void *claims)
{
    const struct dra_claim_ref *c = claims;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int r = strcmp(c[i].uid, c[j].uid);
    return r ? r : (i > j) - (i < j);
}

/* Keeps the first claim of each uid, in request order, in n log n; returns
 * how many are kept. */
static size_t dedup_claims(struct dra_claim_ref *claims, size_t n)
{
    cleanup_free size_t *idx = xcalloc(n, sizeof(*idx));
    cleanup_free bool *dup = xcalloc(n, sizeof(*dup));
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, n, sizeof(*idx), by_uid_then_index, claims);
    for (size_t k = 1; k < n; k++)
        if (!strcmp(claims[idx[k]].uid, claims[idx[k - 1]].uid))
            dup[idx[k]] = true;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (!dup[i])
            claims[kept++] = claims[i];
    return kept;
}

/* Per-claim error for a claim the prepare path must not see. */
static const char *missing_field(const struct dra_claim_ref *c)
{
    if (c->ns[0] == '\0')
        return "namespace";
    if (c->name[0] == '\0')
        return "name";
    return NULL;
}

/* The claims of one request, as prepare and unprepare both walk them: each
 * distinct claim once, in request order (the answer is a map keyed by uid,
 * so a repeated claim is prepared and answered once), and what became of it. */
struct claim_batch {
    const char *method; /* "NodePrepareResources", for messages */
    bool prepare;       /* else unprepare, for the observer */
    const struct dra_method_ctx *mc;
    struct dra_claim_ref *claims; /* the distinct claims */
    size_t n;
    const char **errors; /* errors[i] != NULL: claim i failed, with that text */
    size_t failed;
};

/* Reads and checks the claims of req.  On failure the call is answered
 * (INVALID_ARGUMENT) and -1 returned.  *b is set either way, for batch_close. */
static int batch_open(struct claim_batch *b, const char *method, const struct dra_method_ctx *mc,
                      const ProtobufCMessage *req, struct rpc_reply *reply)
{
    struct error err;
    size_t n = 0;
    *b = (struct claim_batch){
        .method = method, .prepare = strcmp(method, "NodePrepareResources") == 0, .mc = mc};
    if (dra_request_claims(mc->api, req, &b->claims, &n, &err) < 0 ||
        check_claims(b->claims, n, &err) < 0) {
        LOG_W("%s (%s): refused: %s", method, api_name(mc->api), err.msg);
        rpc_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "%s: %s", method, err.msg);
        return -1;
    }
    b->n = dedup_claims(b->claims, n);
    b->errors = xcalloc(b->n, sizeof(*b->errors));
    return 0;
}

/* Does one claim (index i of the batch); 0, or -1 with err. */
typedef int (*claim_op)(const struct claim_batch *b, size_t i, void *arg, struct error *err);

/* Runs op on every claim that has a namespace and a name; a claim that fails
 * gets its own error and does not stop the others. */
static void batch_run(struct claim_batch *b, claim_op op, void *arg)
{
    const struct dra_service *svc = b->mc->svc;
    for (size_t i = 0; i < b->n; i++) {
        const struct dra_claim_ref *c = &b->claims[i];
        struct error err;
        const char *missing = missing_field(c);
        long long start = svc->observe ? monotonic_ns() : 0;
        int rc = -1;
        if (missing)
            error_set(&err, "claim %s/%s (uid %s): %s is empty", c->ns, c->name, c->uid, missing);
        else
            rc = op(b, i, arg, &err);
        if (svc->observe)
            svc->observe(svc->observe_ctx, b->prepare, rc == 0, monotonic_ns() - start);
        if (rc == 0)
            continue;
        b->errors[i] = xstrdup(err.msg);
        if (++b->failed <= DRA_LOGGED_CLAIM_ERRORS)
            LOG_E("%s (%s): %s", b->method, api_name(b->mc->api), err.msg);
        else
            LOG_V(2, "%s (%s): %s", b->method, api_name(b->mc->api), err.msg);
    }
    if (b->failed > DRA_LOGGED_CLAIM_ERRORS)
        LOG_E("%s (%s): %zu of %zu claim(s) failed; the first %d are logged above (all with -v 2)",
              b->method, api_name(b->mc->api), b->failed, b->n, DRA_LOGGED_CLAIM_ERRORS);
}

static void batch_reply(const struct claim_batch *b, struct rpc_reply *reply, const uint8_t *out,
                        size_t len)
{
    rpc_reply_packed(reply, out, len);
    LOG_V(1, "%s (%s): %zu claim(s), %zu failed", b->method, api_name(b->mc->api), b->n, b->failed);
}

static void batch_close(struct claim_batch *b)
{
    for (size_t i = 0; b->errors && i < b->n; i++)
        free((char *)b->errors[i]);
    free(b->errors);
    free(b->claims);
}
#define cleanup_batch __attribute__((cleanup(batch_close)))

/* pcs: the batch's prepared claims, filled for the claims that succeed. */
static int prepare_one(const struct claim_batch *b, size_t i, void *pcs, struct error *err)
{
    const struct dra_claim_ref *c = &b->claims[i];
    struct prepared_claim *pc = &((struct prepared_claim *)pcs)[i];
    if (prepare_claim(b->mc->svc->st, c->ns, c->name, c->uid, pc, err) != 0)
        return -1;
    LOG_V(2, "prepared claim %s/%s (uid %s): %zu device(s)", c->ns, c->name, c->uid, pc->n_devices);
    return 0;
}

static int unprepare_one(const struct claim_batch *b, size_t i, void *unused, struct error *err)
{
    (void)unused;
    const struct dra_claim_ref *c = &b->claims[i];
    if (unprepare_claim(b->mc->svc->st, c->ns, c->name, c->uid, err) != 0)
        return -1;
    LOG_V(2, "unprepared claim %s/%s (uid %s)", c->ns, c->name, c->uid);
    return 0;
}

static void prepare(void *ctx, const ProtobufCMessage *req, struct rpc_reply *reply)
{
    cleanup_batch struct claim_batch b = {0};
    if (batch_open(&b, "NodePrepareResources", ctx, req, reply) < 0)
        return;
    cleanup_free struct dra_prepare_result *res = xcalloc(b.n, sizeof(*res));
    cleanup_free struct prepared_claim *pcs = xcalloc(b.n, sizeof(*pcs));
    batch_run(&b, prepare_one, pcs);
    for (size_t i = 0; i < b.n; i++)
        res[i] = (struct dra_prepare_result){
            .uid = b.claims[i].uid, .claim = b.errors[i] ? NULL : &pcs[i], .error = b.errors[i]};
    cleanup_free uint8_t *out = NULL;
    size_t len = 0;
    dra_encode_prepare_response(b.mc->api, res, b.n, &out, &len, NULL);
    batch_reply(&b, reply, out, len);
    for (size_t i = 0; i < b.n; i++)
        if (res[i].claim)
            prepared_claim_free(&pcs[i]);
}

static void unprepare(void *ctx, const ProtobufCMessage *req, struct rpc_reply *reply)
{
    cleanup_batch struct claim_batch b = {0};
    if (batch_open(&b, "NodeUnprepareResources", ctx, req, reply) < 0)
        return;
    cleanup_free struct dra_unprepare_result *res = xcalloc(b.n, sizeof(*res));
    batch_run(&b, unprepare_one, NULL);
    for (size_t i = 0; i < b.n; i++)
        res[i] = (struct dra_unprepare_result){.uid = b.claims[i].uid, .error = b.errors[i]};
    cleanup_free uint8_t *out = NULL;
    size_t len = 0;
    dra_encode_unprepare_response(b.mc->api, res, b.n, &out, &len, NULL);
    batch_reply(&b, reply, out, len);
}

/* What prepares and unprepares leave for after their answers starts now. */
static void after_answer(void *ctx)
{
    const struct dra_method_ctx *mc = ctx;
    prepare_after_answer(mc->svc->st);
}

void dra_service_set_unprepare_may_wait(struct dra_service *svc)
{
    svc->unprepare_may_wait = true;
}

void dra_service_set_observer(struct dra_service *svc, dra_claim_observer fn, void *ctx)
{
    svc->observe = fn;
    svc->observe_ctx = ctx;
}

struct dra_service *dra_service_new(struct prepare_state *st, struct error *err)
{
    if (st == NULL)
        return error_set(err, "DRA service: no prepare state"), NULL;
    struct dra_service *svc = xcalloc(1, sizeof(*svc));
    svc->st = st;
    svc->v1 = (struct dra_method_ctx){svc, DRA_API_V1};
    svc->v1beta1 = (struct dra_method_ctx){svc, DRA_API_V1BETA1};
    return svc;
}

/* The prepare and unprepare methods of one API version, at out[0] and out[1]. */
static void api_methods(struct dra_method_ctx *mc, const char *prepare_path,
                        const char *unprepare_path, struct rpc_method out[2])
{
    out[0] = (struct rpc_method){.path = prepare_path,
                                 .request = dra_prepare_request_type(mc->api),
                                 .unary = prepare,
                                 .after_reply = after_answer,
                                 .ctx = mc};
    out[1] = (struct rpc_method){
        .path = unprepare_path,
        .request = dra_unprepare_request_type(mc->api),
        .unary = unprepare,
        .after_reply = after_answer,
        .on_poller = !mc->svc->unprepare_may_wait, /* local files only, no API call */
        .ctx = mc};
}

void dra_service_methods(struct dra_service *svc, struct rpc_method out[DRA_SERVICE_METHODS])
{
    _Static_assert(DRA_SERVICE_METHODS == 4, "two methods for each of two API versions");
    api_methods(&svc->v1, DRA_V1_PREPARE, DRA_V1_UNPREPARE, out);
    api_methods(&svc->v1beta1, DRA_V1BETA1_PREPARE, DRA_V1BETA1_UNPREPARE, out + 2);
}

int dra_service_register(struct dra_service *svc, struct rpc_server *srv, struct error *err)
{
    struct rpc_method methods[DRA_SERVICE_METHODS];
    dra_service_methods(svc, methods);
    return rpc_server_add_methods(srv, methods, DRA_SERVICE_METHODS, err);
}

void dra_service_free(struct dra_service *svc)
{
    free(svc);
}
