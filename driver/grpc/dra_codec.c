#include "dra_codec.h"

#include <stdlib.h>
#include <string.h>

#include "proto/dra_v1.pb-c.h"
#include "proto/dra_v1beta1.pb-c.h"
#include "utf8.h"

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest V1PrepareReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest V1UnprepareReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim V1Claim;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse V1PrepareResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse__ClaimsEntry
    V1PrepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse V1ClaimResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device V1Device;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse V1UnprepareResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse__ClaimsEntry
    V1UnprepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourceResponse V1UnclaimResp;

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1beta1__NodePrepareResourcesRequest B1PrepareReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1beta1__NodeUnprepareResourcesRequest B1UnprepareReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1beta1__Claim B1Claim;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1beta1__NodePrepareResourcesResponse B1PrepareResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1beta1__NodePrepareResourcesResponse__ClaimsEntry
    B1PrepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1beta1__NodePrepareResourceResponse B1ClaimResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1beta1__Device B1Device;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1beta1__NodeUnprepareResourcesResponse B1UnprepareResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1beta1__NodeUnprepareResourcesResponse__ClaimsEntry
    B1UnprepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1beta1__NodeUnprepareResourceResponse B1UnclaimResp;

const ProtobufCMessageDescriptor *dra_prepare_request_type(enum dra_api api)
{
    return api == DRA_API_V1
               ? &k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__descriptor
               : &k8s__io__kubelet__pkg__apis__dra__v1beta1__node_prepare_resources_request__descriptor;
}

const ProtobufCMessageDescriptor *dra_unprepare_request_type(enum dra_api api)
{
    return api == DRA_API_V1
               ? &k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__descriptor
               : &k8s__io__kubelet__pkg__apis__dra__v1beta1__node_unprepare_resources_request__descriptor;
}

int dra_request_claims(enum dra_api api, const ProtobufCMessage *req, struct dra_claim_ref **claims,
                       size_t *n, struct error *err)
{
    const ProtobufCMessageDescriptor *d = req->descriptor;
    size_t count = 0;
    void **list = NULL;
    /* Both request types of a version share the shape {n_claims, claims}. */
    if (d == dra_prepare_request_type(api)) {
        if (api == DRA_API_V1) {
            count = ((const V1PrepareReq *)req)->n_claims;
            list = (void **)((const V1PrepareReq *)req)->claims;
        } else {
            count = ((const B1PrepareReq *)req)->n_claims;
            list = (void **)((const B1PrepareReq *)req)->claims;
        }
    } else if (d == dra_unprepare_request_type(api)) {
        if (api == DRA_API_V1) {
            count = ((const V1UnprepareReq *)req)->n_claims;
            list = (void **)((const V1UnprepareReq *)req)->claims;
        } else {
            count = ((const B1UnprepareReq *)req)->n_claims;
            list = (void **)((const B1UnprepareReq *)req)->claims;
        }
    } else {
        return error_set(err, "%s is not a DRA %s request", d->name,
                         api == DRA_API_V1 ? "v1" : "v1beta1");
    }
    *claims = NULL;
    *n = count;
    if (count == 0)
        return 0;
    struct dra_claim_ref *out = calloc(count, sizeof(*out));
    if (out == NULL)
        return error_set(err, "out of memory");
    for (size_t i = 0; i < count; i++) {
        if (api == DRA_API_V1) {
            const V1Claim *c = list[i];
            out[i] = (struct dra_claim_ref){c->namespace_, c->name, c->uid};
        } else {
            const B1Claim *c = list[i];
            out[i] = (struct dra_claim_ref){c->namespace_, c->name, c->uid};
        }
    }
    *claims = out;
    return 0;
}

/* Everything an encoder allocates, freed in one go after packing. */
struct arena {
    void **ptrs;
    size_t n, cap;
    bool oom;
};

static void *arena_add(struct arena *a, void *p)
{
    if (p == NULL) {
        a->oom = true;
        return NULL;
    }
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 32;
        void **ptrs = realloc(a->ptrs, cap * sizeof(*ptrs));
        if (ptrs == NULL) {
            free(p);
            a->oom = true;
            return NULL;
        }
        a->ptrs = ptrs;
        a->cap = cap;
    }
    a->ptrs[a->n++] = p;
    return p;
}

