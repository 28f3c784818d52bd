// SPDX-License-Identifier: Apache-2.0
#include "world.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "kubelet_calls.h"

#define PATHF(buf, ...) snprintf((buf), sizeof(buf), __VA_ARGS__)

int world_init(struct world *w, const char *bin_dir, const char *base, const char *cdi_base,
               const char *name, struct error *err)
{
    memset(w, 0, sizeof(*w));
    PATHF(w->bin_dir, "%s", bin_dir);
    PATHF(w->dir, "%s/%s", base, name);
    PATHF(w->event_log, "%s/api-events.jsonl", w->dir);
    PATHF(w->mount, "%s/fakehw", w->dir);
    PATHF(w->registrar, "%s/registry", w->dir);
    PATHF(w->plugins, "%s/plugins", w->dir);
    PATHF(w->cdi, "%s/%s", cdi_base, name);
    PATHF(w->kubeconfig, "%s/kubeconfig", w->dir);
    PATHF(w->ready_file, "%s/ready", w->dir);
    PATHF(w->dra_sock, "%s/%s/dra.sock", w->plugins, WORLD_DRIVER);
    PATHF(w->reg_sock, "%s/%s-reg.sock", w->registrar, WORLD_DRIVER);
    if (strlen(w->dra_sock) > 107 || strlen(w->reg_sock) > 107)
        return error_set(err, "%s: socket paths over 107 bytes; use a shorter --work-dir", w->dir);
    /* The kubelet's directories exist before any plugin starts. */
    if (mkdir_p(w->dir, 0755, err) < 0 || mkdir_p(w->registrar, 0750, err) < 0 ||
        mkdir_p(w->plugins, 0750, err) < 0 || mkdir_p(w->mount, 0755, err) < 0 ||
        mkdir_p(w->cdi, 0755, err) < 0)
        return -1;
    return 0;
}

static int read_int_file(const char *path, long *out)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    int ok = fscanf(f, "%ld", out) == 1;
    fclose(f);
    return ok ? 0 : -1;
}

int world_start_api(struct world *w, struct error *err)
{
    char exe[2300], port_file[2300], log[2300];
    PATHF(exe, "%s/apiserver-standin", w->bin_dir);
    PATHF(port_file, "%s/api-port", w->dir);
    PATHF(log, "%s/apiserver-standin.log", w->dir);
    char *argv[16] = {exe,      "--port",   "0",           "--port-file", port_file,
                      "--node", WORLD_NODE, "--event-log", w->event_log,  NULL};
    if (w->tls) {
        if (world_make_certs(w->dir, WORLD_NODE, &w->certs, err) < 0)
            return error_prefix(err, "certificates for the API stand-in");
        char *tls[] = {"--tls-cert-file",   w->certs.server_cert, "--tls-key-file",
                       w->certs.server_key, "--client-ca-file",   w->certs.ca};
        memcpy(&argv[9], tls, sizeof(tls));
        argv[15] = NULL;
    }
    if (proc_spawn(&w->api, "apiserver-standin", argv, log, NULL, err) < 0)
        return -1;
    long port;
    if (wait_for_path(port_file, 10000, &w->api, NULL, err) < 0 ||
        read_int_file(port_file, &port) < 0)
        return error_prefix(err, "apiserver-standin port file");
    PATHF(w->api_url, "%s://127.0.0.1:%ld", w->tls ? "https" : "http", port);
    if (wait_for_path(w->event_log, 5000, &w->api, NULL, err) < 0)
        return error_prefix(err, "apiserver-standin --event-log");
    char kc[16384], ca[2500] = "", user[5000] = "{}";
    if (w->tls) {
        PATHF(ca, "\n    certificate-authority: %s", w->certs.ca);
        PATHF(user, "\n    client-certificate: %s\n    client-key: %s", w->certs.client_cert,
              w->certs.client_key);
    }
    int n = snprintf(kc, sizeof(kc),
                     "apiVersion: v1\nkind: Config\n"
                     "clusters:\n- name: bench\n  cluster:\n    server: %s%s\n"
                     "users:\n- name: bench\n  user: %s\n"
                     "contexts:\n- name: bench\n  context:\n    cluster: bench\n    user: bench\n"
                     "current-context: bench\n",
                     w->api_url, ca, user);
    return atomic_write_file(w->kubeconfig, kc, (size_t)n, 0600, err);
}

