// SPDX-License-Identifier: Apache-2.0
/* kubelet-standin prepare / unprepare: NodePrepareResources and
 * NodeUnprepareResources as the kubelet sends them (one call for all claims
 * of a pod, 45 s deadline), on the v1 or v1beta1 service.
 *
 * Text output, one line per device or per claim, in request order:
 *   claim=<uid> pool=<pool> device=<dev> requests=a,b cdi=x,y [share_id=<id>]
 *   claim=<uid> devices=0
 *   claim=<uid> ok                       (unprepare)
 *   claim=<uid> error=<message>
 * --json prints one object: {"api": ..., "claims": [{namespace, name, uid,
 * error | devices: [{pool, device, requests, cdi, share_id}]}]}.
 *
 * Both versions are encoded and decoded with the v1 types: the messages are
 * identical on the wire except Device.share_id (field 5), which only v1 has;
 * a v1beta1 answer that carries it is reported. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "flags.h"
#include "grpc_client.h"
#include "proto/dra_v1.pb-c.h"
#include "standin.h"
#include "xalloc.h"

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim V1Claim;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device V1Device;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest V1PrepareReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest V1UnprepareReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse V1PrepareResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse__ClaimsEntry
    V1PrepareEntry;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse V1UnprepareResp;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesResponse__ClaimsEntry
    V1UnprepareEntry;

enum api { API_V1, API_V1BETA1 };

struct claim_arg {
    char *ns, *name, *uid; /* point into argv copies */
};

struct dev_view {
    const char *pool, *device, *share_id;
    char **requests, **cdi;
    size_t n_requests, n_cdi;
};

/* What the answer said about one claim of the request. */
struct claim_view {
    bool present;
    const char *error; /* "" = none */
    struct dev_view *devs;
    size_t n_devs;
};

struct opts {
    const char *endpoint;
    const char *api;
    const char *timeout;
    bool json;
};

static int parse_api(const char *s, enum api *out)
{
    if (!strcmp(s, "v1") || !strcmp(s, "v1.DRAPlugin"))
        *out = API_V1;
    else if (!strcmp(s, "v1beta1") || !strcmp(s, "v1beta1.DRAPlugin"))
        *out = API_V1BETA1;
    else
        return -1;
    return 0;
}

static const char *method_path(enum api api, bool prepare)
{
    if (api == API_V1)
        return prepare ? "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"
                       : "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources";
    return prepare ? "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodePrepareResources"
                   : "/k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin/NodeUnprepareResources";
}

/* "NS/NAME/UID" -> parts (empty parts allowed: they test the plugin). */
static int parse_claim(char *s, struct claim_arg *c)
{
    char *a = strchr(s, '/');
    char *b = a ? strchr(a + 1, '/') : NULL;
    if (a == NULL || b == NULL || strchr(b + 1, '/'))
        return -1;
    *a = *b = '\0';
    *c = (struct claim_arg){s, a + 1, b + 1};
    return 0;
}

/* Packs the request.  The messages of v1 and v1beta1 are the same on the
 * wire (repeated Claim claims = 1 {namespace = 1, uid = 2, name = 3}), so
 * the v1 types serve both; only the method path differs. */
static uint8_t *pack_request(bool prepare, const struct claim_arg *claims, size_t n, size_t *len)
{
    cleanup_free V1Claim *cs = xcalloc(n, sizeof(*cs));
    cleanup_free V1Claim **ptrs = xcalloc(n, sizeof(*ptrs));
    for (size_t i = 0; i < n; i++) {
        k8s__io__kubelet__pkg__apis__dra__v1__claim__init(&cs[i]);
        cs[i].namespace_ = claims[i].ns;
        cs[i].name = claims[i].name;
        cs[i].uid = claims[i].uid;
        ptrs[i] = &cs[i];
    }
    V1PrepareReq p = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_REQUEST__INIT;
    V1UnprepareReq u = K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_UNPREPARE_RESOURCES_REQUEST__INIT;
    p.n_claims = u.n_claims = n;
    p.claims = u.claims = ptrs;
    const ProtobufCMessage *m = prepare ? &p.base : &u.base;
    *len = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = xmalloc(*len);
    protobuf_c_message_pack(m, buf);
    return buf;
}

