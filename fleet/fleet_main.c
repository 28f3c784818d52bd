// SPDX-License-Identifier: Apache-2.0
/* fakehw-fleet-publisher: publishes the ResourceSlices of N fake nodes from
 * one fakehw config, one pool per node, with the plugin's own slice builder
 * and publisher (driver/publish/), keeps them published, applies the
 * config's flips to the right node's slices, attaches the attachable
 * devices the scheduler allocates with the plugin's own binder
 * (driver/bind/, one for the fleet: fleet_bind.h), and deletes every slice
 * it published when it stops.  docs/fleet.md. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cleanup.h"
#include "attacher.h"
#include "driver/bind/binder.h"
#include "driver/claims/claim_watch.h"
#include "driver/kube/kube_client.h"
#include "driver/publish/slice_publisher.h"
#include "driver/publish/slice_watch.h"
#include "driver/publish/sync_gate.h"
#include "error.h"
#include "fleet_bind.h"
#include "fleet_limits.h"
#include "fleet_node.h"
#include "fleet_pools.h"
#include "flags.h"
#include "log.h"
#include "monotonic.h"
#include "stop_signals.h"
#include "version.h"

#define FLEET_MAX_NODES    100000
#define CONFIG_MAX_BYTES   (4 << 20)
#define DELETE_WORKERS     8
#define PUBLISH_TIMEOUT_MS (30 * 60 * 1000)
/* How often the first publish looks for a stop signal. */
#define STOP_POLL_MS 200
/* publish_all's result when a stop signal came before every pool was
 * published: the slices are deleted and the program exits with success. */
#define PUBLISH_STOPPED 1
/* A reconcile pass reads every claim of the driver: at most ten a second. */
#define RECONCILE_GAP_MS 100
/* Pools that talk to the API server at once: as many as the kube client
 * keeps connections for (KUBE_POOL_MAX), so none is opened and dropped per
 * sync. */
#define SYNC_CONCURRENCY_DEFAULT 8
#define SYNC_CONCURRENCY_MAX     256

static const char description[] =
    "Publishes the ResourceSlices of --nodes fake nodes named <node-prefix><i> (i = 0 ..\n"
    "N-1), each with the devices the fakehw config gives that node (its nodes section or\n"
    "glob, else defaults), one pool per node with nodeName = the node, through the\n"
    "kubelet plugin's own slice builder and publisher.  Every node's slices are checked\n"
    "against the API server's limits first; a config that breaks one is refused before\n"
    "anything is published.  The config's flips reach the node they are for.  With\n"
    "--bind (the default) one binder for every node attaches the attachable devices\n"
    "the scheduler allocates with binding conditions, in that node's inventory, and\n"
    "sets the claims' attached or attach-failed conditions.  On SIGTERM or SIGINT\n"
    "every slice it published is deleted.  The Node objects must exist (KWOK makes\n"
    "them: scripts/fleet/fleet.sh).";

struct options {
    const char *config, *prefix, *kubeconfig, *driver_name, *personality, *taint_effect,
        *ready_file;
    long nodes, resync_ms, verbosity;
    long sync_concurrency;
    bool check, list, bind;
};

struct fleet;

struct member {
    struct fleet *f;
    struct fleet_node *node;
    struct slice_publisher *pub;
};

struct fleet {
    struct options o;
    enum personality personality;
    enum taint_effect effect;
    struct member *m;
    size_t n;
    size_t devices;
    struct kube_client *kc;
    /* Publishing: one slice watch and one gate for all. */
    struct slice_watch *slices;
    struct sync_gate *gate;
    /* Binding: one attach timer, one claim watch and one binder for all. */
    struct fleet_node **nodes; /* the members' nodes, for the timer and the binder */
    struct attacher *attacher;
    struct fleet_bind *bind;
    struct claim_watch *claims;
    /* Flips and attach ends kick it from their threads: set and cleared
     * under binder_lock. */
    pthread_mutex_t binder_lock;
    struct binder *binder;
    atomic_size_t next_delete;
    atomic_size_t delete_failures;
    sigset_t stop; /* SIGTERM and SIGINT, blocked in every thread */
};

static const struct flags_program program = {"fakehw-fleet-publisher", "[flags]", description};

