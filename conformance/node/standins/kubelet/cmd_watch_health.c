// SPDX-License-Identifier: Apache-2.0
/* kubelet-standin watch-health: opens NodeWatchResources (--service:
 * v1.DRAResourceHealth as a 1.37 kubelet does when the plugin offers it, or
 * v1alpha1.DRAResourceHealth) and prints every message as it arrives:
 *   pool=<pool> device=<dev> health=HEALTHY last_updated=<unix s> timeout=<s> message=<text>
 *   --- update=<n> devices=<count>
 * (--json: one object per message and line).  stdout is flushed after every
 * message, so a script can follow the output while the stream stays open.
 *
 * Ends with 0 after --count messages, or at --timeout when no --count was
 * given; 3 when the stream failed before its first message (no plugin, or
 * UNIMPLEMENTED); 1 when it ended otherwise. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "flags.h"
#include "cleanup.h"
#include "grpc_client.h"
#include "proto/dra_health_v1.pb-c.h"
#include "proto/dra_health_v1alpha1.pb-c.h"
#include "standin.h"
#include "xalloc.h"

#define SERVICE_V1       "v1.DRAResourceHealth"
#define SERVICE_V1ALPHA1 "v1alpha1.DRAResourceHealth"

/* One device of a message, whichever version decoded it. */
struct device_line {
    const char *pool, *device, *message;
    int health;
    int64_t last_updated, timeout;
};

/* A decoded message of either version, as lines.  The two versions have the
 * same fields, but each is decoded with its own generated code so a message
 * that is not valid for the version asked for fails here. */
struct watch_message {
    V1__NodeWatchResourcesResponse *v1;
    V1alpha1__NodeWatchResourcesResponse *v1alpha1;
    struct device_line *lines;
    size_t n;
};

/* The line of a DeviceHealth d of either version: a macro, as the two
 * generated types share the field names but not a type. */
#define DEVICE_LINE(d)                                                                             \
    ((struct device_line){(d)->device ? (d)->device->pool_name : "",                               \
                          (d)->device ? (d)->device->device_name : "", (d)->message,               \
                          (int)(d)->health, (d)->last_updated_time,                                \
                          (d)->health_check_timeout_seconds})

static int message_decode(bool v1, const uint8_t *data, size_t len, struct watch_message *m)
{
    *m = (struct watch_message){0};
    size_t n;
    if (v1) {
        m->v1 = v1__node_watch_resources_response__unpack(NULL, len, data);
        if (m->v1 == NULL)
            return -1;
        n = m->v1->n_devices;
    } else {
        m->v1alpha1 = v1alpha1__node_watch_resources_response__unpack(NULL, len, data);
        if (m->v1alpha1 == NULL)
            return -1;
        n = m->v1alpha1->n_devices;
    }
    m->lines = xcalloc(n, sizeof(*m->lines));
    for (size_t i = 0; i < n; i++)
        m->lines[i] = v1 ? DEVICE_LINE(m->v1->devices[i]) : DEVICE_LINE(m->v1alpha1->devices[i]);
    m->n = n;
    return 0;
}

static void message_free(struct watch_message *m)
{
    if (m->v1)
        v1__node_watch_resources_response__free_unpacked(m->v1, NULL);
    if (m->v1alpha1)
        v1alpha1__node_watch_resources_response__free_unpacked(m->v1alpha1, NULL);
    free(m->lines);
}

/* The enum values are the same in both versions (HealthStatus). */
static const char *health_name(int h)
{
    switch (h) {
    case V1__HEALTH_STATUS__HEALTHY:
        return "HEALTHY";
    case V1__HEALTH_STATUS__UNHEALTHY:
        return "UNHEALTHY";
    case V1__HEALTH_STATUS__UNKNOWN:
        return "UNKNOWN";
    default:
        return "INVALID";
    }
}

static void print_message(const struct watch_message *m, long update, bool json)
{
    if (json) {
        json_t *devs = json_array();
        for (size_t i = 0; i < m->n; i++) {
            const struct device_line *d = &m->lines[i];
            json_array_append_new(devs,
                                  json_pack("{s:s, s:s, s:s, s:I, s:I, s:s}", "pool", d->pool,
                                            "device", d->device, "health", health_name(d->health),
                                            "last_updated", (json_int_t)d->last_updated, "timeout",
                                            (json_int_t)d->timeout, "message", d->message));
        }
        json_t *root = json_pack("{s:I, s:o}", "update", (json_int_t)update, "devices", devs);
        char *s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (s)
            puts(s);
        free(s);
        json_decref(root);
    } else {
        for (size_t i = 0; i < m->n; i++) {
            const struct device_line *d = &m->lines[i];
            printf("pool=");
            print_oneline(stdout, d->pool);
            printf(" device=");
            print_oneline(stdout, d->device);
            printf(" health=%s last_updated=%lld timeout=%lld message=", health_name(d->health),
                   (long long)d->last_updated, (long long)d->timeout);
            print_oneline(stdout, d->message);
            putchar('\n');
        }
        printf("--- update=%ld devices=%zu\n", update, m->n);
    }
    fflush(stdout);
}