static void *arena_calloc(struct arena *a, size_t n, size_t size)
{
    return arena_add(a, calloc(n ? n : 1, size));
}

/* Free text for a string field: valid UTF-8 or cleaned. */
static char *arena_text(struct arena *a, const char *s)
{
    if (utf8_valid(s, strlen(s)))
        return (char *)s;
    return arena_add(a, utf8_sanitize(s));
}

static void arena_free(struct arena *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->ptrs[i]);
    free(a->ptrs);
}

static int pack(const ProtobufCMessage *m, uint8_t **out, size_t *len, struct error *err)
{
    *len = protobuf_c_message_get_packed_size(m);
    *out = malloc(*len ? *len : 1);
    if (*out == NULL)
        return error_set(err, "out of memory");
    protobuf_c_message_pack(m, *out);
    return 0;
}

/* Builds the Device list of one claim for v1 (with share_id). */
static V1Device **v1_devices(struct arena *a, const struct prepared_claim *pc)
{
    V1Device **devs = arena_calloc(a, pc->n_devices, sizeof(*devs));
    V1Device *d = arena_calloc(a, pc->n_devices, sizeof(*d));
    if (a->oom)
        return NULL;
    for (size_t i = 0; i < pc->n_devices; i++) {
        const struct prepared_device *p = &pc->devices[i];
        k8s__io__kubelet__pkg__apis__dra__v1__device__init(&d[i]);
        d[i].n_request_names = p->n_request_names;
        d[i].request_names = p->request_names;
        d[i].pool_name = p->pool_name;
        d[i].device_name = p->device_name;
        d[i].n_cdi_device_ids = p->n_cdi_device_ids;
        d[i].cdi_device_ids = p->cdi_device_ids;
        if (p->share_id)
            d[i].share_id = p->share_id;
        devs[i] = &d[i];
    }
    return devs;
}

static B1Device **b1_devices(struct arena *a, const struct prepared_claim *pc)
{
    B1Device **devs = arena_calloc(a, pc->n_devices, sizeof(*devs));
    B1Device *d = arena_calloc(a, pc->n_devices, sizeof(*d));
    if (a->oom)
        return NULL;
    for (size_t i = 0; i < pc->n_devices; i++) {
        const struct prepared_device *p = &pc->devices[i];
        k8s__io__kubelet__pkg__apis__dra__v1beta1__device__init(&d[i]);
        d[i].n_request_names = p->n_request_names;
        d[i].request_names = p->request_names;
        d[i].pool_name = p->pool_name;
        d[i].device_name = p->device_name;
        d[i].n_cdi_device_ids = p->n_cdi_device_ids;
        d[i].cdi_device_ids = p->cdi_device_ids;
        devs[i] = &d[i];
    }
    return devs;
}

static int encode_prepare_v1(struct arena *a, const struct dra_prepare_result *res, size_t n,
                             uint8_t **out, size_t *len, struct error *err)
{
    V1PrepareResp resp =
        K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_RESPONSE__INIT;
    V1PrepareEntry **entries = arena_calloc(a, n, sizeof(*entries));
    V1PrepareEntry *e = arena_calloc(a, n, sizeof(*e));
    V1ClaimResp *c = arena_calloc(a, n, sizeof(*c));
    if (a->oom)
        return error_set(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__claims_entry__init(
            &e[i]);
        k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resource_response__init(&c[i]);
        e[i].key = (char *)res[i].uid;
        e[i].value = &c[i];
        if (res[i].error) {
            c[i].error = arena_text(a, res[i].error);
        } else if (res[i].claim && res[i].claim->n_devices) {
            c[i].n_devices = res[i].claim->n_devices;
            c[i].devices = v1_devices(a, res[i].claim);
        }
        entries[i] = &e[i];
    }
    if (a->oom)
        return error_set(err, "out of memory");
    resp.n_claims = n;
    resp.claims = entries;
    return pack(&resp.base, out, len, err);
}

