// SPDX-License-Identifier: Apache-2.0
/* grpc-test-server: the gRPC layer of the plugin with a fake prepare path,
 * for the bats suite (never installed).  Serves registration on
 * <registry-dir>/<driver>-reg.sock and DRA v1 + v1beta1 + health on
 * <plugin-dir>/dra.sock, like the plugin does.
 *
 * Health list: read from --health-file at start and again on SIGUSR1; one
 * device per line:
 *   POOL DEVICE healthy|unhealthy|unknown LAST_UPDATED [timeout=SECONDS] [MESSAGE...]
 * --ready-file is written when the kubelet (stand-in) registers us.
 * SIGTERM/SIGINT shut down; the time it took is logged. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cleanup.h"
#include "driver/grpc/dra_service.h"
#include "driver/grpc/health_service.h"
#include "driver/grpc/registration_service.h"
#include "driver/grpc/rpc_server.h"
#include "fake_prepare.h"
#include "flags.h"
#include "log.h"
#include "stop_signals.h"

/* The command line. */
struct opts {
    const char *registry_dir, *plugin_dir, *driver, *health_file, *ready_file;
    long workers, verbosity;
};

static const char *ready_file;

static void on_registration(void *ctx, bool registered, const char *error)
{
    (void)ctx;
    struct error err;
    if (ready_file == NULL)
        return;
    if (registered) {
        if (atomic_write_file(ready_file, "registered\n", 11, 0644, &err) < 0)
            LOG_E("ready file: %s", err.msg);
    } else {
        LOG_E("not registered: %s", error);
        unlink(ready_file);
    }
}

/* Parses the health file; -1 with err naming file and line. */
static int load_health(struct health_service *svc, const char *path, struct error *err)
{
    cleanup_fclose FILE *f = fopen(path, "r");
    if (f == NULL)
        return error_set_errno(err, errno, "%s", path);
    struct health_entry list[64];
    char lines[64][2048];
    size_t n = 0;
    int lineno = 0;
    while (n < 64 && fgets(lines[n], sizeof(lines[n]), f)) {
        lineno++;
        char *line = lines[n];
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '\0' || line[0] == '#')
            continue;
        char *save = NULL;
        char *pool = strtok_r(line, " ", &save);
        char *dev = strtok_r(NULL, " ", &save);
        char *state = strtok_r(NULL, " ", &save);
        char *when = strtok_r(NULL, " ", &save);
        char *msg = strtok_r(NULL, "", &save);
        long long timeout = 0;
        if (msg && !strncmp(msg, "timeout=", 8)) {
            timeout = strtoll(msg + 8, &msg, 10);
            msg += strspn(msg, " ");
        }
        if (!pool || !dev || !state || !when)
            return error_set(err, "%s:%d: want POOL DEVICE STATE LAST_UPDATED [MESSAGE]", path,
                             lineno);
        enum health_entry_status h;
        if (!strcmp(state, "healthy"))
            h = HEALTH_ENTRY_HEALTHY;
        else if (!strcmp(state, "unhealthy"))
            h = HEALTH_ENTRY_UNHEALTHY;
        else if (!strcmp(state, "unknown"))
            h = HEALTH_ENTRY_UNKNOWN;
        else
            return error_set(err, "%s:%d: state \"%s\" is not healthy, unhealthy or unknown", path,
                             lineno, state);
        list[n] = (struct health_entry){pool, dev, h, strtoll(when, NULL, 10), timeout, msg};
        n++;
    }
    return health_service_update(svc, list, n, err);
}

/* The services and their two servers, the DRA socket listening before the
 * registration socket announces it. */
struct servers {
    struct prepare_state *st;
    struct registration_service *reg;
    struct dra_service *dra;
    struct health_service *health;
    struct rpc_server *reg_srv, *dra_srv;
};