int world_start_fakehw(struct world *w, int gpus, struct error *err)
{
    char exe[2300], config[2300], log[2300], gen[2400];
    PATHF(exe, "%s/fakehw", w->bin_dir);
    PATHF(config, "%s/fakehw.yaml", w->dir);
    PATHF(log, "%s/fakehw.log", w->dir);
    PATHF(gen, "%s/generation", w->mount);
    char yaml[512];
    int plain = w->last_attachable ? gpus - 1 : gpus;
    int n = snprintf(yaml, sizeof(yaml),
                     "defaults:\n  devices:\n    - count: %d\n      profile: H100-SXM5-80GB\n%s%s",
                     plain, w->mig_dynamic ? "      mig: {mode: dynamic}\n" : "",
                     w->last_attachable
                         ? "    - profile: H100-SXM5-80GB\n      attach: {failure: never}\n"
                         : "");
    if (atomic_write_file(config, yaml, (size_t)n, 0644, err) < 0)
        return -1;
    char *argv[] = {exe,      "--config", config,         "--mount", w->mount,
                    "--node", WORLD_NODE, "--foreground", NULL};
    if (proc_spawn(&w->fakehw, "fakehw", argv, log, NULL, err) < 0)
        return -1;
    /* A mount raises no inotify event on the mount point: this waits by the
     * short re-check of wait_for_path. */
    if (wait_for_path(gen, 20000, &w->fakehw, NULL, err) < 0)
        return error_prefix(err, "mounting fakehw");
    return 0;
}

int world_spawn_plugin(struct world *w, struct error *err)
{
    char exe[2300], smi[2300], log[2300];
    PATHF(exe, "%s/fakehw-kubelet-plugin", w->bin_dir);
    PATHF(smi, "%s/fakegpu-smi", w->bin_dir);
    PATHF(log, "%s/plugin.log", w->dir);
    if (access(exe, X_OK) < 0)
        return error_set_errno(err, errno, "%s", exe);
    char *argv[24] = {exe,           "--node-name",
                      WORLD_NODE,    "--kubeconfig",
                      w->kubeconfig, "--kubelet-registrar-directory-path",
                      w->registrar,  "--kubelet-plugins-directory-path",
                      w->plugins,    "--cdi-root",
                      w->cdi,        "--fakehw-root",
                      w->mount,      "--fakegpu-smi",
                      smi,           "--ready-file",
                      w->ready_file, NULL};
    size_t n = 17;
    for (size_t i = 0; i < 4 && w->plugin_flags[i] != NULL; i++)
        argv[n++] = (char *)w->plugin_flags[i];
    argv[n] = NULL;
    return proc_spawn(&w->plugin, "fakehw-kubelet-plugin", argv, log, &w->plugin_spawn_ns, err);
}

int world_register(struct world *w, int timeout_ms, int64_t *t_ns, struct error *err)
{
    if (wait_for_path(w->reg_sock, timeout_ms, &w->plugin, NULL, err) < 0)
        return error_prefix(err, "registration socket");
    if (kubelet_register(w->reg_sock, timeout_ms / 1000.0, err) < 0)
        return -1;
    if (t_ns)
        *t_ns = now_real_ns();
    return 0;
}

int world_wait_ready(struct world *w, int timeout_ms, int64_t *t_ns, struct error *err)
{
    if (wait_for_path(w->ready_file, timeout_ms, &w->plugin, t_ns, err) < 0)
        return error_prefix(err, "plugin ready file");
    return 0;
}

int world_watch_health(struct world *w, struct error *err)
{
    w->health = health_watch_start(w->dra_sock, 3600, err);
    if (w->health == NULL)
        return -1;
    return health_watch_wait_first(w->health, 10000, err);
}

int world_start(struct world *w, int gpus, struct error *err)
{
    if (world_start_api(w, err) < 0 || world_start_fakehw(w, gpus, err) < 0 ||
        world_spawn_plugin(w, err) < 0 || world_register(w, 30000, NULL, err) < 0 ||
        world_wait_ready(w, 60000, NULL, err) < 0 || world_watch_health(w, err) < 0)
        return -1;
    return 0;
}

int world_stop(struct world *w, struct error *err)
{
    struct error e;
    int rc = 0;
    if (proc_stop(&w->plugin, 10000, &e) < 0 && rc == 0)
        rc = error_set(err, "%s", e.msg);
    health_watch_stop(w->health); /* the plugin ended the stream, or is gone */
    w->health = NULL;
    if (proc_stop(&w->fakehw, 10000, &e) < 0 && rc == 0)
        rc = error_set(err, "%s", e.msg);
    umount2(w->mount, MNT_DETACH); /* only does something if fakehw died mounted */
    if (proc_stop(&w->api, 10000, &e) < 0 && rc == 0)
        rc = error_set(err, "%s", e.msg);
    return rc;
}

int world_finish(struct world *w, int rc, bool remove, struct error *err)
{
    struct error e;
    if (world_stop(w, &e) < 0 && rc == 0)
        rc = error_set(err, "%s", e.msg);
    if (rc == 0 && remove && (remove_tree(w->dir, &e) < 0 || remove_tree(w->cdi, &e) < 0))
        rc = error_set(err, "%s", e.msg);
    return rc;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    if (remove(path) < 0 && errno != ENOENT)
        return -1;
    return 0;
}

int remove_tree(const char *dir, struct error *err)
{
    if (nftw(dir, remove_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0)
        return error_set_errno(err, errno, "removing %s", dir);
    return 0;
}
