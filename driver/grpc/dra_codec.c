// SPDX-License-Identifier: Apache-2.0
/* One codec for both DRA node API versions.
 *
 * v1 and v1beta1 are the same messages with the same field numbers; the only
 * difference is Device.share_id (field 5), which exists in v1 alone (see
 * proto/dra_v1.proto and proto/dra_v1beta1.proto).  So:
 *
 *  - Requests are decoded by the rpc server with each method's own request
 *    descriptor (v1beta1 methods with the v1beta1 one, so the method table
 *    says what each path accepts and a message of the other version is
 *    refused, not misread).  The claims are read through the field
 *    descriptors by field number, which both versions share, so one reader
 *    serves both.
 *  - Answers are built with the v1 generated types for both versions.  For a
 *    v1beta1 answer share_id is left unset: protobuf-c then writes no field
 *    5, and a v1 message without field 5 is byte for byte a valid v1beta1
 *    message.  The unit tests decode such answers with the v1beta1
 *    descriptors and check field 5 is absent. */
#include "dra_codec.h"

#include <stdlib.h>
#include <string.h>

#include "proto/dra_v1.pb-c.h"
#include "proto/dra_v1beta1.pb-c.h"
#include "grow.h"
#include "utf8.h"
#include "xalloc.h"

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse PrepareResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse__ClaimsEntry
    PrepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse ClaimResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device Device;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse UnprepareResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse__ClaimsEntry
    UnprepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourceResponse UnclaimResp;

/* Field numbers of the requests, the same in both versions. */
enum {
    REQUEST_CLAIMS = 1, /* Node{Prepare,Unprepare}ResourcesRequest: repeated Claim */
    CLAIM_NAMESPACE = 1,
    CLAIM_UID = 2,
    CLAIM_NAME = 3,
};

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

/* Where field `number` of a decoded message lives. */
static const void *field_at(const ProtobufCMessage *m, unsigned number, size_t *count)
{
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field(m->descriptor, number);
    if (count != NULL)
        *count = *(const size_t *)((const char *)m + f->quantifier_offset);
    return (const char *)m + f->offset;
}

static const char *string_field(const ProtobufCMessage *m, unsigned number)
{
    return *(char *const *)field_at(m, number, NULL);
}

int dra_request_claims(enum dra_api api, const ProtobufCMessage *req, struct dra_claim_ref **claims,
                       size_t *n, struct error *err)
{
    const ProtobufCMessageDescriptor *d = req->descriptor;
    if (d != dra_prepare_request_type(api) && d != dra_unprepare_request_type(api))
        return error_set(err, "%s is not a DRA %s request", d->name,
                         api == DRA_API_V1 ? "v1" : "v1beta1");
    size_t count;
    ProtobufCMessage *const *list =
        *(ProtobufCMessage *const *const *)field_at(req, REQUEST_CLAIMS, &count);
    *claims = NULL;
    *n = count;
    if (count == 0)
        return 0;
    struct dra_claim_ref *out = xcalloc(count, sizeof(*out));
    for (size_t i = 0; i < count; i++)
        out[i] = (struct dra_claim_ref){string_field(list[i], CLAIM_NAMESPACE),
                                        string_field(list[i], CLAIM_NAME),
                                        string_field(list[i], CLAIM_UID)};
    *claims = out;
    return 0;
}
/* Everything an encoder allocates, freed in one go after packing. */
struct arena {
    void **ptrs;
    size_t n, cap;
};

static void *arena_add(struct arena *a, void *p)
{
    GROW(a->ptrs, a->cap, a->n + 1);
    a->ptrs[a->n++] = p;
    return p;
}

static void *arena_calloc(struct arena *a, size_t n, size_t size)
{
    return arena_add(a, xcalloc(n, size));
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

static void pack(const ProtobufCMessage *m, uint8_t **out, size_t *len)
{
    *len = protobuf_c_message_get_packed_size(m);
    *out = xmalloc(*len);
    protobuf_c_message_pack(m, *out);
}

/* Builds the Device list of one claim; share_id only for v1 (see the top). */
static Device **devices(struct arena *a, enum dra_api api, const struct prepared_claim *pc)
{
    Device **devs = arena_calloc(a, pc->n_devices, sizeof(*devs));
    Device *d = arena_calloc(a, pc->n_devices, sizeof(*d));
    for (size_t i = 0; i < pc->n_devices; i++) {
        const struct prepared_device *p = &pc->devices[i];
        k8s__io__kubelet__pkg__apis__dra__v1__device__init(&d[i]);
        d[i].n_request_names = p->n_request_names;
        d[i].request_names = p->request_names;
        d[i].pool_name = p->pool_name;
        d[i].device_name = p->device_name;
        d[i].n_cdi_device_ids = p->n_cdi_device_ids;
        d[i].cdi_device_ids = p->cdi_device_ids;
        if (api == DRA_API_V1 && p->share_id)
            d[i].share_id = p->share_id;
        devs[i] = &d[i];
    }
    return devs;
}

static void encode_prepare(struct arena *a, enum dra_api api, const struct dra_prepare_result *res,
                           size_t n, uint8_t **out, size_t *len)
{
    PrepareResp resp = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_RESPONSE__INIT;
    PrepareEntry **entries = arena_calloc(a, n, sizeof(*entries));
    PrepareEntry *e = arena_calloc(a, n, sizeof(*e));
    ClaimResp *c = arena_calloc(a, n, sizeof(*c));
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
            c[i].devices = devices(a, api, res[i].claim);
        }
        entries[i] = &e[i];
    }
    resp.n_claims = n;
    resp.claims = entries;
    pack(&resp.base, out, len);
}

static void encode_unprepare(struct arena *a, const struct dra_unprepare_result *res, size_t n,
                             uint8_t **out, size_t *len)
{
    UnprepareResp resp =
        K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_RESPONSE__INIT;
    UnprepareEntry **entries = arena_calloc(a, n, sizeof(*entries));
    UnprepareEntry *e = arena_calloc(a, n, sizeof(*e));
    UnclaimResp *c = arena_calloc(a, n, sizeof(*c));
    for (size_t i = 0; i < n; i++) {
        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__claims_entry__init(
            &e[i]);
        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resource_response__init(&c[i]);
        e[i].key = (char *)res[i].uid;
        e[i].value = &c[i];
        if (res[i].error)
            c[i].error = arena_text(a, res[i].error);
        entries[i] = &e[i];
    }
    resp.n_claims = n;
    resp.claims = entries;
    pack(&resp.base, out, len);
}

int dra_encode_prepare_response(enum dra_api api, const struct dra_prepare_result *res, size_t n,
                                uint8_t **out, size_t *len, struct error *err)
{
    (void)err; // nothing but memory can fail, and that is fatal
    struct arena a = {0};
    encode_prepare(&a, api, res, n, out, len);
    arena_free(&a);
    return 0;
}

/* The unprepare answer has no version-specific field: one encoding for both. */
int dra_encode_unprepare_response(enum dra_api api, const struct dra_unprepare_result *res,
                                  size_t n, uint8_t **out, size_t *len, struct error *err)
{
    (void)api, (void)err; // nothing but memory can fail, and that is fatal
    struct arena a = {0};
    encode_unprepare(&a, res, n, out, len);
    arena_free(&a);
    return 0;
}
