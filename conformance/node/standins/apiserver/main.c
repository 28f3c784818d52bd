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
#include "cleanup.h"
#include "error.h"
#include "faults.h"
#include "flags.h"
#include "log.h"
#include "reqlog.h"
#include "server.h"
#include "stop_signals.h"
#include "xalloc.h"

static const char *const description =
    "Serves nodes, resourceclaims (+/status), deviceclasses and resourceslices of\n"
    "resource.k8s.io/v1 from memory on 127.0.0.1, with the real API server's\n"
    "resourceVersions, conflicts, field selectors, watches, validation and Status\n"
    "errors, plus a control API under /standin/ (faults, request log, token).";

/* The command line. */
struct options {
    long port, history, watch_timeout, verbosity;
    const char *port_file, *nodes, *event_log, *token;
    const char *tls_cert, *tls_key, *client_ca;
    const char *partitionable;
    bool drop_taints, drop_shares, drop_partition_type;
};

static bool given(const char *s)
{
    return s != NULL && s[0] != '\0';
}

/* What is wrong with values that each parsed: NULL when nothing is. */
static const char *options_problem(const struct options *o)
{
    if (o->port < 0 || o->port > 65535)
        return "--port must be from 0 to 65535";
    if (o->history < 1)
        return "--watch-history must be at least 1";
    if (o->watch_timeout < 1)
        return "--watch-timeout must be at least 1";
    if (given(o->tls_cert) != given(o->tls_key))
        return "--tls-cert-file and --tls-key-file go together";
    if (given(o->client_ca) && !given(o->tls_cert))
        return "--client-ca-file needs --tls-cert-file";
    return NULL;
}

/* Fills o from the flags: FLAGS_GO_ON, else the exit status (--help, or a
 * bad command line, already reported). */
static int parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){.history = 10000, .watch_timeout = 1800, .partitionable = "on"};
    const struct flag flags[] = {
        {"port", "APISERVER_STANDIN_PORT", FLAG_INT, &o->port,
         "TCP port on 127.0.0.1; 0 picks a free one"},
        {"port-file", "APISERVER_STANDIN_PORT_FILE", FLAG_STRING, &o->port_file,
         "write the port here once listening (removed on exit)"},
        {"node", "APISERVER_STANDIN_NODE", FLAG_STRING, &o->nodes,
         "create these Node objects at start (comma-separated names)"},
        {"drop-device-taints", "APISERVER_STANDIN_DROP_DEVICE_TAINTS", FLAG_BOOL, &o->drop_taints,
         "drop spec.devices[].taints of ResourceSlices on write, like a server with "
         "DRADeviceTaints off"},
        {"partitionable-devices", "APISERVER_STANDIN_PARTITIONABLE_DEVICES", FLAG_STRING,
         &o->partitionable,
         "ResourceSlice sharedCounters and consumesCounters: on (validated and kept), drop "
         "(removed on write, like DRAPartitionableDevices off) or refuse (422)"},
        {"drop-consumable-capacity", "APISERVER_STANDIN_DROP_CONSUMABLE_CAPACITY", FLAG_BOOL,
         &o->drop_shares,
         "drop allowMultipleAllocations and capacity requestPolicy of ResourceSlice devices on "
         "write, like a server with DRAConsumableCapacity off"},
        {"drop-partition-type-attribute", "APISERVER_STANDIN_DROP_PARTITION_TYPE_ATTRIBUTE",
         FLAG_BOOL, &o->drop_partition_type,
         "drop spec.partitionTypeAttribute of ResourceSlices on write, like a 1.37 server with "
         "DRAPartitionableDevicesType off (its default) or an older release"},
        {"event-log", "APISERVER_STANDIN_EVENT_LOG", FLAG_STRING, &o->event_log,
         "append one JSON line per mutating request (timeNs, method, path, status, object)"},
        {"token", "APISERVER_STANDIN_TOKEN", FLAG_STRING, &o->token,
         "require this bearer token on API requests"},
        {"tls-cert-file", "APISERVER_STANDIN_TLS_CERT_FILE", FLAG_STRING, &o->tls_cert,
         "serve HTTPS with this PEM certificate (needs --tls-key-file)"},
        {"tls-key-file", "APISERVER_STANDIN_TLS_KEY_FILE", FLAG_STRING, &o->tls_key,
         "PEM private key of --tls-cert-file"},
        {"client-ca-file", "APISERVER_STANDIN_CLIENT_CA_FILE", FLAG_STRING, &o->client_ca,
         "accept client certificates signed by this CA as authentication (HTTPS only)"},
        {"watch-history", "APISERVER_STANDIN_WATCH_HISTORY", FLAG_INT, &o->history,
         "change events kept for watches that resume from a resourceVersion"},
        {"watch-timeout", "APISERVER_STANDIN_WATCH_TIMEOUT", FLAG_INT, &o->watch_timeout,
         "seconds a watch lasts when the client gives no timeoutSeconds"},
        {"v", "APISERVER_STANDIN_VERBOSITY", FLAG_INT, &o->verbosity,
         "log verbosity (1: faults, 2: every request)"},
    };
    const struct flags_program program = {"apiserver-standin", "[flags]", description};
    int next;
    int parsed = flags_main(flags_read, flags, FLAGS_COUNT(flags), argc, argv, &program, &next);
    if (parsed != FLAGS_GO_ON)
        return parsed;
    const char *bad = next < argc ? "takes no arguments" : options_problem(o);
    if (bad)
        return flags_usage_error(&program, "%s (see --help)", bad);
    if (strcmp(o->partitionable, "on") != 0 && strcmp(o->partitionable, "drop") != 0 &&
        strcmp(o->partitionable, "refuse") != 0)
        return flags_usage_error(&program,
                                 "--partitionable-devices: \"%s\" is not on, drop or refuse",
                                 o->partitionable);
    return FLAGS_GO_ON;
}