static int find_claim(const struct claim_arg *claims, size_t n, const char *uid)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(claims[i].uid, uid))
            return (int)i;
    return -1;
}

/* The view of the request's claim uid, marked present: the answer has an
 * entry for it.  NULL, said on stderr, when uid is not in the request. */
static struct claim_view *answered(const struct claim_arg *claims, size_t n,
                                   struct claim_view *views, const char *uid)
{
    int i = find_claim(claims, n, uid);
    if (i < 0) {
        fprintf(stderr, "kubelet-standin: the answer has claim %s, which is not in the request\n",
                uid);
        return NULL;
    }
    views[i].present = true;
    return &views[i];
}

/* Fills views[] from a decoded prepare answer (v1 types, see pack_request);
 * returns the number of problems: map entries for claims not in the request,
 * and share_id in a v1beta1 answer (that field does not exist there). */
static size_t fill_prepare(enum api api, const V1PrepareResp *r, const struct claim_arg *claims,
                           size_t n, struct claim_view *views)
{
    size_t problems = 0;
    for (size_t e = 0; e < r->n_claims; e++) {
        const V1PrepareEntry *entry = r->claims[e];
        struct claim_view *v = answered(claims, n, views, entry->key);
        problems += v == NULL;
        if (v == NULL || entry->value == NULL)
            continue;
        v->error = entry->value->error;
        v->n_devs = entry->value->n_devices;
        v->devs = xcalloc(v->n_devs, sizeof(*v->devs));
        for (size_t d = 0; d < v->n_devs; d++) {
            const V1Device *dv = entry->value->devices[d];
            if (api == API_V1BETA1 && dv->share_id[0]) {
                fprintf(stderr,
                        "kubelet-standin: claim %s device %s: a v1beta1 answer has share_id "
                        "(field 5), which v1beta1 does not define\n",
                        entry->key, dv->device_name);
                problems++;
            }
            v->devs[d] = (struct dev_view){
                dv->pool_name,      dv->device_name,     dv->share_id,        dv->request_names,
                dv->cdi_device_ids, dv->n_request_names, dv->n_cdi_device_ids};
        }
    }
    return problems;
}

static size_t fill_unprepare(const V1UnprepareResp *r, const struct claim_arg *claims, size_t n,
                             struct claim_view *views)
{
    size_t problems = 0;
    for (size_t e = 0; e < r->n_claims; e++) {
        const V1UnprepareEntry *entry = r->claims[e];
        struct claim_view *v = answered(claims, n, views, entry->key);
        problems += v == NULL;
        if (v != NULL && entry->value != NULL)
            v->error = entry->value->error;
    }
    return problems;
}

static void print_list(char **items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            putchar(',');
        print_oneline(stdout, items[i]);
    }
}

static void print_text(bool prepare, const struct claim_arg *claims, const struct claim_view *views,
                       size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (find_claim(claims, i, claims[i].uid) >= 0)
            continue; /* a repeated uid: answered once */
        const struct claim_view *v = &views[i];
        if (!v->present) {
            printf("claim=%s error=missing from the answer\n", claims[i].uid);
        } else if (v->error && v->error[0]) {
            printf("claim=%s error=", claims[i].uid);
            print_oneline(stdout, v->error);
            putchar('\n');
        } else if (!prepare) {
            printf("claim=%s ok\n", claims[i].uid);
        } else if (v->n_devs == 0) {
            printf("claim=%s devices=0\n", claims[i].uid);
        } else {
            for (size_t d = 0; d < v->n_devs; d++) {
                const struct dev_view *dv = &v->devs[d];
                printf("claim=%s pool=", claims[i].uid);
                print_oneline(stdout, dv->pool);
                printf(" device=");
                print_oneline(stdout, dv->device);
                printf(" requests=");
                print_list(dv->requests, dv->n_requests);
                printf(" cdi=");
                print_list(dv->cdi, dv->n_cdi);
                if (dv->share_id && dv->share_id[0]) {
                    printf(" share_id=");
                    print_oneline(stdout, dv->share_id);
                }
                putchar('\n');
            }
        }
    }
}

