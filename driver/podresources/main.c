// SPDX-License-Identifier: Apache-2.0
/* fakehw-podresources: lists the DRA devices of the pods on this node from
 * the kubelet's PodResources API (v1 List and Get), as a table or as JSON.
 * docs/podresources.md. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "flags.h"
#include "podresources_client.h"
#include "podresources_print.h"
#include "proto/podresources_v1.pb-c.h"
#include "version.h"

#define DEFAULT_SOCKET "/var/lib/kubelet/pod-resources/kubelet.sock"

static const char description[] =
    "Lists the DRA claims and devices of the pods on this node, as the kubelet's\n"
    "PodResources API (v1) reports them: `list` (the default) for every pod, `get\n"
    "NAMESPACE/POD` for one.  One row per device: namespace, pod, container, claim,\n"
    "driver, pool, device and CDI device ids; --json for the same as JSON.";

static const struct flags_program program = {"fakehw-podresources",
                                             "[flags] [list | get NAMESPACE/POD]", description};

/* What the command line asks of every call. */
struct query {
    const char *socket_path;
    long timeout; /* seconds */
    bool as_json;
};

static int print(V1__PodResources *const *pods, size_t n, bool as_json)
{
    if (as_json) {
        json_t *doc = podres_json(pods, n);
        int rc = doc != NULL ? json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
        json_decref(doc);
        if (rc == 0)
            putchar('\n');
        return rc;
    }
    return podres_print_text(stdout, pods, n);
}

/* One call of the kubelet: 0 with *answer, 1 after the error on stderr. */
static int call(const struct query *q, const char *method, const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *answer_desc, ProtobufCMessage **answer)
{
    struct error err;
    double timeout = (double)q->timeout;
    if (podres_call(q->socket_path, method, req, answer_desc, timeout, answer, &err) < 0) {
        fprintf(stderr, "fakehw-podresources: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* Prints the pods of an answer and frees it: the exit status. */
static int print_answer(const struct query *q, ProtobufCMessage *answer,
                        V1__PodResources *const *pods, size_t n)
{
    int rc = print(pods, n, q->as_json);
    protobuf_c_message_free_unpacked(answer, NULL);
    if (rc < 0) {
        fprintf(stderr, "fakehw-podresources: out of memory\n");
        return 1;
    }
    return 0;
}

static int list(const struct query *q)
{
    V1__ListPodResourcesRequest req = V1__LIST_POD_RESOURCES_REQUEST__INIT;
    ProtobufCMessage *answer = NULL;
    if (call(q, "/v1.PodResourcesLister/List", &req.base,
             &v1__list_pod_resources_response__descriptor, &answer) != 0)
        return 1;
    V1__ListPodResourcesResponse *l = (V1__ListPodResourcesResponse *)answer;
    return print_answer(q, answer, l->pod_resources, l->n_pod_resources);
}

static int get(const struct query *q, const char *pod)
{
    char ns[256], name[256];
    const char *slash = strchr(pod, '/');
    if (slash == NULL || slash == pod || slash[1] == '\0' || (size_t)(slash - pod) >= sizeof(ns) ||
        strlen(slash + 1) >= sizeof(name) || strchr(slash + 1, '/') != NULL)
        return flags_usage_error(&program, "get: \"%s\" is not NAMESPACE/POD (see --help)", pod);
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - pod), pod);
    snprintf(name, sizeof(name), "%s", slash + 1);
    V1__GetPodResourcesRequest req = V1__GET_POD_RESOURCES_REQUEST__INIT;
    req.pod_name = name;
    req.pod_namespace = ns;
    ProtobufCMessage *answer = NULL;
    if (call(q, "/v1.PodResourcesLister/Get", &req.base,
             &v1__get_pod_resources_response__descriptor, &answer) != 0)
        return 1;
    V1__PodResources *one[1] = {((V1__GetPodResourcesResponse *)answer)->pod_resources};
    return print_answer(q, answer, one, one[0] != NULL ? 1 : 0);
}

int main(int argc, char **argv)
{
    struct query q = {DEFAULT_SOCKET, 10, false};
    const struct flag flags[] = {
        {"socket", "PODRESOURCES_SOCKET", FLAG_STRING, &q.socket_path,
         "the kubelet's PodResources socket"},
        {"json", "PODRESOURCES_JSON", FLAG_BOOL, &q.as_json, "print JSON instead of a table"},
        {"timeout", "PODRESOURCES_TIMEOUT", FLAG_INT, &q.timeout,
         "seconds to wait for the kubelet"},
        FLAG_VERSION_ENTRY,
    };
    int next;
    int parsed =
        flags_main(flags_read_versioned, flags, FLAGS_COUNT(flags), argc, argv, &program, &next);
    if (parsed != FLAGS_GO_ON)
        return parsed;
    if (q.timeout < 1 || q.timeout > 3600)
        return flags_usage_error(&program, "--timeout %ld: must be 1..3600 seconds", q.timeout);
    const char *cmd = next < argc ? argv[next++] : "list";
    if (!strcmp(cmd, "list")) {
        if (next < argc)
            return flags_usage_error(&program, "list takes no argument, got \"%s\" (see --help)",
                                     argv[next]);
        return list(&q);
    }
    if (!strcmp(cmd, "get")) {
        if (next + 1 != argc)
            return flags_usage_error(&program, "get takes one NAMESPACE/POD (see --help)");
        return get(&q, argv[next]);
    }
    return flags_usage_error(&program, "unknown command \"%s\" (list or get) (see --help)", cmd);
}