/* The --node objects: 0, or 2 (reported) for a bad name. */
static int create_nodes(struct api *api, const char *nodes)
{
    cleanup_free char *list = xstrdup(nodes);
    for (char *save, *n = strtok_r(list, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
        if (api_create_node(api, n) < 0) {
            fprintf(stderr, "apiserver-standin: --node: \"%s\" is not a valid node name\n", n);
            return 2;
        }
    }
    return 0;
}

/* Creates the nodes, starts the server (*srv, for main to stop), writes the
 * port and serves until SIGINT or SIGTERM: the exit status. */
static int serve(struct api *api, struct faults *faults, struct reqlog *reqlog,
                 const struct options *o, const sigset_t *sigs, struct server **srv)
{
    struct error err;
    if (given(o->nodes) && create_nodes(api, o->nodes) != 0)
        return 2;
    struct server_config cfg = {.port = o->port,
                                .token = o->token,
                                .tls_cert_file = o->tls_cert,
                                .tls_key_file = o->tls_key,
                                .client_ca_file = o->client_ca};
    if ((*srv = server_start(api, faults, reqlog, &cfg, &err)) == NULL) {
        fprintf(stderr, "apiserver-standin: %s\n", err.msg);
        return 1;
    }
    int bound = server_port(*srv);
    if (given(o->port_file)) {
        char text[16];
        int n = snprintf(text, sizeof(text), "%d\n", bound);
        if (atomic_write_file(o->port_file, text, (size_t)n, 0644, &err) < 0) {
            fprintf(stderr, "apiserver-standin: --port-file: %s\n", err.msg);
            return 1;
        }
    }
    printf("%s://127.0.0.1:%d\n", given(o->tls_cert) ? "https" : "http", bound);
    fflush(stdout);
    LOG_I("apiserver-standin listening on 127.0.0.1:%d", bound);

    int sig = stop_signals_wait(sigs);
    LOG_I("apiserver-standin: %s, shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
    return 0;
}

int main(int argc, char **argv)
{
    struct options o;
    int parsed = parse_options(argc, argv, &o);
    if (parsed != FLAGS_GO_ON)
        return parsed;
    log_verbosity = (int)o.verbosity;

    /* Every thread (libmicrohttpd's too) inherits this mask; main waits. */
    sigset_t sigs;
    stop_signals_block(&sigs);
    signal(SIGPIPE, SIG_IGN);

    struct api api = {.drop_device_taints = o.drop_taints, .watch_timeout_s = o.watch_timeout};
    api.drop_consumable_capacity = o.drop_shares;
    api.drop_partition_type = o.drop_partition_type;
    if (!strcmp(o.partitionable, "drop"))
        api.partitionable = PARTITIONABLE_DROP;
    else if (!strcmp(o.partitionable, "refuse"))
        api.partitionable = PARTITIONABLE_REFUSE;
    struct faults faults;
    struct reqlog reqlog;
    struct error err;
    if (store_init(&api.store, (size_t)o.history) < 0) {
        fprintf(stderr, "apiserver-standin: out of memory\n");
        return 1;
    }
    faults_init(&faults);
    if (reqlog_init(&reqlog, o.event_log, &err) < 0) {
        fprintf(stderr, "apiserver-standin: %s\n", err.msg);
        faults_destroy(&faults);
        store_destroy(&api.store);
        return 1;
    }
    struct server *srv = NULL;
    int status = serve(&api, &faults, &reqlog, &o, &sigs, &srv);
    /* The store first: closing it ends the watches the server still holds. */
    store_close(&api.store);
    server_stop(srv);
    if (srv && given(o.port_file))
        unlink(o.port_file);
    reqlog_destroy(&reqlog);
    faults_destroy(&faults);
    store_destroy(&api.store);
    return status;
}
