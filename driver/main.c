// SPDX-License-Identifier: Apache-2.0
/* fakehw-kubelet-plugin: the DRA kubelet plugin for fakehw's fake GPUs.
 *
 * Wires the parts together:
 *   inventory (fakehw tree) ──> slice publisher, health stream, claim status
 *   registration socket ──> kubelet finds the plugin
 *   DRA socket ──> prepare/unprepare (driver/prepare) and the health stream
 * and runs until SIGTERM/SIGINT. */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cleanup.h"
#include "driver/grpc/dra_service.h"
#include "driver/grpc/health_service.h"
#include "driver/grpc/registration_service.h"
#include "driver/grpc/rpc_server.h"
#include "driver/grpc/socket_names.h"
#include "driver/bind/binder.h"
#include "driver/claims/claim_watch.h"
#include "driver/health/claim_status.h"
#include "driver/health/device_health.h"
#include "driver/inventory.h"
#include "driver/kube/kube_client.h"
#include "driver/metrics/metrics.h"
#include "driver/metrics/metrics_server.h"
#include "driver/prepare/nvidia_config.h"
#include "driver/prepare/prepare.h"
#include "driver/publish/slice_publisher.h"
#include "driver/shutdown.h"
#include "error.h"
#include "flags.h"
#include "log.h"
#include "monotonic.h"
#include "version.h"
#include "xalloc.h"

struct options {
    const char *personality;
    const char *driver_name; /* NULL or "" = the personality's */
    const char *node_name;
    const char *kubeconfig;
    const char *registrar_dir;
    const char *plugins_dir;
    const char *cdi_root;
    const char *fakehw_root;      /* where this process reads the tree */
    const char *fakehw_host_root; /* where CDI specs mount it from; NULL or "" = fakehw_root */
    const char *fakegpu_smi;
    bool device_metadata;
    bool device_status;
    const char *taint_effect;
    const char *unhealthy_policy;
    const char *additional_xids; /* NVIDIA's --additional-xids-to-ignore */
    const char *ready_file;
    const char *metrics_address;
    bool cleanup_on_exit;
    const char *rolling_update_uid; /* "" = alone on the node */
    long gone_grace_ms;
    long workers;
    long verbosity;
};

/* Ten minutes: a tree gone for longer is not coming back by itself. */
#define GONE_GRACE_MAX_MS 600000

/* The path flags, resolved against the working directory at start-up. */
enum { PATH_FLAGS = 8 };

struct plugin {
    struct options opt;
    char abs_path[PATH_FLAGS][PATH_MAX];
    char plugin_dir[PATH_MAX];
    struct socket_names sockets;
    enum taint_effect taint_effect;
    enum personality personality;
    enum unhealthy_policy policy;
    struct xid_policy xids;             /* which XIDs are application errors */
    struct health_policy health_policy; /* personality and xids, for every classification */

    struct kube_client *kc;
    struct claim_watch *claims; /* where prepare, the binder and the status writer read claims */
    struct tree_inventory *inv;
    struct prepare_state *prep;
    struct slice_publisher *pub;
    struct claim_status_writer *status;
    struct binder *binder;
    struct health_service *health;
    struct registration_service *reg;
    struct dra_service *dra;
    struct rpc_server *dra_srv;
    struct rpc_server *reg_srv;
    struct metrics *metrics; /* NULL unless --metrics-address */
    struct metrics_server *metrics_srv;
    struct device_snapshot *last_snap; /* the previous snapshot: what a flip is against */
};

static const char description[] =
    "A Kubernetes DRA kubelet plugin that publishes the fake GPUs of a fakehw tree as\n"
    "ResourceSlices, prepares allocated ResourceClaims by writing CDI specs, and reports\n"
    "device health (slice taints, the kubelet health stream, claim device status).";

/* --- callbacks the parts need from each other --- */

/* Prepare's claims come from the claim watch (a GET when it does not hold
 * one); the metrics count where each came from. */
static int fetch_claim(void *ctx, const struct claim_ref *ref, json_t **claim, struct error *err)
{
    struct plugin *p = ctx;
    enum claim_source from;
    int rc = claim_watch_fetch(p->claims, ref, claim, &from, err);
    metrics_claim_read(p->metrics, from == CLAIM_FROM_WATCH ? METRICS_CLAIM_FROM_WATCH
                                                            : METRICS_CLAIM_FROM_GET);
    return rc;
}

static int lookup_device(void *ctx, const char *name, struct fakehw_device *dev, struct error *err)
{
    struct plugin *p = ctx;
    return inventory_lookup(p->inv, name, dev, err);
}

