// SPDX-License-Identifier: Apache-2.0
/* publish-test-driver: the slice publisher and the claim status writer on
 * their own, for the integration tests of driver/publish and driver/health
 * (the bats files in driver/publish/tests and driver/health/tests).  It
 * watches a fakehw tree (a plain directory is enough) through the inventory
 * and feeds every snapshot to the publisher and the writer, like the plugin
 * does, without the gRPC side.
 *
 * Prepared claims come from --claims-file: one line per (claim, device),
 * "<namespace> <name> <uid> <pool> <device>", read at start (every claim is
 * queued once) and whenever the writer asks which claims hold a device.
 *
 * While running it writes --status-file (JSON: the publisher's and the
 * writer's status) every 100 ms when it changed, and --ready-file once the
 * pool is published.  SIGTERM/SIGINT stop it; with --cleanup-on-exit the
 * slices are deleted first. */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cleanup.h"
#include "driver/health/claim_status.h"
#include "driver/health/device_health.h"
#include "driver/inventory.h"
#include "driver/kube/kube_client.h"
#include "driver/publish/slice_publisher.h"
#include "error.h"
#include "flags.h"
#include "log.h"
#include "stop_signals.h"

struct options {
    const char *kubeconfig;
    const char *server;
    const char *driver_name;
    const char *node_name;
    const char *fakehw_root;
    const char *taint_effect;
    const char *policy;
    const char *claims_file;
    const char *status_file;
    const char *ready_file;
    bool device_status;
    bool cleanup_on_exit;
    long resync_ms;
    long verbosity;
};

struct driver {
    struct options o;
    struct slice_publisher *pub;
    struct claim_status_writer *status;
    bool seen_snapshot; /* the inventory listener's thread only */
};

/* --- prepared claims from the claims file --- */

typedef void (*claim_line_fn)(void *ctx, const struct claim_ref *claim, const char *pool,
                              const char *device);

static void read_claims(const char *path, claim_line_fn fn, void *ctx)
{
    if (path == NULL || path[0] == '\0')
        return;
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        if (errno != ENOENT)
            LOG_E("claims file %s: %s", path, strerror(errno));
        return;
    }
    char line[1024];
    int lineno = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        char ns[256], name[256], uid[64], pool[256], device[64];
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (sscanf(line, "%255s %255s %63s %255s %63s", ns, name, uid, pool, device) != 5) {
            LOG_E("claims file %s:%d: want \"<namespace> <name> <uid> <pool> <device>\"", path,
                  lineno);
            continue;
        }
        const struct claim_ref claim = {ns, name, uid};
        fn(ctx, &claim, pool, device);
    }
    fclose(f);
}

struct holders_visit {
    prepared_device_fn fn;
    void *fn_ctx;
};

static void holder_line(void *ctx, const struct claim_ref *claim, const char *pool,
                        const char *device)
{
    struct holders_visit *v = ctx;
    v->fn(v->fn_ctx, claim, pool, device, NULL);
}

static void holders(void *ctx, prepared_device_fn fn, void *fn_ctx)
{
    struct driver *d = ctx;
    struct holders_visit v = {fn, fn_ctx};
    read_claims(d->o.claims_file, holder_line, &v);
}

static void queue_line(void *ctx, const struct claim_ref *claim, const char *pool,
                       const char *device)
{
    (void)pool;
    (void)device;
    struct driver *d = ctx;
    claim_status_prepared(d->status, claim);
}

/* --- wiring --- */

static void on_inventory(void *ctx, struct device_snapshot *snap)
{
    struct driver *d = ctx;
    /* Every change after the first snapshot is timed, as the test's
     * flips are the only changes it makes. */
    slice_publisher_update(d->pub, snap, d->seen_snapshot);
    d->seen_snapshot = true;
    if (d->status != NULL)
        claim_status_devices_changed(d->status, snap);
}

