// SPDX-License-Identifier: Apache-2.0
/* The fakehw daemon: load the config, mount the tree, make device nodes,
 * run the flip scheduler and the reload thread, serve until told to stop,
 * then take everything down again. */
#define FUSE_USE_VERSION 314
#include <errno.h>
#include <fuse.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cli.h"
#include "config.h"
#include "devnodes.h"
#include "attacher.h"
#include "flips.h"
#include "fuse_tree.h"
#include "inventory.h"
#include "log.h"
#include "mountpoint.h"
#include "takeover.h"
#include "worker.h"

struct daemon {
    char config_path[PATH_MAX]; /* absolute (the daemon chdirs to /), read on every SIGHUP */
    char mount[PATH_MAX];
    char dev_dir[PATH_MAX]; /* "" = no device nodes */
    char node[256];
    bool allow_empty;
    struct live_inventory *inv;
    struct devnodes *devnodes;
    struct flip_scheduler *flips;
    struct attacher *attacher;
    struct fuse_tree *tree;
    pthread_t reload_thread;
    bool reload_started;
    atomic_bool stopping;
};

/* For the signal handlers. */
static _Atomic(struct fuse_tree *) signal_tree; /* lock-free: safe in a handler */
static sem_t reload_sem;

static void on_stop_signal(int sig)
{
    (void)sig;
    if (signal_tree != NULL)
        fuse_tree_exit(signal_tree);
}

static void on_reload_signal(int sig)
{
    (void)sig;
    sem_post(&reload_sem);
}

static void stop_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
}

static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    /* No SA_RESTART: the signal must interrupt the FUSE loop's read(2). */
    sa.sa_handler = on_stop_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_reload_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
}

/* mkdir -p then realpath, so the path survives the daemon's chdir("/"). */
static int absolute_dir(const char *dir, char *out, struct error *err)
{
    if (mkdir_p(dir, 0755, err) < 0)
        return -1;
    if (realpath(dir, out) == NULL)
        return error_set_errno(err, errno, "%s", dir);
    return 0;
}

/* Absolute, but symlinks kept: a ConfigMap volume swaps its ..data link on
 * update, and a SIGHUP must then read the new file, not the old target. */
static int absolute_path(const char *path, char *out, struct error *err)
{
    char cwd[PATH_MAX];
    int n;
    if (path[0] == '/') {
        n = snprintf(out, PATH_MAX, "%s", path);
    } else {
        if (getcwd(cwd, sizeof(cwd)) == NULL)
            return error_set_errno(err, errno, "config %s: current directory", path);
        n = snprintf(out, PATH_MAX, "%s/%s", cwd, path);
    }
    if (n < 0 || n >= PATH_MAX)
        return error_set(err, "config %s: path too long", path);
    return 0;
}

/* Loads the config for d->node; no section for the node is an error unless
 * --allow-empty (a mistyped --node would otherwise serve no GPUs quietly). */
static int load_config(const struct daemon *d, struct config *cfg, struct error *err)
{
    if (config_load_file(d->config_path, d->node, cfg, err) < 0)
        return -1;
    if (!cfg->matched && !d->allow_empty) {
        config_free(cfg);
        return error_set(err,
                         "%s: no nodes entry matches node \"%s\" and there is no defaults "
                         "section; check --node (or NODE_NAME), or pass --allow-empty to serve "
                         "no devices",
                         d->config_path, d->node);
    }
    return 0;
}

static void reload(struct daemon *d)
{
    struct config cfg;
    struct error err;
    LOG_I("SIGHUP: reloading %s", d->config_path);
    if (load_config(d, &cfg, &err) < 0) {
        LOG_E("reload failed, keeping the current inventory: %s", err.msg);
        return;
    }
    if (d->devnodes != NULL && devnodes_sync(d->devnodes, cfg.devices, cfg.ndevices, &err) < 0) {
        LOG_E("reload failed, keeping the current inventory: %s", err.msg);
        config_free(&cfg);
        return;
    }
    bool changed;
    if (inventory_replace(d->inv, cfg.devices, cfg.ndevices, &changed, &err) < 0) {
        LOG_E("reload failed: %s", err.msg);
    } else {
        if (flip_scheduler_replace(d->flips, cfg.flips, cfg.nflips, &err) < 0)
            LOG_E("reload: flips not rescheduled: %s", err.msg);
        LOG_I("reloaded %s: %zu devices from %s, %zu flips, %s, generation %llu", d->config_path,
              cfg.ndevices, cfg.section, cfg.nflips, changed ? "changed" : "unchanged",
              (unsigned long long)inventory_generation(d->inv));
    }
    config_free(&cfg);
}

static void *reload_main(void *arg)
{
    struct daemon *d = arg;
    for (;;) {
        while (sem_wait(&reload_sem) < 0 && errno == EINTR)
            ;
        if (atomic_load(&d->stopping))
            return NULL;
        reload(d);
    }
}

static int start_reload_thread(struct daemon *d, struct error *err)
{
    int rc = thread_start_quiet(&d->reload_thread, reload_main, d);
    if (rc != 0)
        return error_set_errno(err, rc, "starting the reload thread");
    d->reload_started = true;
    return 0;
}

/* --takeover-timeout: waits for the fakehw serving the mount point to leave.
 * A stop signal meanwhile ends the daemon cleanly (*stopped). */