static int servers_start(struct servers *s, const struct opts *o, const char *reg_sock,
                         const char *dra_sock, struct error *err)
{
    const struct registration_config rc_cfg = {
        .driver_name = o->driver, .endpoint = dra_sock, .on_status = on_registration};
    if (!(s->reg = registration_service_new(&rc_cfg, err)) ||
        !(s->dra = dra_service_new(s->st, err)) || !(s->health = health_service_new(err)))
        return -1;
    if (o->health_file && load_health(s->health, o->health_file, err) < 0)
        return -1;
    const struct rpc_server_config dra_cfg = {"dra", dra_sock, (int)o->workers};
    const struct rpc_server_config reg_cfg = {"registration", reg_sock, 1};
    if (!(s->dra_srv = rpc_server_new(&dra_cfg, err)) ||
        dra_service_register(s->dra, s->dra_srv, err) ||
        health_service_register(s->health, s->dra_srv, err) || rpc_server_start(s->dra_srv, err))
        return -1;
    if (!(s->reg_srv = rpc_server_new(&reg_cfg, err)) ||
        registration_service_register(s->reg, s->reg_srv, err) || rpc_server_start(s->reg_srv, err))
        return -1;
    return 0;
}

static void servers_free(struct servers *s)
{
    rpc_server_free(s->reg_srv);
    rpc_server_free(s->dra_srv);
    registration_service_free(s->reg);
    dra_service_free(s->dra);
    health_service_free(s->health);
    fake_prepare_free(s->st);
}

/* Until SIGTERM or SIGINT; SIGUSR1 reloads the health file.  Then the
 * shutdown, timed. */
static void serve(const struct servers *s, const struct opts *o, const sigset_t *set)
{
    struct error err;
    for (;;) {
        int sig;
        if (sigwait(set, &sig) != 0)
            continue;
        if (sig != SIGUSR1)
            break;
        if (o->health_file && load_health(s->health, o->health_file, &err) < 0)
            LOG_E("reloading health: %s", err.msg);
        else
            LOG_I("health list reloaded");
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rpc_server_shutdown(s->reg_srv);
    rpc_server_shutdown(s->dra_srv);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    LOG_I("shut down in %ld ms",
          (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
}

int main(int argc, char **argv)
{
    rpc_process_setup();
    struct opts o = {NULL, NULL, "gpu.fakehw.example.com", NULL, NULL, 4, 0};
    const struct flag flags[] = {
        {"registry-dir", "TEST_REGISTRY_DIR", FLAG_STRING, &o.registry_dir,
         "kubelet plugins_registry directory"},
        {"plugin-dir", "TEST_PLUGIN_DIR", FLAG_STRING, &o.plugin_dir, "directory of dra.sock"},
        {"driver-name", "DRIVER_NAME", FLAG_STRING, &o.driver, "driver name"},
        {"health-file", "TEST_HEALTH_FILE", FLAG_STRING, &o.health_file,
         "device health list, reloaded on SIGUSR1"},
        {"ready-file", "READY_FILE", FLAG_STRING, &o.ready_file, "written once registered"},
        {"workers", "TEST_WORKERS", FLAG_INT, &o.workers, "handler threads of the DRA server"},
        {"v", "LOG_VERBOSITY", FLAG_INT, &o.verbosity, "log verbosity"},
    };
    const struct flags_program program = {
        "grpc-test-server", "[flags]",
        "The plugin's gRPC layer with a fake prepare path, for tests."};
    int next;
    int parsed = flags_main(flags_read, flags, FLAGS_COUNT(flags), argc, argv, &program, &next);
    if (parsed != FLAGS_GO_ON)
        return parsed;
    if (next != argc || !o.registry_dir || !o.plugin_dir)
        return flags_usage_error(&program,
                                 "--registry-dir and --plugin-dir are required, no arguments");
    log_verbosity = (int)o.verbosity;
    ready_file = o.ready_file;

    /* Signals are taken by sigwait in this thread only: SIGUSR1 as well. */
    sigset_t set;
    stop_signals_block(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    char reg_sock[4096], dra_sock[4096];
    snprintf(reg_sock, sizeof(reg_sock), "%s/%s-reg.sock", o.registry_dir, o.driver);
    snprintf(dra_sock, sizeof(dra_sock), "%s/dra.sock", o.plugin_dir);

    struct servers s = {.st = fake_prepare_new()};
    struct error err;
    int status = 0;
    if (servers_start(&s, &o, reg_sock, dra_sock, &err) == 0) {
        LOG_I("serving %s and %s", reg_sock, dra_sock);
        serve(&s, &o, &set);
    } else {
        fprintf(stderr, "grpc-test-server: %s\n", err.msg);
        status = 1;
    }
    servers_free(&s);
    if (ready_file)
        unlink(ready_file);
    return status;
}