static char *status_json(struct driver *d)
{
    struct slice_publisher_status st;
    slice_publisher_get_status(d->pub, &st);
    json_t *j = json_pack(
        "{s:{s:b, s:b, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:b, s:I, s:I, s:I, s:I, s:I, "
        "s:I, s:I, s:I, s:s}}",
        "publisher", "published", st.published, "in_sync", st.in_sync, "have_node_uid",
        st.have_node_uid, "generation", (json_int_t)st.generation, "slices", (json_int_t)st.slices,
        "devices", (json_int_t)st.devices, "tainted", (json_int_t)st.tainted, "removed",
        (json_int_t)st.removed, "rejected", (json_int_t)st.rejected, "taints_dropped",
        st.taints_dropped, "removing_unhealthy", st.removing_unhealthy, "syncs",
        (json_int_t)st.syncs, "creates", (json_int_t)st.creates, "updates", (json_int_t)st.updates,
        "deletes", (json_int_t)st.deletes, "conflicts", (json_int_t)st.conflicts, "failures",
        (json_int_t)st.failures, "echoes", (json_int_t)st.echoes, "latency_ms",
        (json_int_t)st.last_update_latency_ms, "last_error", st.last_error);
    if (j != NULL)
        json_object_set_new(json_object_get(j, "publisher"), "skipped",
                            json_integer((json_int_t)st.skipped));
    if (j != NULL && d->status != NULL) {
        struct claim_status_stats cs;
        claim_status_get_stats(d->status, &cs);
        json_object_set_new(j, "claim_status",
                            json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "writes",
                                      (json_int_t)cs.writes, "unchanged", (json_int_t)cs.unchanged,
                                      "conflicts", (json_int_t)cs.conflicts, "failures",
                                      (json_int_t)cs.failures, "given_up", (json_int_t)cs.given_up,
                                      "queued", (json_int_t)cs.queued));
    }
    char *text = j ? json_dumps(j, JSON_SORT_KEYS) : NULL;
    json_decref(j);
    return text;
}

/* The options into *o: FLAGS_GO_ON, or the exit status (flags_main). */
static int parse(struct options *o, int argc, char **argv)
{
    *o = (struct options){
        .driver_name = "gpu.fakehw.example.com",
        .fakehw_root = "/var/run/fakehw",
        .taint_effect = "NoSchedule",
        .policy = "auto",
        .device_status = true,
        .resync_ms = 30000,
    };
    const struct flag flags[] = {
        {"kubeconfig", "KUBECONFIG", FLAG_STRING, &o->kubeconfig, "kubeconfig file"},
        {"server", "TEST_API_SERVER", FLAG_STRING, &o->server,
         "API server URL (http://127.0.0.1:PORT) instead of a kubeconfig"},
        {"driver-name", "DRIVER_NAME", FLAG_STRING, &o->driver_name, "DRA driver name"},
        {"node-name", "NODE_NAME", FLAG_STRING, &o->node_name, "node name (required)"},
        {"fakehw-root", "FAKEHW_ROOT", FLAG_STRING, &o->fakehw_root, "the fakehw tree"},
        {"taint-effect", "TAINT_EFFECT", FLAG_STRING, &o->taint_effect,
         "NoSchedule, NoExecute or None"},
        {"unhealthy-device-policy", "UNHEALTHY_DEVICE_POLICY", FLAG_STRING, &o->policy,
         "taint, remove or auto"},
        {"device-status", "DEVICE_STATUS", FLAG_BOOL, &o->device_status,
         "write claim status.devices"},
        {"claims-file", "CLAIMS_FILE", FLAG_STRING, &o->claims_file,
         "prepared claims, lines of \"<ns> <name> <uid> <pool> <device>\""},
        {"status-file", "STATUS_FILE", FLAG_STRING, &o->status_file, "status JSON written here"},
        {"ready-file", "READY_FILE", FLAG_STRING, &o->ready_file, "written once published"},
        {"cleanup-on-exit", "CLEANUP_ON_EXIT", FLAG_BOOL, &o->cleanup_on_exit,
         "delete the slices on SIGTERM"},
        {"resync-ms", "RESYNC_MS", FLAG_INT, &o->resync_ms, "periodic resync"},
        {"v", "LOG_VERBOSITY", FLAG_INT, &o->verbosity, "log verbosity"},
    };
    const struct flags_program program = {
        argv[0], "[flags]",
        "Publishes a fakehw tree as ResourceSlices and writes claim device status "
        "(test program for driver/publish and driver/health)."};
    int parsed = flags_main(flags_read, flags, FLAGS_COUNT(flags), argc, argv, &program, NULL);
    if (parsed != FLAGS_GO_ON)
        return parsed;
    if (o->node_name == NULL || o->node_name[0] == '\0')
        return flags_usage_error(&program, "--node-name is required");
    log_verbosity = (int)o->verbosity;
    return FLAGS_GO_ON;
}

/* The claim status writer (with the claims file queued), the publisher,
 * then the inventory that feeds both. */
