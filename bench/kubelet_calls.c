// SPDX-License-Identifier: Apache-2.0
#include "kubelet_calls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proc.h"
#include "proto/dra_v1.pb-c.h"
#include "proto/pluginregistration.pb-c.h"

#define GET_INFO_TIMEOUT 1.0
#define NOTIFY_TIMEOUT   5.0
#define DRA_TIMEOUT      45.0

#define PREPARE_METHOD   "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
#define UNPREPARE_METHOD "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources"

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim V1Claim;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest V1PrepareReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest V1UnprepareReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse V1PrepareResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse V1UnprepareResp;

static int notify(struct rpc_client *c, const char *sock, struct error *err)
{
    Pluginregistration__RegistrationStatus st = PLUGINREGISTRATION__REGISTRATION_STATUS__INIT;
    st.plugin_registered = 1;
    st.error = "";
    uint8_t buf[64];
    size_t len = pluginregistration__registration_status__pack(&st, buf);
    struct rpc_answer a;
    if (rpc_client_call(c, "/pluginregistration.Registration/NotifyRegistrationStatus", buf, len,
                        NOTIFY_TIMEOUT, &a, err) < 0)
        return error_prefix(err, "NotifyRegistrationStatus on %s", sock);
    int rc = 0;
    if (a.status != GRPC_STATUS_OK)
        rc = error_set(err, "NotifyRegistrationStatus on %s: %s: %s", sock,
                       wire_status_name(a.status), a.details ? a.details : "");
    rpc_answer_free(&a);
    return rc;
}

int kubelet_register(const char *reg_socket, double timeout_s, struct error *err)
{
    struct rpc_client *c = rpc_client_new(reg_socket, err);
    if (c == NULL)
        return -1;
    int64_t end = now_mono_ns() + (int64_t)(timeout_s * 1e9);
    int rc = -1;
    for (;;) {
        struct rpc_answer a;
        if (rpc_client_call(c, "/pluginregistration.Registration/GetInfo", "", 0, GET_INFO_TIMEOUT,
                            &a, err) < 0)
            break;
        if (a.status == GRPC_STATUS_OK) {
            Pluginregistration__PluginInfo *info =
                pluginregistration__plugin_info__unpack(NULL, a.len, a.data);
            rpc_answer_free(&a);
            if (info == NULL) {
                error_set(err, "GetInfo on %s: the answer is not a PluginInfo", reg_socket);
                break;
            }
            bool dra = !strcmp(info->type, "DRAPlugin");
            if (!dra)
                error_set(err, "GetInfo on %s: type %s, not DRAPlugin", reg_socket, info->type);
            pluginregistration__plugin_info__free_unpacked(info, NULL);
            if (dra)
                rc = notify(c, reg_socket, err);
            break;
        }
        /* The socket file exists a moment before the server accepts: retry
         * "not there yet" quickly, like the kubelet's watcher retries. */
        bool retry = a.status == GRPC_STATUS_UNAVAILABLE && now_mono_ns() < end;
        if (!retry)
            error_set(err, "GetInfo on %s: %s: %s", reg_socket, wire_status_name(a.status),
                      a.details ? a.details : "");
        rpc_answer_free(&a);
        if (!retry)
            break;
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    rpc_client_free(c);
    return rc;
}

int dra_claim_init(struct dra_claim *c, const char *ns, const char *name, const char *uid,
                   size_t n_devices, struct error *err)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->ns, sizeof(c->ns), "%s", ns);
    snprintf(c->name, sizeof(c->name), "%s", name);
    snprintf(c->uid, sizeof(c->uid), "%s", uid);
    c->n_devices = n_devices;
    V1Claim cl = K8S__IO__KUBELET__PKG__APIS__DRA__V1__CLAIM__INIT;
    cl.namespace_ = c->ns;
    cl.name = c->name;
    cl.uid = c->uid;
    V1Claim *list[1] = {&cl};
    V1PrepareReq p = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_REQUEST__INIT;
    V1UnprepareReq u = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_REQUEST__INIT;
    p.n_claims = u.n_claims = 1;
    p.claims = u.claims = list;
    c->prepare_len = protobuf_c_message_get_packed_size(&p.base);
    c->unprepare_len = protobuf_c_message_get_packed_size(&u.base);
    c->prepare = malloc(c->prepare_len);
    c->unprepare = malloc(c->unprepare_len);
    if (c->prepare == NULL || c->unprepare == NULL) {
        dra_claim_free(c);
        return error_set(err, "out of memory");
    }
    protobuf_c_message_pack(&p.base, c->prepare);
    protobuf_c_message_pack(&u.base, c->unprepare);
    return 0;
}