/* Prints the stream's messages until it ends, count messages came (0 = no
 * limit) or timeout seconds passed (0 = none). */
static int watch(const char *endpoint, const char *service, double timeout, long count, bool json)
{
    struct error err;
    cleanup_rpc_client struct rpc_client *c = rpc_client_new(endpoint, &err);
    if (c == NULL) {
        fprintf(stderr, "kubelet-standin watch-health: %s\n", err.msg);
        return EXIT_RPC;
    }
    bool v1 = strcmp(service, SERVICE_V1) == 0;
    char method[128];
    snprintf(method, sizeof(method), "/%s/NodeWatchResources", service);
    cleanup_rpc_client_stream struct rpc_client_stream *s =
        rpc_client_stream_open(c, method, "", 0, timeout, &err);
    if (s == NULL) {
        fprintf(stderr, "kubelet-standin watch-health: %s\n", err.msg);
        return EXIT_RPC;
    }
    long got = 0;
    for (;;) {
        cleanup_free uint8_t *data = NULL;
        size_t len;
        if (rpc_client_stream_next(s, &data, &len) == 0)
            break;
        __attribute__((cleanup(message_free))) struct watch_message m;
        if (message_decode(v1, data, len, &m) < 0) {
            fprintf(stderr,
                    "kubelet-standin watch-health: message %ld (%zu bytes) does not "
                    "decode as %s NodeWatchResourcesResponse\n",
                    got + 1, len, v1 ? "v1" : "v1alpha1");
            return EXIT_FAILED;
        }
        print_message(&m, ++got, json);
        if (count > 0 && got >= count)
            return EXIT_OK;
    }
    const char *details;
    grpc_status_code code = rpc_client_stream_status(s, &details);
    if (code == GRPC_STATUS_OK || (code == GRPC_STATUS_DEADLINE_EXCEEDED && count == 0 && got > 0))
        return EXIT_OK;
    fprintf(stderr, "kubelet-standin watch-health: stream ended after %ld message(s): %s: %s\n",
            got, wire_status_name(code), details);
    return got == 0 ? EXIT_RPC : EXIT_FAILED;
}

static const struct flags_program program = {
    "kubelet-standin watch-health", "--endpoint SOCK [flags]",
    "Opens the health stream (NodeWatchResources) and prints every message:\n"
    "one line per device, then \"--- update=N devices=M\"."};

int cmd_watch_health(int argc, char **argv)
{
    const char *endpoint = NULL, *timeout_s = "0", *service = SERVICE_V1;
    long count = 0;
    bool json = false;
    const struct flag flags[] = {
        {"endpoint", "KUBELET_STANDIN_ENDPOINT", FLAG_STRING, &endpoint,
         "the plugin's DRA socket (required)"},
        {"count", "KUBELET_STANDIN_COUNT", FLAG_INT, &count,
         "stop after this many messages (0 = until the stream ends or --timeout)"},
        {"timeout", "KUBELET_STANDIN_TIMEOUT", FLAG_STRING, &timeout_s,
         "seconds to watch (0 = no limit)"},
        {"json", "KUBELET_STANDIN_JSON", FLAG_BOOL, &json, "one JSON object per message"},
        {"service", "KUBELET_STANDIN_HEALTH_SERVICE", FLAG_STRING, &service,
         "the health service to call: " SERVICE_V1 " (1.37 kubelets, when the plugin "
         "advertises it; see register's health_version) or " SERVICE_V1ALPHA1 " (1.34-1.36)"},
    };
    int parsed = flags_main(flags_read, flags, FLAGS_COUNT(flags), argc, argv, &program, NULL);
    if (parsed != FLAGS_GO_ON)
        return parsed;
    double timeout;
    const char *bad = endpoint == NULL                         ? "--endpoint is required"
                      : count < 0                              ? "--count must be >= 0"
                      : parse_seconds(timeout_s, &timeout) < 0 ? "--timeout wants seconds"
                      : strcmp(service, SERVICE_V1) != 0 && strcmp(service, SERVICE_V1ALPHA1) != 0
                          ? "--service wants " SERVICE_V1 " or " SERVICE_V1ALPHA1
                          : NULL;
    if (bad)
        return flags_usage_error(&program, "%s", bad);
    return watch(endpoint, service, timeout, count, json);
}