/* FLAGS_GO_ON with o filled in, else the exit status. */
static int read_flags(struct options *o, int argc, char **argv)
{
    const struct flag flags[] = {
        {"config", "FAKEHW_CONFIG", FLAG_STRING, &o->config, "the fakehw config (required)"},
        {"nodes", "FLEET_NODES", FLAG_INT, &o->nodes, "how many fake nodes"},
        {"node-prefix", "FLEET_NODE_PREFIX", FLAG_STRING, &o->prefix,
         "node names are this followed by 0 .. nodes-1"},
        {"kubeconfig", "KUBECONFIG", FLAG_STRING, &o->kubeconfig,
         "kubeconfig file; empty = in-cluster service account"},
        {"driver-name", "DRIVER_NAME", FLAG_STRING, &o->driver_name,
         "DRA driver name; empty = the personality's"},
        {"personality", "PERSONALITY", FLAG_STRING, &o->personality,
         "fakehw or nvidia, as for fakehw-kubelet-plugin"},
        {"taint-effect", "TAINT_EFFECT", FLAG_STRING, &o->taint_effect,
         "effect of the taint on unhealthy devices: NoSchedule, NoExecute or None"},
        {"resync-ms", "FLEET_RESYNC_MS", FLAG_INT, &o->resync_ms,
         "each pool's periodic full sync, in ms (the watch repairs sooner)"},
        {"sync-concurrency", "FLEET_SYNC_CONCURRENCY", FLAG_INT, &o->sync_concurrency,
         "how many pools talk to the API server at once (a sync, a read of the Node)"},
        {"bind", "FLEET_BIND", FLAG_BOOL, &o->bind,
         "attach allocated attachable devices and set their claims' binding conditions "
         "(--bind=false: no claim watch, no binder)"},
        {"ready-file", "READY_FILE", FLAG_STRING, &o->ready_file,
         "written once every pool is published (its text: nodes, devices, milliseconds), "
         "removed on exit"},
        {"check", NULL, FLAG_BOOL, &o->check,
         "only check the config against the API server's limits for every node and exit"},
        {"list", NULL, FLAG_BOOL, &o->list,
         "with --check: one line per node, its name and its GPUs (devices that are not "
         "partitions), for the Node objects' allocatable"},
        {"v", "LOG_VERBOSITY", FLAG_INT, &o->verbosity, "log verbosity"},
        FLAG_VERSION_ENTRY,
    };
    int next;
    int parsed =
        flags_main(flags_read_versioned, flags, FLAGS_COUNT(flags), argc, argv, &program, &next);
    if (parsed == FLAGS_GO_ON && next < argc)
        return flags_usage_error(&program, "unexpected argument \"%s\" (see --help)", argv[next]);
    return parsed;
}

static int check_options(struct fleet *f, struct error *err)
{
    struct options *o = &f->o;
    if (o->config == NULL || *o->config == '\0')
        return error_set(err, "--config is required");
    if (o->nodes < 1 || o->nodes > FLEET_MAX_NODES)
        return error_set(err, "--nodes %ld: must be 1..%d", o->nodes, FLEET_MAX_NODES);
    if (o->resync_ms < 1000)
        return error_set(err, "--resync-ms %ld: must be at least 1000", o->resync_ms);
    if (o->sync_concurrency < 1 || o->sync_concurrency > SYNC_CONCURRENCY_MAX)
        return error_set(err, "--sync-concurrency %ld: must be 1..%d", o->sync_concurrency,
                         SYNC_CONCURRENCY_MAX);
    if (personality_parse(o->personality, &f->personality, err) < 0)
        return error_prefix(err, "--personality");
    if (o->driver_name == NULL || *o->driver_name == '\0')
        o->driver_name = personality_driver_name(f->personality);
    return taint_effect_parse(o->taint_effect, &f->effect, err);
}

static char *read_config(const char *path, size_t *len, struct error *err)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL) {
        error_set_errno(err, errno, "%s", path);
        return NULL;
    }
    char *text = malloc(CONFIG_MAX_BYTES + 1);
    size_t n = text != NULL ? fread(text, 1, CONFIG_MAX_BYTES + 1, fp) : 0;
    bool bad = text == NULL || ferror(fp) || n > CONFIG_MAX_BYTES;
    fclose(fp);
    if (bad) {
        error_set(err, "%s: cannot read it, or larger than %d bytes", path, CONFIG_MAX_BYTES);
        free(text);
        return NULL;
    }
    *len = n;
    return text;
}

static void print_node(const char *name, const struct device_snapshot *snap)
{
    size_t gpus = 0;
    for (size_t i = 0; i < snap->n; i++)
        gpus += snap->devs[i].parent[0] == '\0';
    printf("%s %zu\n", name, gpus);
}

