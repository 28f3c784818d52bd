/* kubelet-standin watch-health: opens v1alpha1 NodeWatchResources as the
 * kubelet does and prints every message as it arrives:
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
#include "grpc_client.h"
#include "proto/dra_health_v1alpha1.pb-c.h"
#include "standin.h"

#define WATCH_METHOD "/v1alpha1.DRAResourceHealth/NodeWatchResources"

static const char *health_name(V1alpha1__HealthStatus h)
{
    switch (h) {
    case V1ALPHA1__HEALTH_STATUS__HEALTHY:
        return "HEALTHY";
    case V1ALPHA1__HEALTH_STATUS__UNHEALTHY:
        return "UNHEALTHY";
    case V1ALPHA1__HEALTH_STATUS__UNKNOWN:
        return "UNKNOWN";
    default:
        return "INVALID";
    }
}

static void print_message(const V1alpha1__NodeWatchResourcesResponse *m, long update, bool json)
{
    if (json) {
        json_t *devs = json_array();
        for (size_t i = 0; i < m->n_devices; i++) {
            const V1alpha1__DeviceHealth *d = m->devices[i];
            json_array_append_new(devs, json_pack("{s:s, s:s, s:s, s:I, s:I, s:s}", "pool",
                                                  d->device ? d->device->pool_name : "", "device",
                                                  d->device ? d->device->device_name : "", "health",
                                                  health_name(d->health), "last_updated",
                                                  (json_int_t)d->last_updated_time, "timeout",
                                                  (json_int_t)d->health_check_timeout_seconds,
                                                  "message", d->message));
        }
        json_t *root = json_pack("{s:I, s:o}", "update", (json_int_t)update, "devices", devs);
        char *s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (s)
            puts(s);
        free(s);
        json_decref(root);
    } else {
        for (size_t i = 0; i < m->n_devices; i++) {
            const V1alpha1__DeviceHealth *d = m->devices[i];
            printf("pool=");
            print_oneline(stdout, d->device ? d->device->pool_name : "");
            printf(" device=");
            print_oneline(stdout, d->device ? d->device->device_name : "");
            printf(" health=%s last_updated=%lld timeout=%lld message=", health_name(d->health),
                   (long long)d->last_updated_time, (long long)d->health_check_timeout_seconds);
            print_oneline(stdout, d->message);
            putchar('\n');
        }
        printf("--- update=%ld devices=%zu\n", update, m->n_devices);
    }
    fflush(stdout);
}

int cmd_watch_health(int argc, char **argv)
{
    const char *endpoint = NULL, *timeout_s = "0";
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
    };
    const size_t nflags = sizeof(flags) / sizeof(flags[0]);
    struct error err;
    int next;
    int rc = flags_parse(flags, nflags, argc, argv, &next, &err);
    if (rc == FLAGS_HELP) {
        flags_usage(stdout, "kubelet-standin watch-health", "--endpoint SOCK [flags]",
                    "Opens the health stream (NodeWatchResources) and prints every message:\n"
                    "one line per device, then \"--- update=N devices=M\".",
                    flags, nflags);
        return EXIT_OK;
    }
    double timeout;
    const char *bad = rc < 0                                   ? err.msg
                      : next != argc                           ? "unexpected argument (see --help)"
                      : endpoint == NULL                       ? "--endpoint is required"
                      : count < 0                              ? "--count must be >= 0"
                      : parse_seconds(timeout_s, &timeout) < 0 ? "--timeout wants seconds"
                                                               : NULL;
    if (bad) {
        fprintf(stderr, "kubelet-standin watch-health: %s\n", bad);
        return EXIT_USAGE;
    }
    struct rpc_client *c = rpc_client_new(endpoint, &err);
    if (c == NULL) {
        fprintf(stderr, "kubelet-standin watch-health: %s\n", err.msg);
        return EXIT_RPC;
    }
    int status = EXIT_RPC;
    struct rpc_client_stream *s = rpc_client_stream_open(c, WATCH_METHOD, "", 0, timeout, &err);
    if (s == NULL) {
        fprintf(stderr, "kubelet-standin watch-health: %s\n", err.msg);
        goto out;
    }
    long got = 0;
    for (;;) {
        uint8_t *data;
        size_t len;
        if (rpc_client_stream_next(s, &data, &len) == 0)
            break;
        V1alpha1__NodeWatchResourcesResponse *m =
            v1alpha1__node_watch_resources_response__unpack(NULL, len, data);
        free(data);
        if (m == NULL) {
            fprintf(stderr,
                    "kubelet-standin watch-health: message %ld (%zu bytes) does not "
                    "decode as NodeWatchResourcesResponse\n",
                    got + 1, len);
            status = EXIT_FAILED;
            goto out;
        }
        print_message(m, ++got, json);
        v1alpha1__node_watch_resources_response__free_unpacked(m, NULL);
        if (count > 0 && got >= count) {
            status = EXIT_OK;
            goto out;
        }
    }
    const char *details;
    grpc_status_code code = rpc_client_stream_status(s, &details);
    if (code == GRPC_STATUS_OK ||
        (code == GRPC_STATUS_DEADLINE_EXCEEDED && count == 0 && got > 0)) {
        status = EXIT_OK;
    } else {
        fprintf(stderr, "kubelet-standin watch-health: stream ended after %ld message(s): %s: %s\n",
                got, rpc_status_name(code), details);
        status = got == 0 ? EXIT_RPC : EXIT_FAILED;
    }
out:
    rpc_client_stream_close(s);
    rpc_client_free(c);
    return status;
}