static void claim_holders(void *ctx, prepared_device_fn fn, void *fn_ctx)
{
    struct plugin *p = ctx;
    prepare_for_each_device(p->prep, fn, fn_ctx);
}

/* The nvidia personality's config of a device, for its status data. */
static json_t *claim_config_data(void *ctx, const json_t *claim, size_t result,
                                 claim_device_find_fn find, void *find_ctx)
{
    struct plugin *p = ctx;
    return nvidia_config_claim_data(p->opt.driver_name, p->opt.node_name, claim, result, find,
                                    find_ctx);
}

static void on_claim_prepared(void *ctx, const struct claim_ref *claim)
{
    struct plugin *p = ctx;
    if (p->status != NULL)
        claim_status_queue_prepared(p->status, claim); /* kicked by after_answer */
}

static void after_answer(void *ctx)
{
    struct plugin *p = ctx;
    if (p->status != NULL)
        claim_status_kick(p->status);
}

static void on_claim_unprepared(void *ctx, const struct claim_ref *claim)
{
    struct plugin *p = ctx;
    if (p->status != NULL)
        claim_status_unprepared(p->status, claim->uid);
}

/* Inventory listener: the health stream gets every device with its state.
 * Only the unhealthy devices' messages are kept (a full classification is
 * about 900 bytes; 4,096 of them at once would be 3.6 MB for nothing). */
static void send_health(struct plugin *p, const struct device_snapshot *snap)
{
    size_t n = snap->n;
    cleanup_free struct health_entry *list = xcalloc(n, sizeof(*list));
    for (size_t built = 0; built < n; built++) {
        const struct fakehw_device *d = &snap->devs[built];
        struct device_health h;
        device_health_classify(d, snap->tree_up, &p->health_policy, &h);
        list[built].pool = p->opt.node_name;
        list[built].device = d->name;
        list[built].health = h.healthy ? HEALTH_ENTRY_HEALTHY : HEALTH_ENTRY_UNHEALTHY;
        list[built].last_updated = d->health_since;
        list[built].message = h.healthy ? "" : xstrdup(h.message);
    }
    struct error err;
    if (health_service_update(p->health, list, n, &err) < 0)
        LOG_E("health stream update: %s", err.msg);
    for (size_t i = 0; i < n; i++)
        if (list[i].health == HEALTH_ENTRY_UNHEALTHY)
            free((char *)list[i].message);
}

struct flip_count {
    const struct device_snapshot *old, *new;
    unsigned long n;
};

/* A device in both snapshots whose health differs is a flip; one that came
 * or went (a reload) is not. */
static void count_flip(void *ctx, const char *device_name)
{
    struct flip_count *c = ctx;
    if (device_snapshot_find(c->old, device_name) && device_snapshot_find(c->new, device_name))
        c->n++;
}

static void on_inventory(void *ctx, struct device_snapshot *snap)
{
    struct plugin *p = ctx;
    long long seen = monotonic_ns();
    /* The first snapshot (start-up) has nothing to flip from. */
    struct flip_count flips = {.old = p->last_snap, .new = snap};
    if (flips.old != NULL)
        device_health_diff(flips.old->devs, flips.old->n, flips.old->tree_up, snap->devs, snap->n,
                           snap->tree_up, &p->health_policy, count_flip, &flips);
    metrics_health_flips(p->metrics, flips.n);
    device_snapshot_put(p->last_snap);
    p->last_snap = device_snapshot_get(snap);
    slice_publisher_update(p->pub, snap, flips.n > 0);
    if (p->status != NULL)
        claim_status_devices_changed(p->status, snap);
    binder_devices_changed(p->binder, snap);
    send_health(p, snap);
    if (flips.n > 0)
        metrics_latency(p->metrics, METRICS_TO_HEALTH_STREAM, monotonic_ns() - seen);
}

/* --- metrics --- */

struct claim_count {
    size_t n;
    char last[128]; /* uid of the claim seen last */
};

static void count_claim(void *ctx, const struct claim_ref *claim, const char *pool,
                        const char *device, const char *share_id)
{
    (void)pool, (void)device, (void)share_id;
    struct claim_count *c = ctx;
    /* A claim's devices come one after the other. */
    if (strcmp(c->last, claim->uid) != 0) {
        c->n++;
        snprintf(c->last, sizeof(c->last), "%s", claim->uid);
    }
}

