// SPDX-License-Identifier: Apache-2.0
/* One benchmark "node" on loopback: the API stand-in (with its event log),
 * fakehw with N fake GPUs, the plugin, and the kubelet's part (registration
 * and the health stream), each in a fresh directory under the run's base
 * directory.  Parts are started in that order; world_stop stops what runs in
 * reverse order and reports any part that did not exit cleanly. */
#ifndef FAKEHW_BENCH_WORLD_H
#define FAKEHW_BENCH_WORLD_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "health_watch.h"
#include "proc.h"
#include "world_tls.h"

#define WORLD_DRIVER "gpu.fakehw.example.com"
#define WORLD_NODE   "bench-node"

struct world {
    char bin_dir[2048];
    char dir[2048];
    char api_url[64];
    char event_log[2300], mount[2300], registrar[2300], plugins[2300], cdi[2300];
    char kubeconfig[2300], ready_file[2300], dra_sock[2400], reg_sock[2400];
    struct proc api, fakehw, plugin;
    int64_t plugin_spawn_ns;     /* CLOCK_REALTIME right before the plugin was started */
    const char *plugin_flags[4]; /* extra plugin flags (NULL-terminated; set after world_init) */
    struct health_watch *health;
    bool mig_dynamic;         /* fakehw's H100s in dynamic MIG mode (set after world_init) */
    bool last_attachable;     /* the last GPU is attachable (fakehw `attach`; set after
                               * world_init) */
    bool tls;                 /* the API stand-in serves HTTPS, clients authenticate with
                               * certificates, as against a kube-apiserver (set after world_init) */
    struct world_certs certs; /* with tls: made by world_start_api */
};

/* Makes <base>/<name> and the paths in it, and <cdi_base>/<name> for the
 * CDI specs (a tmpfs, as /var/run/cdi is on a node); nothing runs yet. */
int world_init(struct world *w, const char *bin_dir, const char *base, const char *cdi_base,
               const char *name, struct error *err);

/* apiserver-standin on a free port with --event-log, the node object created;
 * with w->tls over HTTPS with client certificates (certificates made first). */
int world_start_api(struct world *w, struct error *err);

/* fakehw with `gpus` H100s (in dynamic MIG mode when w->mig_dynamic: each
 * then publishes 19 devices, the whole GPU and its 18 MIG placements), in
 * the foreground; returns once the tree is mounted. */
int world_start_fakehw(struct world *w, int gpus, struct error *err);

/* Starts the plugin (w->plugin_spawn_ns records when); does not wait. */
int world_spawn_plugin(struct world *w, struct error *err);

/* The kubelet's registration: waits for the registration socket (inotify on
 * the registry directory), then GetInfo + NotifyRegistrationStatus.
 * *t_ns gets CLOCK_REALTIME once the plugin acknowledged. */
int world_register(struct world *w, int timeout_ms, int64_t *t_ns, struct error *err);

/* Waits for the plugin's ready file; *t_ns gets when it was seen. */
int world_wait_ready(struct world *w, int timeout_ms, int64_t *t_ns, struct error *err);

/* Opens the kubelet's health stream (kept in w->health) and waits for its
 * first message. */
int world_watch_health(struct world *w, struct error *err);

/* Everything above, for suites that only need a node that is up. */
int world_start(struct world *w, int gpus, struct error *err);

/* Stops the plugin (the health stream ends with it), fakehw, the stand-in.
 * 0 when every part exited cleanly, else -1 with the first problem. */
int world_stop(struct world *w, struct error *err);

/* The end of a suite's world: world_stop, then, with remove, its
 * directories deleted.  rc is the run's own result; when it is 0, a part
 * that did not exit cleanly (or a directory that stayed) is the error.
 * Returns the result. */
int world_finish(struct world *w, int rc, bool remove, struct error *err);

/* Removes a directory tree (not crossing mount points). */
int remove_tree(const char *dir, struct error *err);

#endif