static json_t *json_strings(char **items, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(items[i]));
    return a;
}

static void print_json(enum api api, bool prepare, const struct claim_arg *claims,
                       const struct claim_view *views, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        if (find_claim(claims, i, claims[i].uid) >= 0)
            continue;
        const struct claim_view *v = &views[i];
        json_t *c = json_pack("{s:s, s:s, s:s}", "namespace", claims[i].ns, "name", claims[i].name,
                              "uid", claims[i].uid);
        if (!v->present)
            json_object_set_new(c, "error", json_string("missing from the answer"));
        else if (v->error && v->error[0])
            json_object_set_new(c, "error", json_string(v->error));
        else if (prepare) {
            json_t *devs = json_array();
            for (size_t d = 0; d < v->n_devs; d++) {
                const struct dev_view *dv = &v->devs[d];
                json_t *o =
                    json_pack("{s:s, s:s, s:o, s:o}", "pool", dv->pool, "device", dv->device,
                              "requests", json_strings(dv->requests, dv->n_requests), "cdi",
                              json_strings(dv->cdi, dv->n_cdi));
                if (dv->share_id && dv->share_id[0])
                    json_object_set_new(o, "share_id", json_string(dv->share_id));
                json_array_append_new(devs, o);
            }
            json_object_set_new(c, "devices", devs);
        }
        json_array_append_new(list, c);
    }
    json_t *root = json_pack("{s:s, s:o}", "api", api == API_V1 ? "v1" : "v1beta1", "claims", list);
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (s)
        puts(s);
    free(s);
    json_decref(root);
}

/* The claims of the command line (parsed from copies) and what the answer
 * says of each. */
struct batch {
    size_t n;
    struct claim_arg *claims;
    char **copies;
    struct claim_view *views;
};

static void batch_free(struct batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->views[i].devs);
        free(b->copies[i]);
    }
    free(b->views);
    free(b->copies);
    free(b->claims);
}

static void message_freep(ProtobufCMessage **m)
{
    if (*m != NULL)
        protobuf_c_message_free_unpacked(*m, NULL);
}

/* Makes the call for the claims of b and prints the answer (as JSON when
 * json); the exit code. */
static int call(const char *cmd, bool prepare, enum api api, const char *endpoint, double timeout,
                bool json, struct batch *b)
{
    struct error err;
    size_t len = 0;
    cleanup_free uint8_t *req = pack_request(prepare, b->claims, b->n, &len);
    cleanup_rpc_client struct rpc_client *c = rpc_client_new(endpoint, &err);
    if (c == NULL) {
        fprintf(stderr, "kubelet-standin %s: %s\n", cmd, err.msg);
        return EXIT_RPC;
    }
    const char *method = method_path(api, prepare);
    __attribute__((cleanup(rpc_answer_free))) struct rpc_answer a = {0};
    if (rpc_client_call(c, method, req, len, timeout, &a, &err) < 0) {
        fprintf(stderr, "kubelet-standin %s: %s\n", cmd, err.msg);
        return EXIT_RPC;
    }
    if (a.status != GRPC_STATUS_OK) {
        fprintf(stderr, "kubelet-standin %s: %s on %s: %s: %s\n", cmd, method, endpoint,
                wire_status_name(a.status), a.details ? a.details : "");
        return EXIT_RPC;
    }
    __attribute__((cleanup(message_freep))) ProtobufCMessage *resp = protobuf_c_message_unpack(
        prepare
            ? &k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__descriptor
            : &k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_response__descriptor,
        NULL, a.len, a.data);
    if (resp == NULL) {
        fprintf(stderr, "kubelet-standin %s: the answer of %s (%zu bytes) does not decode\n", cmd,
                method, a.len);
        return EXIT_RPC;
    }
    size_t n = b->n;
    size_t extra = prepare ? fill_prepare(api, (const V1PrepareResp *)resp, b->claims, n, b->views)
                           : fill_unprepare((const V1UnprepareResp *)resp, b->claims, n, b->views);
    if (json)
        print_json(api, prepare, b->claims, b->views, n);
    else
        print_text(prepare, b->claims, b->views, n);
    int status = extra ? EXIT_FAILED : EXIT_OK;
    for (size_t i = 0; i < n; i++) {
        if (find_claim(b->claims, i, b->claims[i].uid) >= 0)
            continue; /* a repeated uid: judged by its first occurrence */
        if (!b->views[i].present || (b->views[i].error && b->views[i].error[0]))
            status = EXIT_FAILED;
    }
    return status;
}

