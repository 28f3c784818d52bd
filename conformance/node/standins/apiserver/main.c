// SPDX-License-Identifier: Apache-2.0
/* apiserver-standin: an in-memory Kubernetes API server that serves just the
 * paths the DRA kubelet plugin uses, for the node suite and the benchmarks.
 * See docs/apiserver-standin.md. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "atomic_file.h"
#include "error.h"
#include "faults.h"
#include "flags.h"
#include "log.h"
#include "reqlog.h"
#include "server.h"
#include "xalloc.h"

static const char *const description =
    "Serves nodes, resourceclaims (+/status), deviceclasses and resourceslices of\n"
    "resource.k8s.io/v1 from memory on 127.0.0.1, with the real API server's\n"
    "resourceVersions, conflicts, field selectors, watches, validation and Status\n"
    "errors, plus a control API under /standin/ (faults, request log, token).";

int main(int argc, char **argv)
{
    long port = 0, history = 10000, watch_timeout = 1800, verbosity = 0;
    const char *port_file = NULL, *nodes = NULL, *event_log = NULL, *token = NULL;
    const char *tls_cert = NULL, *tls_key = NULL, *client_ca = NULL;
    bool drop_taints = false;
    const char *partitionable = "on";
    bool drop_shares = false;
    bool drop_partition_type = false;
    const struct flag flags[] = {
        {"port", "APISERVER_STANDIN_PORT", FLAG_INT, &port,
         "TCP port on 127.0.0.1; 0 picks a free one"},
        {"port-file", "APISERVER_STANDIN_PORT_FILE", FLAG_STRING, &port_file,
         "write the port here once listening (removed on exit)"},
        {"node", "APISERVER_STANDIN_NODE", FLAG_STRING, &nodes,
         "create these Node objects at start (comma-separated names)"},
        {"drop-device-taints", "APISERVER_STANDIN_DROP_DEVICE_TAINTS", FLAG_BOOL, &drop_taints,
         "drop spec.devices[].taints of ResourceSlices on write, like a server with "
         "DRADeviceTaints off"},
        {"partitionable-devices", "APISERVER_STANDIN_PARTITIONABLE_DEVICES", FLAG_STRING,
         &partitionable,
         "ResourceSlice sharedCounters and consumesCounters: on (validated and kept), drop "
         "(removed on write, like DRAPartitionableDevices off) or refuse (422)"},
        {"drop-consumable-capacity", "APISERVER_STANDIN_DROP_CONSUMABLE_CAPACITY", FLAG_BOOL,
         &drop_shares,
         "drop allowMultipleAllocations and capacity requestPolicy of ResourceSlice devices on "
         "write, like a server with DRAConsumableCapacity off"},
        {"drop-partition-type-attribute", "APISERVER_STANDIN_DROP_PARTITION_TYPE_ATTRIBUTE",
         FLAG_BOOL, &drop_partition_type,
         "drop spec.partitionTypeAttribute of ResourceSlices on write, like a 1.37 server with "
         "DRAPartitionableDevicesType off (its default) or an older release"},
        {"event-log", "APISERVER_STANDIN_EVENT_LOG", FLAG_STRING, &event_log,
         "append one JSON line per mutating request (timeNs, method, path, status, object)"},
        {"token", "APISERVER_STANDIN_TOKEN", FLAG_STRING, &token,
         "require this bearer token on API requests"},
        {"tls-cert-file", "APISERVER_STANDIN_TLS_CERT_FILE", FLAG_STRING, &tls_cert,
         "serve HTTPS with this PEM certificate (needs --tls-key-file)"},
        {"tls-key-file", "APISERVER_STANDIN_TLS_KEY_FILE", FLAG_STRING, &tls_key,
         "PEM private key of --tls-cert-file"},
        {"client-ca-file", "APISERVER_STANDIN_CLIENT_CA_FILE", FLAG_STRING, &client_ca,
         "accept client certificates signed by this CA as authentication (HTTPS only)"},
        {"watch-history", "APISERVER_STANDIN_WATCH_HISTORY", FLAG_INT, &history,
         "change events kept for watches that resume from a resourceVersion"},
        {"watch-timeout", "APISERVER_STANDIN_WATCH_TIMEOUT", FLAG_INT, &watch_timeout,
         "seconds a watch lasts when the client gives no timeoutSeconds"},
        {"v", "APISERVER_STANDIN_VERBOSITY", FLAG_INT, &verbosity,
         "log verbosity (1: faults, 2: every request)"},
    };
    const size_t nflags = sizeof(flags) / sizeof(flags[0]);
    struct error err;
    int next;
    int rc = flags_parse(flags, nflags, argc, argv, &next, &err);
    if (rc == FLAGS_HELP) {
        flags_usage(stdout, "apiserver-standin", "[flags]", description, flags, nflags);
        return 0;
    }
    if (rc < 0) {
        fprintf(stderr, "apiserver-standin: %s\n", err.msg);
        return 2;
    }
    const char *bad = NULL;
    if (next < argc)
        bad = "takes no arguments";
    else if (port < 0 || port > 65535)
        bad = "--port must be from 0 to 65535";
    else if (history < 1)
        bad = "--watch-history must be at least 1";
    else if (watch_timeout < 1)
        bad = "--watch-timeout must be at least 1";
    else if ((tls_cert && tls_cert[0]) != (tls_key && tls_key[0]))
        bad = "--tls-cert-file and --tls-key-file go together";
    else if (client_ca && client_ca[0] && !(tls_cert && tls_cert[0]))
        bad = "--client-ca-file needs --tls-cert-file";
    if (bad) {
        fprintf(stderr, "apiserver-standin: %s (see --help)\n", bad);
        return 2;
    }
    log_verbosity = (int)verbosity;

    /* Every thread (libmicrohttpd's too) inherits this mask; main waits. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct api api = {.drop_device_taints = drop_taints, .watch_timeout_s = watch_timeout};
    api.drop_consumable_capacity = drop_shares;
    api.drop_partition_type = drop_partition_type;
    if (!strcmp(partitionable, "drop")) {
        api.partitionable = PARTITIONABLE_DROP;
    } else if (!strcmp(partitionable, "refuse")) {
        api.partitionable = PARTITIONABLE_REFUSE;
    } else if (strcmp(partitionable, "on") != 0) {
        fprintf(stderr,
                "apiserver-standin: --partitionable-devices: \"%s\" is not on, drop or "
                "refuse\n",
                partitionable);
        return 2;
    }
    struct faults faults;
    struct reqlog reqlog;
    struct server *srv = NULL;
    int status = 1;
    if (store_init(&api.store, (size_t)history) < 0) {
        fprintf(stderr, "apiserver-standin: out of memory\n");
        return 1;
    }
    faults_init(&faults);
    if (reqlog_init(&reqlog, event_log, &err) < 0) {
        fprintf(stderr, "apiserver-standin: %s\n", err.msg);
        faults_destroy(&faults);
        store_destroy(&api.store);
        return 1;
    }
    if (nodes && nodes[0]) {
        char *list = xstrdup(nodes);
        for (char *save, *n = strtok_r(list, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
            if (api_create_node(&api, n) < 0) {
                fprintf(stderr, "apiserver-standin: --node: \"%s\" is not a valid node name\n", n);
                free(list);
                status = 2;
                goto out;
            }
        }
        free(list);
    }
    struct server_config cfg = {.port = port,
                                .token = token,
                                .tls_cert_file = tls_cert,
                                .tls_key_file = tls_key,
                                .client_ca_file = client_ca};
    if ((srv = server_start(&api, &faults, &reqlog, &cfg, &err)) == NULL) {
        fprintf(stderr, "apiserver-standin: %s\n", err.msg);
        goto out;
    }
    int bound = server_port(srv);
    if (port_file && port_file[0]) {
        char text[16];
        int n = snprintf(text, sizeof(text), "%d\n", bound);
        if (atomic_write_file(port_file, text, (size_t)n, 0644, &err) < 0) {
            fprintf(stderr, "apiserver-standin: --port-file: %s\n", err.msg);
            goto out;
        }
    }
    printf("%s://127.0.0.1:%d\n", tls_cert && tls_cert[0] ? "https" : "http", bound);
    fflush(stdout);
    LOG_I("apiserver-standin listening on 127.0.0.1:%d", bound);

    int sig = 0;
    sigwait(&sigs, &sig);
    LOG_I("apiserver-standin: %s, shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
    status = 0;
out:
    store_close(&api.store);
    server_stop(srv);
    if (srv && port_file && port_file[0])
        unlink(port_file);
    reqlog_destroy(&reqlog);
    faults_destroy(&faults);
    store_destroy(&api.store);
    return status;
}