void dra_claim_free(struct dra_claim *c)
{
    free(c->prepare);
    free(c->unprepare);
    c->prepare = c->unprepare = NULL;
}

/* The call itself; a->data holds the OK answer. */
static int call(struct rpc_client *rc, const char *method, const struct dra_claim *c,
                const uint8_t *req, size_t len, struct rpc_answer *a, struct error *err)
{
    if (rpc_client_call(rc, method, req, len, DRA_TIMEOUT, a, err) < 0)
        return error_prefix(err, "claim %s/%s", c->ns, c->name);
    if (a->status != GRPC_STATUS_OK) {
        error_set(err, "%s of claim %s/%s: %s: %s", method, c->ns, c->name,
                  wire_status_name(a->status), a->details ? a->details : "");
        rpc_answer_free(a);
        return -1;
    }
    return 0;
}

int dra_prepare(struct rpc_client *rc, const struct dra_claim *c, struct error *err)
{
    struct rpc_answer a;
    if (call(rc, PREPARE_METHOD, c, c->prepare, c->prepare_len, &a, err) < 0)
        return -1;
    int ret = -1;
    V1PrepareResp *r =
        k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__unpack(NULL, a.len,
                                                                                      a.data);
    if (r == NULL) {
        error_set(err, "prepare of claim %s/%s: the answer does not decode", c->ns, c->name);
    } else if (r->n_claims != 1 || strcmp(r->claims[0]->key, c->uid) ||
               r->claims[0]->value == NULL) {
        error_set(err, "prepare of claim %s/%s: the answer does not have exactly this claim", c->ns,
                  c->name);
    } else if (r->claims[0]->value->error[0]) {
        error_set(err, "prepare of claim %s/%s: %s", c->ns, c->name, r->claims[0]->value->error);
    } else if (r->claims[0]->value->n_devices != c->n_devices) {
        error_set(err, "prepare of claim %s/%s: %zu devices, want %zu", c->ns, c->name,
                  r->claims[0]->value->n_devices, c->n_devices);
    } else {
        ret = 0;
    }
    if (r != NULL)
        k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__free_unpacked(r,
                                                                                             NULL);
    rpc_answer_free(&a);
    return ret;
}

int dra_unprepare(struct rpc_client *rc, const struct dra_claim *c, struct error *err)
{
    struct rpc_answer a;
    if (call(rc, UNPREPARE_METHOD, c, c->unprepare, c->unprepare_len, &a, err) < 0)
        return -1;
    int ret = -1;
    V1UnprepareResp *r =
        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__unpack(NULL, a.len,
                                                                                        a.data);
    if (r == NULL)
        error_set(err, "unprepare of claim %s/%s: the answer does not decode", c->ns, c->name);
    else if (r->n_claims != 1 || strcmp(r->claims[0]->key, c->uid))
        error_set(err, "unprepare of claim %s/%s: the answer does not have exactly this claim",
                  c->ns, c->name);
    else if (r->claims[0]->value && r->claims[0]->value->error[0])
        error_set(err, "unprepare of claim %s/%s: %s", c->ns, c->name, r->claims[0]->value->error);
    else
        ret = 0;
    if (r)
        k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__free_unpacked(
            r, NULL);
    rpc_answer_free(&a);
    return ret;
}