static int encode_prepare_b1(struct arena *a, const struct dra_prepare_result *res, size_t n,
                             uint8_t **out, size_t *len, struct error *err)
{
    B1PrepareResp resp =
        K8S__IO__KUBELET__PKG__APIS__DRA__V1BETA1__NODE_PREPARE_RESOURCES_RESPONSE__INIT;
    B1PrepareEntry **entries = arena_calloc(a, n, sizeof(*entries));
    B1PrepareEntry *e = arena_calloc(a, n, sizeof(*e));
    B1ClaimResp *c = arena_calloc(a, n, sizeof(*c));
    if (a->oom)
        return error_set(err, "out of memory");
    for (size_t i = 0; i < n; i++) {
        k8s__io__kubelet__pkg__apis__dra__v1beta1__node_prepare_resources_response__claims_entry__init(
            &e[i]);
        k8s__io__kubelet__pkg__apis__dra__v1beta1__node_prepare_resource_response__init(&c[i]);
        e[i].key = (char *)res[i].uid;
        e[i].value = &c[i];
        if (res[i].error) {
            c[i].error = arena_text(a, res[i].error);
        } else if (res[i].claim && res[i].claim->n_devices) {
            c[i].n_devices = res[i].claim->n_devices;
            c[i].devices = b1_devices(a, res[i].claim);
        }
        entries[i] = &e[i];
    }
    if (a->oom)
        return error_set(err, "out of memory");
    resp.n_claims = n;
    resp.claims = entries;
    return pack(&resp.base, out, len, err);
}

int dra_encode_prepare_response(enum dra_api api, const struct dra_prepare_result *res, size_t n,
                                uint8_t **out, size_t *len, struct error *err)
{
    struct arena a = {0};
    int rc = api == DRA_API_V1 ? encode_prepare_v1(&a, res, n, out, len, err)
                               : encode_prepare_b1(&a, res, n, out, len, err);
    arena_free(&a);
    return rc;
}

int dra_encode_unprepare_response(enum dra_api api, const struct dra_unprepare_result *res,
                                  size_t n, uint8_t **out, size_t *len, struct error *err)
{
    struct arena a = {0};
    int rc = -1;
    if (api == DRA_API_V1) {
        V1UnprepareResp resp =
            K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_RESPONSE__INIT;
        V1UnprepareEntry **entries = arena_calloc(&a, n, sizeof(*entries));
        V1UnprepareEntry *e = arena_calloc(&a, n, sizeof(*e));
        V1UnclaimResp *c = arena_calloc(&a, n, sizeof(*c));
        for (size_t i = 0; !a.oom && i < n; i++) {
            k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__claims_entry__init(
                &e[i]);
            k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resource_response__init(&c[i]);
            e[i].key = (char *)res[i].uid;
            e[i].value = &c[i];
            if (res[i].error)
                c[i].error = arena_text(&a, res[i].error);
            entries[i] = &e[i];
        }
        resp.n_claims = n;
        resp.claims = entries;
        rc = a.oom ? error_set(err, "out of memory") : pack(&resp.base, out, len, err);
    } else {
        B1UnprepareResp resp =
            K8S__IO__KUBELET__PKG__APIS__DRA__V1BETA1__NODE_UNPREPARE_RESOURCES_RESPONSE__INIT;
        B1UnprepareEntry **entries = arena_calloc(&a, n, sizeof(*entries));
        B1UnprepareEntry *e = arena_calloc(&a, n, sizeof(*e));
        B1UnclaimResp *c = arena_calloc(&a, n, sizeof(*c));
        for (size_t i = 0; !a.oom && i < n; i++) {
            k8s__io__kubelet__pkg__apis__dra__v1beta1__node_unprepare_resources_response__claims_entry__init(
                &e[i]);
            k8s__io__kubelet__pkg__apis__dra__v1beta1__node_unprepare_resource_response__init(
                &c[i]);
            e[i].key = (char *)res[i].uid;
            e[i].value = &c[i];
            if (res[i].error)
                c[i].error = arena_text(&a, res[i].error);
            entries[i] = &e[i];
        }
        resp.n_claims = n;
        resp.claims = entries;
        rc = a.oom ? error_set(err, "out of memory") : pack(&resp.base, out, len, err);
    }
    arena_free(&a);
    return rc;
}