/* Every node: loaded, its devices read and its pool checked. */
static int load_nodes(struct fleet *f, const char *text, size_t len, struct error *err)
{
    f->m = calloc((size_t)f->o.nodes, sizeof(*f->m));
    if (f->m == NULL)
        return error_set(err, "out of memory");
    for (long i = 0; i < f->o.nodes; i++) {
        char name[254];
        if (snprintf(name, sizeof(name), "%s%ld", f->o.prefix, i) >= (int)sizeof(name))
            return error_set(err, "node name %s%ld: longer than 253 characters", f->o.prefix, i);
        struct fleet_node *node = fleet_node_new(text, len, f->o.config, name, f->personality, err);
        if (node == NULL)
            return -1;
        f->m[f->n].f = f;
        f->m[f->n++].node = node;
        struct device_snapshot *snap = fleet_node_snapshot(node, err);
        if (snap == NULL)
            return -1;
        struct fleet_pool_check c = {.driver = f->o.driver_name,
                                     .node = name,
                                     .personality = f->personality,
                                     .effect = f->effect};
        int rc = fleet_check_pool(&c, snap, err);
        f->devices += snap->n;
        if (rc == 0 && f->o.check && f->o.list)
            print_node(name, snap);
        device_snapshot_put(snap);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* A flip, or an attach state that moved (which changes no slice). */
static void on_change(void *ctx, struct fleet_node *node, struct device_snapshot *snap)
{
    struct member *m = ctx;
    LOG_V(2, "fleet: node %s: a change, %zu devices", fleet_node_name(node), snap->n);
    slice_publisher_update(m->pub, snap, true);
    pthread_mutex_lock(&m->f->binder_lock);
    binder_devices_kick(m->f->binder);
    pthread_mutex_unlock(&m->f->binder_lock);
}

static int start_member(struct fleet *f, struct member *m, struct error *err)
{
    struct slice_publisher_options so = {.driver_name = f->o.driver_name,
                                         .node_name = fleet_node_name(m->node),
                                         .taint_effect = f->effect,
                                         .policy = UNHEALTHY_POLICY_TAINT,
                                         .personality = f->personality,
                                         .resync_ms = (int)f->o.resync_ms,
                                         .shared_watch = true,
                                         .gate = f->gate};
    m->pub = slice_publisher_start(f->kc, &so, err);
    if (m->pub == NULL)
        return error_prefix(err, "node %s", fleet_node_name(m->node));
    struct device_snapshot *snap = fleet_node_snapshot(m->node, err);
    if (snap == NULL)
        return -1;
    slice_publisher_update(m->pub, snap, false);
    device_snapshot_put(snap);
    return fleet_node_start_flips(m->node, on_change, m, err);
}

static int open_api(struct fleet *f, struct error *err)
{
    struct kube_config kcfg = {0};
    if (kube_config_load(f->o.kubeconfig, &kcfg, err) < 0)
        return error_prefix(err, "loading the Kubernetes client configuration");
    struct kube_client_options kopts = {.user_agent = "fakehw-fleet-publisher"};
    f->kc = kube_client_new(&kcfg, &kopts, err);
    kube_config_free(&kcfg);
    return f->kc != NULL ? 0 : -1;
}

/* The attach timer of every node's inventory, before anything else uses
 * them (it registers as their waker). */
static int start_attacher(struct fleet *f, struct error *err)
{
    f->nodes = calloc(f->n, sizeof(*f->nodes));
    if (f->nodes == NULL)
        return error_set(err, "out of memory");
    cleanup_free struct live_inventory **invs = calloc(f->n, sizeof(*invs));
    if (invs == NULL)
        return error_set(err, "out of memory");
    for (size_t i = 0; i < f->n; i++) {
        f->nodes[i] = f->m[i].node;
        invs[i] = fleet_node_inventory(f->m[i].node);
    }
    f->attacher = attacher_start_many(invs, f->n, err);
    return f->attacher != NULL ? 0 : -1;
}

/* One claim watch of the driver's claims in every pool, and one binder
 * that dispatches each allocation result to its node. */
static int start_binder(struct fleet *f, struct error *err)
{
    f->bind = fleet_bind_new(f->o.prefix, f->nodes, f->n);
    if (f->bind == NULL)
        return error_set(err, "out of memory");
    struct claim_watch_options wopts = {.driver_name = f->o.driver_name};
    f->claims = claim_watch_start(f->kc, &wopts, err);
    if (f->claims == NULL)
        return -1;
    struct binder_devices dev;
    fleet_bind_devices(f->bind, &dev);
    struct binder_options bopts = {
        .driver_name = f->o.driver_name, .devices = &dev, .reconcile_gap_ms = RECONCILE_GAP_MS};
    struct binder *b = binder_start(f->kc, f->claims, &bopts, err);
    if (b == NULL)
        return -1;
    pthread_mutex_lock(&f->binder_lock);
    f->binder = b;
    pthread_mutex_unlock(&f->binder_lock);
    LOG_I("fleet: binder up: one claim watch of %s for %zu pools", f->o.driver_name, f->n);
    return 0;
}

/* The binder before the nodes it reads: binder, watch, timer.  Again is
 * fine. */
static void stop_binding(struct fleet *f)
{
    pthread_mutex_lock(&f->binder_lock);
    struct binder *b = f->binder;
    f->binder = NULL;
    pthread_mutex_unlock(&f->binder_lock);
    binder_stop(b);
    claim_watch_free(f->claims);
    f->claims = NULL;
    fleet_bind_free(f->bind);
    f->bind = NULL;
    attacher_stop(f->attacher);
    f->attacher = NULL;
    free(f->nodes);
    f->nodes = NULL;
}

static int write_ready(struct fleet *f, long long ms, struct error *err)
{
    LOG_I("fleet: %zu pools (%zu devices) published in %lld ms", f->n, f->devices, ms);
    if (f->o.ready_file == NULL || *f->o.ready_file == '\0')
        return 0;
    char text[128];
    snprintf(text, sizeof(text), "nodes %zu\ndevices %zu\npublishedMs %lld\n", f->n, f->devices,
             ms);
    return atomic_write_file(f->o.ready_file, text, strlen(text), 0644, err);
}

static struct slice_publisher *member_publisher(void *ctx, size_t i)
{
    struct fleet *f = ctx;
    return f->m[i].pub;
}

/* The publisher of a node's pool: its index read from the name. */
static struct slice_publisher *pool_publisher(void *ctx, const char *node)
{
    struct fleet *f = ctx;
    long i = fleet_pool_index(f->o.prefix, f->nodes, f->n, node);
    return i >= 0 ? f->m[i].pub : NULL;
}

/* One watch of the driver's slices for every pool, once every publisher
 * exists: each event goes to its node's publisher. */
static int start_slice_watch(struct fleet *f, struct error *err)
{
    struct slice_watch_options wo = {
        .driver_name = f->o.driver_name,
        .publishers = {.n = f->n, .at = member_publisher, .of_node = pool_publisher, .ctx = f}};
    f->slices = slice_watch_start(f->kc, &wo, err);
    if (f->slices == NULL)
        return -1;
    LOG_I("fleet: one slice watch of %s for %zu pools, %ld of them talking to the API server "
          "at once",
          f->o.driver_name, f->n, f->o.sync_concurrency);
    return 0;
}

/* Before the nodes and publishers it reads; again is fine. */
static void stop_slice_watch(struct fleet *f)
{
    if (f->slices == NULL)
        return;
    struct slice_watch_status st;
    slice_watch_get_status(f->slices, &st);
    slice_watch_stop(f->slices);
    f->slices = NULL;
    LOG_I("fleet: the slice watch listed %lu times, watched %lu times and handed on %lu events "
          "(%lu of no pool of the fleet)",
          st.lists, st.watches, st.events, st.unclaimed);
}

/* A stop signal that came during the first publish: logged, true. */
static bool stop_asked(const struct fleet *f)
{
    int sig = stop_signals_take_pending(&f->stop);
    if (sig != 0)
        LOG_I("fleet: signal %d before every pool was published, stopping", sig);
    return sig != 0;
}

/* Until node i has published (0), a stop signal came (PUBLISH_STOPPED) or
 * the publish timeout passed (-1), in steps short enough to stop at once. */
static int wait_published(const struct fleet *f, size_t i, long long t0, struct error *err)
{
    for (;;) {
        if (stop_asked(f))
            return PUBLISH_STOPPED;
        long long left = t0 + PUBLISH_TIMEOUT_MS - monotonic_ms();
        if (left <= 0)
            return error_set(err, "node %s: not published after %d s",
                             fleet_node_name(f->m[i].node), PUBLISH_TIMEOUT_MS / 1000);
        int step = left < STOP_POLL_MS ? (int)left : STOP_POLL_MS;
        if (slice_publisher_wait_published(f->m[i].pub, step) == 0)
            return 0;
    }
}

/* Every publisher started, then waited for until each has published: 0,
 * PUBLISH_STOPPED when a stop signal came first, or -1. */
static int publish_all(struct fleet *f, struct error *err)
{
    long long t0 = monotonic_ms();
    f->gate = sync_gate_new((unsigned)f->o.sync_concurrency);
    if (f->gate == NULL)
        return error_set(err, "out of memory");
    for (size_t i = 0; i < f->n; i++) {
        if (stop_asked(f))
            return PUBLISH_STOPPED;
        if (start_member(f, &f->m[i], err) < 0)
            return -1;
    }
    if (start_slice_watch(f, err) < 0)
        return -1;
    for (size_t i = 0; i < f->n; i++) {
        int rc = wait_published(f, i, t0, err);
        if (rc != 0)
            return rc;
        if ((i + 1) % 500 == 0)
            LOG_I("fleet: %zu of %zu pools published", i + 1, f->n);
    }
    return write_ready(f, monotonic_ms() - t0, err);
}

static void *delete_worker(void *arg)
{
    struct fleet *f = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&f->next_delete, 1);
        if (i >= f->n)
            return NULL;
        struct error err = {{0}};
        if (f->m[i].pub != NULL && slice_publisher_stop(f->m[i].pub, true, &err) < 0) {
            LOG_E("fleet: %s", err.msg);
            atomic_fetch_add(&f->delete_failures, 1);
        }
        f->m[i].pub = NULL;
    }
}