static int start_parts(struct driver *d, struct kube_client *kc, enum taint_effect effect,
                       enum unhealthy_policy policy, struct tree_inventory **inv, struct error *err)
{
    if (d->o.device_status) {
        struct claim_status_options copts = {.driver_name = d->o.driver_name,
                                             .pool_name = d->o.node_name,
                                             .holders = holders,
                                             .holders_ctx = d,
                                             .retry_base_ms = 100,
                                             .retry_max_ms = 2000};
        d->status = claim_status_start(kc, &copts, err);
        if (d->status == NULL)
            return 1;
        read_claims(d->o.claims_file, queue_line, d);
    }
    struct slice_publisher_options popts = {.driver_name = d->o.driver_name,
                                            .node_name = d->o.node_name,
                                            .taint_effect = effect,
                                            .policy = policy,
                                            .resync_ms = (int)d->o.resync_ms,
                                            .retry_base_ms = 100,
                                            .retry_max_ms = 2000};
    d->pub = slice_publisher_start(kc, &popts, err);
    if (d->pub == NULL)
        return 1;
    struct inventory_options iopts = {.root = d->o.fakehw_root, .retry_ms = 200};
    struct inventory_listener listener = {on_inventory, d};
    *inv = inventory_start(&iopts, &listener, 1, err);
    return *inv != NULL ? 0 : 1;
}

/* Until SIGTERM or SIGINT: the status file when it changed, the ready file
 * once the pool is published. */
static void run(struct driver *d, const sigset_t *sigs)
{
    struct error err;
    cleanup_free char *last_status = NULL;
    bool ready = false;
    for (;;) {
        struct timespec tick = {.tv_sec = 0, .tv_nsec = 100 * 1000 * 1000};
        int sig = sigtimedwait(sigs, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT)
            break;
        char *text = status_json(d);
        if (d->o.status_file && text && (last_status == NULL || strcmp(text, last_status) != 0)) {
            if (atomic_write_file(d->o.status_file, text, strlen(text), 0644, &err) < 0)
                LOG_E("%s", err.msg);
            free(last_status);
            last_status = text;
            text = NULL;
        }
        free(text);
        if (!ready && d->o.ready_file && slice_publisher_wait_published(d->pub, 0) == 0) {
            if (atomic_write_file(d->o.ready_file, "published\n", 10, 0644, &err) < 0)
                LOG_E("%s", err.msg);
            ready = true;
        }
    }
}

int main(int argc, char **argv)
{
    struct driver d = {0};
    int parsed = parse(&d.o, argc, argv);
    if (parsed != FLAGS_GO_ON)
        return parsed;
    struct error err;
    enum taint_effect effect;
    enum unhealthy_policy policy;
    if (taint_effect_parse(d.o.taint_effect, &effect, &err) < 0 ||
        unhealthy_policy_parse(d.o.policy, &policy, &err) < 0) {
        fprintf(stderr, "%s: %s\n", argv[0], err.msg);
        return 2;
    }

    sigset_t sigs;
    stop_signals_block(&sigs);
    signal(SIGPIPE, SIG_IGN);

    struct kube_config cfg = {0};
    if (d.o.server != NULL && d.o.server[0] != '\0') {
        cfg.server = strdup(d.o.server);
    } else if (kube_config_load(d.o.kubeconfig, &cfg, &err) < 0) {
        LOG_E("%s", err.msg);
        return 1;
    }
    struct kube_client_options kopts = {
        .timeout_ms = 5000, .max_attempts = 3, .backoff_base_ms = 50, .backoff_max_ms = 500};
    struct kube_client *kc = kube_client_new(&cfg, &kopts, &err);
    kube_config_free(&cfg);
    if (kc == NULL) {
        LOG_E("%s", err.msg);
        return 1;
    }
    struct tree_inventory *inv = NULL;
    int rc = start_parts(&d, kc, effect, policy, &inv, &err);
    if (rc == 0)
        run(&d, &sigs);
    else
        LOG_E("%s", err.msg);
    inventory_stop(inv);
    claim_status_stop(d.status);
    if (d.pub != NULL && slice_publisher_stop(d.pub, d.o.cleanup_on_exit, &err) < 0) {
        LOG_E("%s", err.msg);
        rc = 1;
    }
    if (d.o.ready_file)
        unlink(d.o.ready_file);
    kube_client_free(kc);
    return rc;
}