static const struct flags_program prepare_program = {
    "kubelet-standin prepare", "--endpoint SOCK [flags] NS/NAME/UID...",
    "Calls NodePrepareResources for the claims, in one call, and prints\n"
    "one line per prepared device or failed claim."};
static const struct flags_program unprepare_program = {
    "kubelet-standin unprepare", "--endpoint SOCK [flags] NS/NAME/UID...",
    "Calls NodeUnprepareResources for the claims, in one call, and\n"
    "prints one line per claim."};

static int run(int argc, char **argv, bool prepare)
{
    const char *cmd = prepare ? "prepare" : "unprepare";
    struct opts o = {NULL, "v1", "45", false};
    const struct flag flags[] = {
        {"endpoint", "KUBELET_STANDIN_ENDPOINT", FLAG_STRING, &o.endpoint,
         "the plugin's DRA socket (GetInfo endpoint; required)"},
        {"api", "KUBELET_STANDIN_API", FLAG_STRING, &o.api,
         "v1 or v1beta1 (also v1.DRAPlugin / v1beta1.DRAPlugin as register prints)"},
        {"timeout", "KUBELET_STANDIN_CALL_TIMEOUT", FLAG_STRING, &o.timeout,
         "call deadline in seconds (the kubelet uses 45)"},
        {"json", "KUBELET_STANDIN_JSON", FLAG_BOOL, &o.json, "print the answer as JSON"},
    };
    const struct flags_program *program = prepare ? &prepare_program : &unprepare_program;
    int next;
    int parsed = flags_main(flags_read, flags, FLAGS_COUNT(flags), argc, argv, program, &next);
    if (parsed != FLAGS_GO_ON)
        return parsed;
    enum api api;
    double timeout;
    const char *bad = o.endpoint == NULL                   ? "--endpoint is required"
                      : parse_api(o.api, &api) < 0         ? "--api must be v1 or v1beta1"
                      : parse_seconds(o.timeout, &timeout) ? "--timeout wants seconds"
                      : next >= argc                       ? "no claims given (NS/NAME/UID)"
                                                           : NULL;
    if (bad)
        return flags_usage_error(program, "%s", bad);
    size_t n = (size_t)(argc - next);
    __attribute__((cleanup(batch_free))) struct batch b = {n, xcalloc(n, sizeof(*b.claims)),
                                                           xcalloc(n, sizeof(*b.copies)),
                                                           xcalloc(n, sizeof(*b.views))};
    for (size_t i = 0; i < n; i++) {
        b.copies[i] = xstrdup(argv[next + (int)i]);
        if (parse_claim(b.copies[i], &b.claims[i]) < 0)
            return flags_usage_error(program, "claim \"%s\" is not NAMESPACE/NAME/UID",
                                     argv[next + (int)i]);
    }
    int status = call(cmd, prepare, api, o.endpoint, timeout, o.json, &b);
    fflush(stdout);
    return status;
}

int cmd_prepare(int argc, char **argv)
{
    return run(argc, argv, true);
}

int cmd_unprepare(int argc, char **argv)
{
    return run(argc, argv, false);
}
