#include "dra_service.h"

#include <stdlib.h>
#include <string.h>

#include "driver/grpc/dra_codec.h"
#include "log.h"
#include "utf8.h"

struct dra_service {
    struct prepare_state *st;
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

/* True when claims[i]'s uid already appeared earlier in the request: the
 * answer is a map, so a repeated claim is prepared and answered once. */
static bool seen_before(const struct dra_claim_ref *claims, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (!strcmp(claims[j].uid, claims[i].uid))
            return true;
    return false;
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

static void prepare(void *ctx, const ProtobufCMessage *req, struct rpc_reply *reply)
{
    struct dra_method_ctx *mc = ctx;
    struct error err;
    struct dra_claim_ref *claims = NULL;
    size_t n = 0, nres = 0;
    struct dra_prepare_result *res = NULL;
    struct prepared_claim *pcs = NULL;
    char **errs = NULL;
    uint8_t *out = NULL;
    size_t len;

    if (dra_request_claims(mc->api, req, &claims, &n, &err) < 0 ||
        check_claims(claims, n, &err) < 0) {
        rpc_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "NodePrepareResources: %s", err.msg);
        goto out;
    }
    res = calloc(n ? n : 1, sizeof(*res));
    pcs = calloc(n ? n : 1, sizeof(*pcs));
    errs = calloc(n ? n : 1, sizeof(*errs));
    if (!res || !pcs || !errs) {
        rpc_reply_error(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        goto out;
    }
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        const struct dra_claim_ref *c = &claims[i];
        if (seen_before(claims, i))
            continue;
        struct dra_prepare_result *r = &res[nres++];
        r->uid = c->uid;
        const char *missing = missing_field(c);
        if (missing) {
            error_set(&err, "claim %s/%s (uid %s): %s is empty", c->ns, c->name, c->uid, missing);
        } else if (prepare_claim(mc->svc->st, c->ns, c->name, c->uid, &pcs[i], &err) == 0) {
            r->claim = &pcs[i];
            LOG_V(2, "prepared claim %s/%s (uid %s): %zu device(s)", c->ns, c->name, c->uid,
                  pcs[i].n_devices);
            continue;
        }
        errs[i] = strdup(err.msg);
        r->error = errs[i] ? errs[i] : "out of memory";
        failed++;
        LOG_E("NodePrepareResources (%s): %s", api_name(mc->api), err.msg);
    }
    if (dra_encode_prepare_response(mc->api, res, nres, &out, &len, &err) < 0) {
        rpc_reply_error(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "NodePrepareResources: %s", err.msg);
        goto out;
    }
    rpc_reply_packed(reply, out, len);
    LOG_V(1, "NodePrepareResources (%s): %zu claim(s), %zu failed", api_name(mc->api), nres,
          failed);
out:
    for (size_t k = 0; res && k < nres; k++)
        if (res[k].claim)
            prepared_claim_free(&pcs[res[k].claim - pcs]);
    for (size_t i = 0; errs && i < n; i++)
        free(errs[i]);
    free(out);
    free(errs);
    free(pcs);
    free(res);
    free(claims);
}

static void unprepare(void *ctx, const ProtobufCMessage *req, struct rpc_reply *reply)
{
    struct dra_method_ctx *mc = ctx;
    struct error err;
    struct dra_claim_ref *claims = NULL;
    size_t n = 0, nres = 0;
    struct dra_unprepare_result *res = NULL;
    char **errs = NULL;
    uint8_t *out = NULL;
    size_t len;

    if (dra_request_claims(mc->api, req, &claims, &n, &err) < 0 ||
        check_claims(claims, n, &err) < 0) {
        rpc_reply_error(reply, GRPC_STATUS_INVALID_ARGUMENT, "NodeUnprepareResources: %s", err.msg);
        goto out;
    }
    res = calloc(n ? n : 1, sizeof(*res));
    errs = calloc(n ? n : 1, sizeof(*errs));
    if (!res || !errs) {
        rpc_reply_error(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        goto out;
    }
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        const struct dra_claim_ref *c = &claims[i];
        if (seen_before(claims, i))
            continue;
        struct dra_unprepare_result *r = &res[nres++];
        r->uid = c->uid;
        const char *missing = missing_field(c);
        if (missing) {
            error_set(&err, "claim %s/%s (uid %s): %s is empty", c->ns, c->name, c->uid, missing);
        } else if (unprepare_claim(mc->svc->st, c->ns, c->name, c->uid, &err) == 0) {
            LOG_V(2, "unprepared claim %s/%s (uid %s)", c->ns, c->name, c->uid);
            continue;
        }
        errs[i] = strdup(err.msg);
        r->error = errs[i] ? errs[i] : "out of memory";
        failed++;
        LOG_E("NodeUnprepareResources (%s): %s", api_name(mc->api), err.msg);
    }
    if (dra_encode_unprepare_response(mc->api, res, nres, &out, &len, &err) < 0) {
        rpc_reply_error(reply, GRPC_STATUS_RESOURCE_EXHAUSTED, "NodeUnprepareResources: %s",
                        err.msg);
        goto out;
    }
    rpc_reply_packed(reply, out, len);
    LOG_V(1, "NodeUnprepareResources (%s): %zu claim(s), %zu failed", api_name(mc->api), nres,
          failed);
out:
    for (size_t i = 0; errs && i < n; i++)
        free(errs[i]);
    free(out);
    free(errs);
    free(res);
    free(claims);
}

struct dra_service *dra_service_new(struct prepare_state *st, struct error *err)
{
    if (st == NULL)
        return error_set(err, "DRA service: no prepare state"), NULL;
    struct dra_service *svc = calloc(1, sizeof(*svc));
    if (svc == NULL)
        return error_set(err, "out of memory"), NULL;
    svc->st = st;
    svc->v1 = (struct dra_method_ctx){svc, DRA_API_V1};
    svc->v1beta1 = (struct dra_method_ctx){svc, DRA_API_V1BETA1};
    return svc;
}

int dra_service_register(struct dra_service *svc, struct rpc_server *srv, struct error *err)
{
    const struct rpc_method methods[] = {
        {.path = DRA_V1_PREPARE,
         .request = dra_prepare_request_type(DRA_API_V1),
         .unary = prepare,
         .ctx = &svc->v1},
        {.path = DRA_V1_UNPREPARE,
         .request = dra_unprepare_request_type(DRA_API_V1),
         .unary = unprepare,
         .ctx = &svc->v1},
        {.path = DRA_V1BETA1_PREPARE,
         .request = dra_prepare_request_type(DRA_API_V1BETA1),
         .unary = prepare,
         .ctx = &svc->v1beta1},
        {.path = DRA_V1BETA1_UNPREPARE,
         .request = dra_unprepare_request_type(DRA_API_V1BETA1),
         .unary = unprepare,
         .ctx = &svc->v1beta1},
    };
    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
        if (rpc_server_add_method(srv, &methods[i], err) < 0)
            return -1;
    return 0;
}

void dra_service_free(struct dra_service *svc)
{
    free(svc);
}
