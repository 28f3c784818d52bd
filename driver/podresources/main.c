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

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "fakehw-podresources: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see --help)\n");
    return 2;
}

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

int main(int argc, char **argv)
{
    const char *socket_path = DEFAULT_SOCKET;
    bool as_json = false;
    long timeout = 10;
    const struct flag flags[] = {
        {"socket", "PODRESOURCES_SOCKET", FLAG_STRING, &socket_path,
         "the kubelet's PodResources socket"},
        {"json", "PODRESOURCES_JSON", FLAG_BOOL, &as_json, "print JSON instead of a table"},
        {"timeout", "PODRESOURCES_TIMEOUT", FLAG_INT, &timeout, "seconds to wait for the kubelet"},
        FLAG_VERSION_ENTRY,
    };
    const struct flags_program program = {"fakehw-podresources",
                                          "[flags] [list | get NAMESPACE/POD]", description};
    struct error err;
    int next;
    int rc = flags_read_versioned(flags, FLAGS_COUNT(flags), argc, argv, &program, &next, &err);
    if (rc == FLAGS_HELP || rc == FLAGS_VERSION)
        return 0;
    if (rc < 0) {
        fprintf(stderr, "fakehw-podresources: %s\n", err.msg);
        return 2;
    }
    if (timeout < 1 || timeout > 3600) {
        fprintf(stderr, "fakehw-podresources: --timeout %ld: must be 1..3600 seconds\n", timeout);
        return 2;
    }
    const char *cmd = next < argc ? argv[next++] : "list";
    ProtobufCMessage *answer = NULL;
    if (!strcmp(cmd, "list")) {
        if (next < argc)
            return usage_error("list takes no argument, got \"%s\"", argv[next]);
        V1__ListPodResourcesRequest req = V1__LIST_POD_RESOURCES_REQUEST__INIT;
        if (podres_call(socket_path, "/v1.PodResourcesLister/List", &req.base,
                        &v1__list_pod_resources_response__descriptor, (double)timeout, &answer,
                        &err) < 0) {
            fprintf(stderr, "fakehw-podresources: %s\n", err.msg);
            return 1;
        }
        V1__ListPodResourcesResponse *list = (V1__ListPodResourcesResponse *)answer;
        rc = print(list->pod_resources, list->n_pod_resources, as_json);
    } else if (!strcmp(cmd, "get")) {
        if (next + 1 != argc)
            return usage_error("get takes one NAMESPACE/POD%s", "");
        char ns[256], name[256];
        const char *slash = strchr(argv[next], '/');
        if (slash == NULL || slash == argv[next] || slash[1] == '\0' ||
            (size_t)(slash - argv[next]) >= sizeof(ns) || strlen(slash + 1) >= sizeof(name) ||
            strchr(slash + 1, '/') != NULL)
            return usage_error("get: \"%s\" is not NAMESPACE/POD", argv[next]);
        snprintf(ns, sizeof(ns), "%.*s", (int)(slash - argv[next]), argv[next]);
        snprintf(name, sizeof(name), "%s", slash + 1);
        V1__GetPodResourcesRequest req = V1__GET_POD_RESOURCES_REQUEST__INIT;
        req.pod_name = name;
        req.pod_namespace = ns;
        if (podres_call(socket_path, "/v1.PodResourcesLister/Get", &req.base,
                        &v1__get_pod_resources_response__descriptor, (double)timeout, &answer,
                        &err) < 0) {
            fprintf(stderr, "fakehw-podresources: %s\n", err.msg);
            return 1;
        }
        V1__GetPodResourcesResponse *got = (V1__GetPodResourcesResponse *)answer;
        V1__PodResources *one[1] = {got->pod_resources};
        rc = print(one, got->pod_resources != NULL ? 1 : 0, as_json);
    } else {
        return usage_error("unknown command \"%s\" (list or get)", cmd);
    }
    protobuf_c_message_free_unpacked(answer, NULL);
    if (rc < 0) {
        fprintf(stderr, "fakehw-podresources: out of memory\n");
        return 1;
    }
    return 0;
}