static void metrics_state(void *ctx, struct metrics_state *st)
{
    struct plugin *p = ctx;
    struct claim_count claims = {0, ""};
    prepare_for_each_device(p->prep, count_claim, &claims);
    st->claims_prepared = claims.n;
    st->claims_watched = claim_watch_size(p->claims);
    struct slice_publisher_status ps;
    slice_publisher_get_status(p->pub, &ps);
    st->slices = ps.slices;
    st->devices = ps.devices;
    st->tainted = ps.tainted;
    st->slice_syncs = ps.syncs;
    st->slice_sync_errors = ps.failures;
    st->slice_syncs_skipped = ps.skipped;
    if (p->status != NULL) {
        struct claim_status_stats cs;
        claim_status_get_stats(p->status, &cs);
        st->claim_status_writes = cs.writes;
        st->claim_status_errors = cs.failures + cs.conflicts;
    }
}

/* --- start and stop --- */

/* Makes every non-empty path flag absolute: "mnt" becomes "$PWD/mnt", so
 * the sockets announced to the kubelet and the paths in CDI specs (read by
 * the runtime from another directory) mean the same file.  Nothing needs to
 * exist yet; the path is not normalised further. */
static int resolve_path_flags(struct plugin *p)
{
    struct options *o = &p->opt;
    struct {
        const char *flag;
        const char **value;
    } paths[PATH_FLAGS] = {
        {"--kubeconfig", &o->kubeconfig},
        {"--kubelet-registrar-directory-path", &o->registrar_dir},
        {"--kubelet-plugins-directory-path", &o->plugins_dir},
        {"--cdi-root", &o->cdi_root},
        {"--fakehw-root", &o->fakehw_root},
        {"--fakehw-host-root", &o->fakehw_host_root},
        {"--fakegpu-smi", &o->fakegpu_smi},
        {"--ready-file", &o->ready_file},
    };
    char cwd[PATH_MAX];
    bool have_cwd = false;
    for (size_t i = 0; i < PATH_FLAGS; i++) {
        const char *v = *paths[i].value;
        if (v == NULL || *v == '\0' || *v == '/')
            continue;
        if (!have_cwd && getcwd(cwd, sizeof(cwd)) == NULL) {
            fprintf(stderr, "fakehw-kubelet-plugin: %s %s: cannot resolve the relative path: %s\n",
                    paths[i].flag, v, strerror(errno));
            return -1;
        }
        have_cwd = true;
        if (snprintf(p->abs_path[i], PATH_MAX, "%s/%s", cwd, v) >= PATH_MAX) {
            fprintf(stderr, "fakehw-kubelet-plugin: %s %s: the path is too long\n", paths[i].flag,
                    v);
            return -1;
        }
        *paths[i].value = p->abs_path[i];
    }
    return 0;
}

static bool rolling_update(const struct options *o)
{
    return o->rolling_update_uid != NULL && *o->rolling_update_uid != '\0';
}