/* The slice watch and the flips first (nothing asks for a sync any more),
 * then every publisher stopped with its slices deleted, DELETE_WORKERS at a
 * time. */
static int stop_all(struct fleet *f)
{
    stop_slice_watch(f);
    stop_binding(f);
    for (size_t i = 0; i < f->n; i++) {
        fleet_node_free(f->m[i].node);
        f->m[i].node = NULL;
    }
    for (size_t i = 0; i < f->n; i++)
        slice_publisher_halt(f->m[i].pub);
    pthread_t t[DELETE_WORKERS];
    int started = 0;
    for (int i = 0; i < DELETE_WORKERS; i++)
        started += pthread_create(&t[started], NULL, delete_worker, f) == 0;
    if (started == 0)
        delete_worker(f);
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    size_t failed = atomic_load(&f->delete_failures);
    if (f->gate != NULL)
        LOG_I("fleet: pools talking to the API server at once: at most %u of %ld allowed",
              sync_gate_peak(f->gate), f->o.sync_concurrency);
    if (failed == 0)
        LOG_I("fleet: every slice of %zu pools deleted", f->n);
    return failed == 0 ? 0 : -1;
}

static void wait_for_signal(const struct fleet *f)
{
    LOG_I("fleet: signal %d, stopping", stop_signals_wait(&f->stop));
}