static int await_mount_point(const struct daemon_options *o, bool *stopped, struct error *err)
{
    *stopped = false;
    if (o->takeover_timeout <= 0)
        return 0;
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    int sig = 0;
    int rc = takeover_wait(o->mount, o->takeover_timeout, &stop, &sig, err);
    if (rc == TAKEOVER_STOPPED) {
        LOG_I("%s while waiting for the mount point %s: exiting", strsignal(sig), o->mount);
        *stopped = true;
        return 0;
    }
    return rc;
}

static void teardown(struct daemon *d)
{
    atomic_store(&d->stopping, true);
    if (d->reload_started) {
        sem_post(&reload_sem);
        pthread_join(d->reload_thread, NULL);
    }
    flip_scheduler_stop(d->flips);
    attacher_stop(d->attacher);
    signal_tree = NULL;
    /* Device nodes before the unmount: a successor waiting for the unmount
     * (--takeover-timeout) makes the same nodes next, and must not lose
     * them to this removal. */
    devnodes_free(d->devnodes);
    if (d->tree != NULL) {
        fuse_tree_unmount(d->tree);
        LOG_I("unmounted %s", d->mount);
    }
    inventory_free(d->inv);
}

/* Logs a setup or serving failure; the exit status it leads to. */
static int log_failure(const struct error *err)
{
    LOG_E("%s", err->msg);
    return 1;
}

/* The node name, the config's absolute path and the config itself. */
static int load_inputs(struct daemon *d, const struct daemon_options *o, struct config *cfg,
                       struct error *err)
{
    if (o->node != NULL && *o->node != '\0')
        snprintf(d->node, sizeof(d->node), "%s", o->node);
    else if (default_node_name(d->node, sizeof(d->node)) < 0)
        return error_set(err, "no --node given and the hostname is unknown");
    if (absolute_path(o->config, d->config_path, err) < 0)
        return -1;
    d->allow_empty = o->allow_empty;
    return load_config(d, cfg, err);
}

/* The mount point, the live inventory, the device nodes and the mounted
 * tree, in that order (teardown undoes whichever were made). */
static int build_tree(struct daemon *d, const struct daemon_options *o, const struct config *cfg,
                      struct error *err)
{
    if (mountpoint_prepare(o->mount, o->clear_stale, err) < 0 ||
        absolute_dir(o->mount, d->mount, err) < 0)
        return -1;
    if (o->dev_dir != NULL && *o->dev_dir != '\0' && absolute_dir(o->dev_dir, d->dev_dir, err) < 0)
        return error_prefix(err, "device node directory");
    d->inv = inventory_new(d->node, d->dev_dir, cfg->devices, cfg->ndevices, err);
    if (d->inv == NULL)
        return -1;
    if (d->dev_dir[0] != '\0') {
        d->devnodes = devnodes_new(d->dev_dir, err);
        if (d->devnodes == NULL || devnodes_sync(d->devnodes, cfg->devices, cfg->ndevices, err) < 0)
            return -1;
    }
    d->tree = fuse_tree_mount(d->inv, d->mount, geteuid() == 0, err);
    if (d->tree == NULL)
        return -1;
    signal_tree = d->tree;
    return 0;
}

/* Sets up, then serves until a stop signal: the exit status.  daemon_run
 * takes down whatever was set up. */
static int serve(struct daemon *d, const struct daemon_options *o, struct config *cfg,
                 const sigset_t *sigs)
{
    struct error err;
    bool stopped;
    if (load_inputs(d, o, cfg, &err) < 0 || await_mount_point(o, &stopped, &err) < 0)
        return log_failure(&err);
    if (stopped)
        return 0;
    if (build_tree(d, o, cfg, &err) < 0)
        return log_failure(&err);
    LOG_I("node %s: %zu devices from %s (seed \"%s\"), %zu flips; tree at %s%s%s", d->node,
          cfg->ndevices, cfg->section, cfg->seed, cfg->nflips, d->mount,
          d->dev_dir[0] ? ", device nodes in " : "", d->dev_dir);
    /* Forks: threads start after it. */
    if (fuse_daemonize(o->foreground) != 0) {
        LOG_E("could not go to the background");
        return 1;
    }
    d->attacher = attacher_start(d->inv, &err);
    if (d->attacher != NULL)
        d->flips = flip_scheduler_start(d->inv, cfg->flips, cfg->nflips, &err);
    if (d->attacher == NULL || d->flips == NULL || start_reload_thread(d, &err) < 0)
        return log_failure(&err);
    config_free(cfg);
    /* The loop's worker threads inherit this mask and take the signals. */
    pthread_sigmask(SIG_UNBLOCK, sigs, NULL);
    int rc = fuse_tree_loop(d->tree, &err);
    pthread_sigmask(SIG_BLOCK, sigs, NULL);
    return rc < 0 ? log_failure(&err) : 0;
}

int daemon_run(const struct daemon_options *o)
{
    static struct daemon d; /* large path buffers; one daemon per process */
    struct config cfg = {0};
    sigset_t sigs;

    /* Signals wait until the loop runs: a SIGTERM during setup then still
     * unmounts cleanly instead of killing us with the mount in place. */
    stop_signals(&sigs);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    sem_init(&reload_sem, 0, 0);
    install_handlers();
    int status = serve(&d, o, &cfg, &sigs);
    teardown(&d);
    config_free(&cfg);
    sem_destroy(&reload_sem);
    return status;
}