/* The socket paths, after this pod's UID during a rolling update. */
static int name_sockets(struct plugin *p)
{
    struct options *o = &p->opt;
    const char *uid = o->rolling_update_uid;
    struct error err;
    if (rolling_update(o) && socket_names_check_uid(uid, &err) < 0) {
        fprintf(stderr, "fakehw-kubelet-plugin: --rolling-update-uid (POD_UID) %s\n", err.msg);
        return -1;
    }
    if (socket_names_build(o->registrar_dir, p->plugin_dir, o->driver_name, uid, &p->sockets,
                           &err) < 0) {
        fprintf(stderr, "fakehw-kubelet-plugin: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static void option_defaults(struct options *o)
{
    *o = (struct options){
        .personality = PERSONALITY_DEFAULT_NAME,
        .registrar_dir = "/var/lib/kubelet/plugins_registry",
        .plugins_dir = "/var/lib/kubelet/plugins",
        .cdi_root = "/var/run/cdi",
        .fakehw_root = FAKEHW_DEFAULT_ROOT,
        .fakegpu_smi = "/var/lib/fakehw/bin/fakegpu-smi",
        .device_metadata = true,
        .device_status = true,
        .taint_effect = "NoSchedule",
        .unhealthy_policy = "auto",
        .gone_grace_ms = 3000,
        .workers = 4,
    };
}

/* The flags (with their environment variables) into *o: FLAGS_GO_ON, or
 * the exit status after --help, --version or a usage error (flags_main). */
static int read_flags(struct options *o, int argc, char **argv)
{
    const struct flag flags[] = {
        {"personality", "PERSONALITY", FLAG_STRING, &o->personality,
         "whose driver this stands in for: fakehw, or nvidia (NVIDIA's DRA driver: its driver "
         "name, device names, attributes, capacities and counters)"},
        {"driver-name", "DRIVER_NAME", FLAG_STRING, &o->driver_name,
         "DRA driver name (ResourceSlices, DeviceClass selectors, CDI kind); empty = the "
         "personality's: gpu.fakehw.example.com, or gpu.nvidia.com for nvidia"},
        {"node-name", "NODE_NAME", FLAG_STRING, &o->node_name,
         "name of this node (required): pool name and slice nodeName"},
        {"kubeconfig", "KUBECONFIG", FLAG_STRING, &o->kubeconfig,
         "kubeconfig file; empty = in-cluster service account"},
        {"kubelet-registrar-directory-path", "KUBELET_REGISTRAR_DIRECTORY_PATH", FLAG_STRING,
         &o->registrar_dir, "directory the kubelet watches for plugin registration sockets"},
        {"kubelet-plugins-directory-path", "KUBELET_PLUGINS_DIRECTORY_PATH", FLAG_STRING,
         &o->plugins_dir, "kubelet plugins directory; the plugin uses <this>/<driver-name>"},
        {"cdi-root", "CDI_ROOT", FLAG_STRING, &o->cdi_root, "directory for CDI spec files"},
        {"fakehw-root", "FAKEHW_ROOT", FLAG_STRING, &o->fakehw_root,
         "the fakehw tree (FUSE mount or plain directory) as this process sees it: read for the "
         "inventory, written to attach devices"},
        {"fakehw-host-root", "FAKEHW_HOST_ROOT", FLAG_STRING, &o->fakehw_host_root,
         "the same tree's path on the host, which CDI specs mount into workload containers "
         "(and name in their FAKEHW_ROOT); empty = --fakehw-root, for a plugin that sees the "
         "tree at its host path"},
        {"fakegpu-smi", "FAKEGPU_SMI", FLAG_STRING, &o->fakegpu_smi,
         "host path of fakegpu-smi to mount into containers; empty = none"},
        {"device-metadata", "DEVICE_METADATA", FLAG_BOOL, &o->device_metadata,
         "write KEP-5304 device metadata files and inject them"},
        {"device-status", "DEVICE_STATUS", FLAG_BOOL, &o->device_status,
         "write ResourceClaim status.devices (conditions, data)"},
        {"taint-effect", "TAINT_EFFECT", FLAG_STRING, &o->taint_effect,
         "effect of the taint on unhealthy devices: NoSchedule, NoExecute or None"},
        {"unhealthy-device-policy", "UNHEALTHY_DEVICE_POLICY", FLAG_STRING, &o->unhealthy_policy,
         "unhealthy devices in slices: taint, remove, or auto (taint unless the server drops "
         "taints)"},
        {"additional-xids-to-ignore", "ADDITIONAL_XIDS_TO_IGNORE", FLAG_STRING, &o->additional_xids,
         "XIDs to treat as application errors besides NVIDIA's 13, 31, 43, 45, 68 and 109, "
         "comma-separated (as NVIDIA's DRA driver takes them): a device reporting one stays "
         "healthy"},
        {"ready-file", "READY_FILE", FLAG_STRING, &o->ready_file,
         "file written once registered and published, removed on exit"},
        {"metrics-address", "METRICS_ADDRESS", FLAG_STRING, &o->metrics_address,
         "serve Prometheus metrics at http://<this>/metrics, as HOST:PORT (:9400 for every "
         "interface); empty = off"},
        {"cleanup-on-exit", "CLEANUP_ON_EXIT", FLAG_BOOL, &o->cleanup_on_exit,
         "delete this node's ResourceSlices of the driver on SIGTERM (uninstall)"},
        {"rolling-update-uid", "POD_UID", FLAG_STRING, &o->rolling_update_uid,
         "this pod's UID: sockets named after it and prepare state shared through "
         "<plugin dir>/serialize.lock, so two instances can run during a rolling update "
         "(kubelet 1.33+); empty = alone"},
        {"fakehw-gone-grace-ms", "FAKEHW_GONE_GRACE_MS", FLAG_INT, &o->gone_grace_ms,
         "how long the fakehw tree may be gone before its devices turn unhealthy, in ms; a "
         "fakehw handing the mount to its successor is back well within it (the tree is looked "
         "for once a second; 0 = unhealthy at once)"},
        {"grpc-workers", "GRPC_WORKERS", FLAG_INT, &o->workers,
         "handler threads of the DRA socket"},
        {"v", "LOG_VERBOSITY", FLAG_INT, &o->verbosity, "log verbosity"},
        FLAG_VERSION_ENTRY,
    };
    const struct flags_program program = {"fakehw-kubelet-plugin", "[flags]", description};
    return flags_main(flags_read_versioned, flags, FLAGS_COUNT(flags), argc, argv, &program, NULL);
}

/* The flags checked and resolved: the personality, the taint effect and
 * policy, the paths made absolute, the plugin directory and sockets. */
static int check_options(struct plugin *p)
{
    struct options *o = &p->opt;
    struct error err;
    if (o->node_name == NULL || *o->node_name == '\0') {
        fprintf(stderr, "fakehw-kubelet-plugin: --node-name (or NODE_NAME) is required\n");
        return -1;
    }
    if (o->workers < 1 || o->workers > 64) {
        fprintf(stderr, "fakehw-kubelet-plugin: --grpc-workers %ld: must be 1..64\n", o->workers);
        return -1;
    }
    if (o->gone_grace_ms < 0 || o->gone_grace_ms > GONE_GRACE_MAX_MS) {
        fprintf(stderr, "fakehw-kubelet-plugin: --fakehw-gone-grace-ms %ld: must be 0..%d\n",
                o->gone_grace_ms, GONE_GRACE_MAX_MS);
        return -1;
    }
    if (personality_parse(o->personality, &p->personality, &err) < 0) {
        fprintf(stderr, "fakehw-kubelet-plugin: --personality: %s\n", err.msg);
        return -1;
    }
    if (o->driver_name == NULL || *o->driver_name == '\0')
        o->driver_name = personality_driver_name(p->personality);
    if (taint_effect_parse(o->taint_effect, &p->taint_effect, &err) < 0 ||
        unhealthy_policy_parse(o->unhealthy_policy, &p->policy, &err) < 0) {
        fprintf(stderr, "fakehw-kubelet-plugin: %s\n", err.msg);
        return -1;
    }
    if (xid_policy_init(&p->xids, o->additional_xids, &err) < 0) {
        fprintf(stderr, "fakehw-kubelet-plugin: --additional-xids-to-ignore: %s\n", err.msg);
        return -1;
    }
    p->health_policy = (struct health_policy){.personality = p->personality, .xids = &p->xids};
    if (resolve_path_flags(p) < 0)
        return -1;
    if (o->fakehw_host_root == NULL || *o->fakehw_host_root == '\0')
        o->fakehw_host_root = o->fakehw_root;
    if (snprintf(p->plugin_dir, sizeof(p->plugin_dir), "%s/%s", o->plugins_dir, o->driver_name) >=
        (int)sizeof(p->plugin_dir)) {
        fprintf(stderr, "fakehw-kubelet-plugin: --kubelet-plugins-directory-path is too long\n");
        return -1;
    }
    return name_sockets(p);
}

/* FLAGS_GO_ON, or the exit status (a bad option said on stderr). */
static int parse_options(struct plugin *p, int argc, char **argv)
{
    option_defaults(&p->opt);
    int status = read_flags(&p->opt, argc, argv);
    if (status != FLAGS_GO_ON)
        return status;
    log_verbosity = (int)p->opt.verbosity;
    return check_options(p) < 0 ? FLAGS_EXIT_USAGE : FLAGS_GO_ON;
}

static int start_servers(struct plugin *p, struct error *err)
{
    p->dra = dra_service_new(p->prep, err);
    if (p->dra == NULL)
        return -1;
    if (p->metrics != NULL)
        dra_service_set_observer(p->dra, metrics_on_claim, p->metrics);
    if (rolling_update(&p->opt))
        dra_service_set_unprepare_may_wait(p->dra);
    struct rpc_server_config dcfg = {
        .name = "dra", .socket_path = p->sockets.dra, .workers = (int)p->opt.workers};
    p->dra_srv = rpc_server_new(&dcfg, err);
    if (p->dra_srv == NULL || dra_service_register(p->dra, p->dra_srv, err) < 0 ||
        health_service_register(p->health, p->dra_srv, err) < 0 ||
        rpc_server_start(p->dra_srv, err) < 0)
        return -1;

    /* Registration last: the kubelet dials the DRA socket as soon as it has
     * the endpoint, so that socket must already listen. */
    struct registration_config rcfg = {.driver_name = p->opt.driver_name,
                                       .endpoint = p->sockets.dra};
    p->reg = registration_service_new(&rcfg, err);
    if (p->reg == NULL)
        return -1;
    struct rpc_server_config rscfg = {
        .name = "registration", .socket_path = p->sockets.registration, .workers = 1};
    p->reg_srv = rpc_server_new(&rscfg, err);
    if (p->reg_srv == NULL || registration_service_register(p->reg, p->reg_srv, err) < 0 ||
        rpc_server_start(p->reg_srv, err) < 0)
        return -1;
    return 0;
}

/* First: a bad or taken --metrics-address fails the start before any API
 * call, and the port is held until serving begins. */
static int bind_metrics(struct plugin *p, struct error *err)
{
    const char *address = p->opt.metrics_address;
    if (address == NULL || *address == '\0')
        return 0;
    p->metrics_srv = metrics_server_bind(address, err);
    if (p->metrics_srv == NULL)
        return error_prefix(err, "--metrics-address");
    p->metrics = metrics_new(err);
    return p->metrics != NULL ? 0 : -1;
}

static int open_api(struct plugin *p, struct error *err)
{
    struct kube_config kcfg = {0};
    if (kube_config_load(p->opt.kubeconfig, &kcfg, err) < 0)
        return error_prefix(err, "loading the Kubernetes client configuration");
    struct kube_client_options kopts = {.user_agent = "fakehw-kubelet-plugin",
                                        .on_response = p->metrics ? metrics_on_api_response : NULL,
                                        .on_response_ctx = p->metrics};
    p->kc = kube_client_new(&kcfg, &kopts, err);
    kube_config_free(&kcfg);
    return p->kc != NULL ? 0 : -1;
}

static int open_prepare(struct plugin *p, struct error *err)
{
    struct options *o = &p->opt;
    if (mkdir_p(p->plugin_dir, 0750, err) < 0 || mkdir_p(o->cdi_root, 0755, err) < 0)
        return -1;
    struct prepare_config pcfg = {
        .driver_name = o->driver_name,
        .node_name = o->node_name,
        .plugin_dir = p->plugin_dir,
        .cdi_root = o->cdi_root,
        .fakehw_host_root = o->fakehw_host_root,
        .fakegpu_smi = o->fakegpu_smi ? o->fakegpu_smi : "",
        .device_metadata = o->device_metadata,
        .personality = p->personality,
        .shared = rolling_update(o),
        .fetch_claim = fetch_claim,
        .lookup_device = lookup_device,
        .fetch_ctx = p,
        .on_prepared = on_claim_prepared,
        .on_unprepared = on_claim_unprepared,
        .after_answer = after_answer,
        .hook_ctx = p,
    };
    p->prep = prepare_state_open(&pcfg, err);
    if (p->prep == NULL)
        return error_prefix(err, "opening the prepare state in %s", p->plugin_dir);
    return 0;
}

/* The claim watch, then the binder and the status writer, which read its
 * claims. */
static int start_claims(struct plugin *p, struct error *err)
{
    struct options *o = &p->opt;
    struct claim_watch_options wopts = {.driver_name = o->driver_name, .pool_name = o->node_name};
    p->claims = claim_watch_start(p->kc, &wopts, err);
    if (p->claims == NULL)
        return -1;
    struct binder_options bopts = {
        .driver_name = o->driver_name, .pool_name = o->node_name, .fakehw_root = o->fakehw_root};
    p->binder = binder_start(p->kc, p->claims, &bopts, err);
    if (p->binder == NULL)
        return -1;
    if (!o->device_status)
        return 0;
    struct claim_status_options copts = {
        .driver_name = o->driver_name,
        .pool_name = o->node_name,
        .holders = claim_holders,
        .holders_ctx = p,
        .on_changed_written = p->metrics ? metrics_on_claim_status_written : NULL,
        .on_changed_written_ctx = p->metrics,
        .watch = p->claims,
        .config_data = p->personality == PERSONALITY_NVIDIA ? claim_config_data : NULL,
        .config_data_ctx = p,
        .health = p->health_policy};
    p->status = claim_status_start(p->kc, &copts, err);
    return p->status != NULL ? 0 : -1;
}

/* The slice publisher, then the inventory that feeds every listener. */
static int start_publishing(struct plugin *p, struct error *err)
{
    struct options *o = &p->opt;
    struct slice_publisher_options sopts = {.driver_name = o->driver_name,
                                            .node_name = o->node_name,
                                            .taint_effect = p->taint_effect,
                                            .policy = p->policy,
                                            .personality = p->personality,
                                            .xids = &p->xids,
                                            .on_published =
                                                p->metrics ? metrics_on_slice_published : NULL,
                                            .on_published_ctx = p->metrics};
    p->pub = slice_publisher_start(p->kc, &sopts, err);
    if (p->pub == NULL)
        return -1;
    struct inventory_options iopts = {.root = o->fakehw_root,
                                      .gone_grace_ms = (int)o->gone_grace_ms,
                                      .personality = p->personality};
    struct inventory_listener listener = {.on_change = on_inventory, .ctx = p};
    p->inv = inventory_start(&iopts, &listener, 1, err);
    return p->inv != NULL ? 0 : -1;
}

static int start(struct plugin *p, struct error *err)
{
    if (bind_metrics(p, err) < 0 || open_api(p, err) < 0 || open_prepare(p, err) < 0)
        return -1;
    p->health = health_service_new(err);
    if (p->health == NULL || start_claims(p, err) < 0 || start_publishing(p, err) < 0 ||
        start_servers(p, err) < 0)
        return -1;
    if (p->metrics_srv != NULL) {
        if (metrics_server_serve(p->metrics_srv, p->metrics, metrics_state, p, err) < 0)
            return error_prefix(err, "--metrics-address");
        LOG_I("metrics: serving %s", metrics_server_url(p->metrics_srv));
    }
    return 0;
}

/* SIGTERM to exit, whatever the API server does: every API call in flight
 * is cancelled at SIGTERM (prepares waiting on one are answered with an
 * error), the parts stop, and --cleanup-on-exit gets what is left until
 * CLEANUP_END_MS.  The DaemonSet's terminationGracePeriodSeconds is larger
 * (docs/reliability.md). */
#define SHUTDOWN_BUDGET_MS 2000
#define CLEANUP_END_MS     1600 /* after SIGTERM; the rest of the budget is local work */
/* The last resort (driver/shutdown.h): the exit itself gets the rest. */
#define WATCHDOG_MS (SHUTDOWN_BUDGET_MS - 100)
/* Threads still blocked in the fakehw tree this long after SIGTERM (a read
 * of a stopped or hung fakehw, which no signal ends) are left behind. */
#define TREE_STOP_MS 1000
/* ...but a thread gets at least this long once asked to stop. */
#define TREE_STOP_MIN_MS 100

static long long tree_deadline(long long t0)
{
    long long at = t0 + TREE_STOP_MS, soonest = monotonic_ms() + TREE_STOP_MIN_MS;
    return at > soonest ? at : soonest;
}

/* Stops in reverse order: the kubelet loses the plugin first (registration
 * socket removed), then the DRA socket, then the background parts.
 * t0: when SIGTERM came (monotonic_ms), 0 after a failed start.
 * *left: a thread was left behind in the fakehw tree; what it may still
 * touch (the API client, the metrics) is not freed, and the caller must end
 * the process with _exit (no exit handlers run under its feet). */
static int stop(struct plugin *p, long long t0, bool *left)
{
    bool signalled = t0 != 0;
    if (!signalled)
        t0 = monotonic_ms();
    if (p->kc != NULL)
        kube_client_set_deadline(p->kc, t0);
    int rc = 0;
    if (p->opt.ready_file != NULL && *p->opt.ready_file)
        unlink(p->opt.ready_file);
    /* First: a scrape reads the parts stopped below. */
    metrics_server_stop(p->metrics_srv);
    rpc_server_free(p->reg_srv);
    rpc_server_free(p->dra_srv);
    registration_service_free(p->reg);
    dra_service_free(p->dra);
    /* Past its deadline a thread blocked in the tree is left behind: the
     * checkpoint below is local and must be folded whatever fakehw does. */
    *left = inventory_stop_by(p->inv, tree_deadline(t0)) < 0;
    claim_status_stop(p->status);
    p->status = NULL;
    *left = (binder_stop_by(p->binder, tree_deadline(t0)) < 0) || *left;
    p->binder = NULL;
    claim_watch_stop(p->claims); /* a binder left behind may still read what it keeps */
    struct error err;
    slice_publisher_halt(p->pub);
    if (p->kc != NULL && p->opt.cleanup_on_exit) /* the API again, until CLEANUP_END_MS */
        kube_client_set_deadline(p->kc, t0 + CLEANUP_END_MS);
    if (p->pub != NULL && slice_publisher_stop(p->pub, p->opt.cleanup_on_exit, &err) < 0) {
        LOG_E("deleting ResourceSlices on exit: %s", err.msg);
        rc = -1;
    }
    health_service_free(p->health);
    prepare_state_close(p->prep);
    device_snapshot_put(p->last_snap);
    if (signalled)
        LOG_I("stopped %lld ms after the signal (budget %d ms)%s", monotonic_ms() - t0,
              SHUTDOWN_BUDGET_MS,
              *left ? "; a thread blocked in the fakehw tree was left behind" : "");
    if (!*left) {
        claim_watch_free(p->claims);
        kube_client_free(p->kc);
        metrics_free(p->metrics);
    }
    return rc;
}

/* Writes the ready file once the kubelet registered the plugin and the pool
 * is published; removes it again if the kubelet drops the registration. */
static void update_ready_file(struct plugin *p, bool *ready)
{
    if (p->opt.ready_file == NULL || *p->opt.ready_file == '\0')
        return;
    struct slice_publisher_status st;
    slice_publisher_get_status(p->pub, &st);
    bool now = registration_service_registered(p->reg) && st.published;
    if (now == *ready)
        return;
    struct error err;
    if (now) {
        char text[256];
        int len = snprintf(text, sizeof(text), "registered, %zu devices in %zu slices\n",
                           st.devices, st.slices);
        if (atomic_write_file(p->opt.ready_file, text, (size_t)len, 0644, &err) < 0) {
            LOG_E("writing the ready file: %s", err.msg);
            return;
        }
        LOG_I("ready: registered with the kubelet, %zu devices published in %zu slices", st.devices,
              st.slices);
    } else {
        unlink(p->opt.ready_file);
        LOG_W("not ready any more: registered=%d published=%d",
              registration_service_registered(p->reg), st.published);
    }
    *ready = now;
}

int main(int argc, char **argv)
{
    /* One malloc arena for all threads.  The big allocations (a LIST answer
     * of the whole pool, about 26 MB with 4,096 GPUs, the device snapshot)
     * happen on different threads one after the other; with an arena per
     * thread, memory freed by one thread stays resident and the next thread
     * takes fresh pages, so the peak was their sum (88 MiB on a restart with
     * 4,096 published GPUs, 61 MiB with one arena).  Before any thread
     * starts; tcache keeps small allocations off the arena lock. */
    mallopt(M_ARENA_MAX, 1);
    rpc_process_setup();
    struct plugin p = {0};
    int parsed = parse_options(&p, argc, argv);
    if (parsed != FLAGS_GO_ON)
        return parsed;

    /* Before any other thread: they all inherit the blocked signals, which
     * the signal thread takes; from a signal on, the process ends within
     * SHUTDOWN_BUDGET_MS whatever a thread is blocked on. */
    struct error err;
    if (shutdown_start(WATCHDOG_MS, &err) < 0) {
        fprintf(stderr, "fakehw-kubelet-plugin: %s\n", err.msg);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);

    /* A ready file left by a crashed run (an emptyDir survives a container
     * restart) must not make the pod look ready before this run registers. */
    if (p.opt.ready_file != NULL && *p.opt.ready_file)
        unlink(p.opt.ready_file);
    if (strcmp(p.opt.fakehw_host_root, p.opt.fakehw_root) == 0)
        LOG_I("starting fakehw-kubelet-plugin %s (git %s): driver %s, node %s, fakehw tree %s",
              FAKEHW_DRA_VERSION, fakehw_git_commit, p.opt.driver_name, p.opt.node_name,
              p.opt.fakehw_root);
    else
        LOG_I("starting fakehw-kubelet-plugin %s (git %s): driver %s, node %s, fakehw tree %s "
              "(%s on the host)",
              FAKEHW_DRA_VERSION, fakehw_git_commit, p.opt.driver_name, p.opt.node_name,
              p.opt.fakehw_root, p.opt.fakehw_host_root);
    if (p.opt.additional_xids != NULL && *p.opt.additional_xids) {
        char ignored[1024];
        xid_policy_format(&p.xids, ignored, sizeof(ignored));
        LOG_I("XIDs ignored as application errors: %s", ignored);
    }
    bool left = false;
    if (start(&p, &err) < 0) {
        LOG_E("%s", err.msg);
        stop(&p, 0, &left);
        shutdown_finished();
        if (left)
            _exit(1);
        return 1;
    }
    LOG_I("serving: registration %s, DRA %s%s", p.sockets.registration, p.sockets.dra,
          rolling_update(&p.opt) ? " (rolling update: prepare state shared with other instances)"
                                 : "");

    /* Short ticks until ready, so the ready file follows registration and
     * publishing closely; then one a second, only to notice a lost
     * registration, so an idle plugin hardly wakes up. */
    bool ready = false;
    for (;;) {
        int sig = shutdown_wait(ready ? 1000 : 20);
        if (sig != 0) {
            LOG_I("%s: shutting down%s", strsignal(sig),
                  p.opt.cleanup_on_exit ? " and deleting this node's ResourceSlices" : "");
            break;
        }
        update_ready_file(&p, &ready);
    }
    int status = stop(&p, shutdown_signal_ms(), &left) < 0 ? 1 : 0;
    shutdown_finished();
    if (left)
        _exit(status); /* the thread left behind may still run: no exit handlers */
    return status;
}