static int run(struct fleet *f, struct error *err)
{
    size_t len = 0;
    char *text = read_config(f->o.config, &len, err);
    if (text == NULL)
        return -1;
    int rc = load_nodes(f, text, len, err);
    free(text);
    if (rc < 0)
        return -1;
    if (f->o.check) {
        fprintf(f->o.list ? stderr : stdout,
                "%zu nodes, %zu devices: within the API server's limits\n", f->n, f->devices);
        return 0;
    }
    if (open_api(f, err) < 0 || start_attacher(f, err) < 0)
        return -1;
    rc = publish_all(f, err);
    if (rc == 0 && f->o.bind)
        rc = start_binder(f, err);
    if (rc == 0)
        wait_for_signal(f);
    if (rc == PUBLISH_STOPPED)
        rc = 0;
    if (f->o.ready_file != NULL && *f->o.ready_file != '\0')
        remove(f->o.ready_file);
    if (stop_all(f) < 0 && rc == 0)
        rc = error_set(err, "some slices could not be deleted (see above)");
    return rc;
}

int main(int argc, char **argv)
{
    struct fleet f = {.o = {.prefix = "fleet-node-",
                            .personality = "fakehw",
                            .taint_effect = "NoSchedule",
                            .nodes = 1,
                            .resync_ms = 300000,
                            .verbosity = 0,
                            .sync_concurrency = SYNC_CONCURRENCY_DEFAULT,
                            .bind = true}};
    int parsed = read_flags(&f.o, argc, argv);
    if (parsed != FLAGS_GO_ON)
        return parsed;
    pthread_mutex_init(&f.binder_lock, NULL);
    log_verbosity = (int)f.o.verbosity;
    struct error err = {{0}};
    if (check_options(&f, &err) < 0)
        return flags_usage_error(&program, "%s", err.msg);
    /* Blocked in every thread: wait_for_signal takes them. */
    stop_signals_block(&f.stop);
    int rc = run(&f, &err);
    if (rc < 0)
        fprintf(stderr, "fakehw-fleet-publisher: %s\n", err.msg);
    stop_slice_watch(&f);
    stop_binding(&f);
    for (size_t i = 0; i < f.n; i++) {
        fleet_node_free(f.m[i].node);
        slice_publisher_stop(f.m[i].pub, false, NULL);
    }
    free(f.m);
    sync_gate_free(f.gate);
    kube_client_free(f.kc);
    return rc < 0 ? 1 : 0;
}
