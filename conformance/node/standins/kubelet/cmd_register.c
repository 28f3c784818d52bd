// SPDX-License-Identifier: Apache-2.0
/* kubelet-standin register: plugin discovery and registration, as the
 * kubelet's plugin watcher and DRA handler do it:
 *   - every unix socket under the registry directory (recursively) is a
 *     candidate; names starting with "." are ignored;
 *   - GetInfo with a 1 s deadline; type must be "DRAPlugin";
 *   - the API is the first entry of the plugin's supported_versions that
 *     the kubelet supports (the plugin's order wins, not the kubelet's);
 *   - NotifyRegistrationStatus(true), or (false, reason) on refusal;
 *   - an empty endpoint means the registration socket itself. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "flags.h"
#include "cleanup.h"
#include "grpc_client.h"
#include "proto/pluginregistration.pb-c.h"
#include "monotonic.h"
#include "standin.h"
#include "xalloc.h"

#define MAX_SOCKETS 64
#define MAX_DEPTH   8

struct socket_list {
    char *paths[MAX_SOCKETS];
    size_t n;
};

static void scan_dir(const char *dir, int depth, struct socket_list *out)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && out->n < MAX_SOCKETS) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) < 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth < MAX_DEPTH)
            scan_dir(path, depth + 1, out);
        else if (S_ISSOCK(st.st_mode))
            out->paths[out->n++] = xstrdup(path);
    }
    closedir(d);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_sockets(struct socket_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->paths[i]);
    l->n = 0;
}

/* Splits a comma-separated list in place. */
static size_t split_list(char *s, char **items, size_t max)
{
    size_t n = 0;
    for (char *save = NULL, *t = strtok_r(s, ",", &save); t && n < max;
         t = strtok_r(NULL, ",", &save))
        items[n++] = t;
    return n;
}

static void print_joined(char **items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%s%s", i ? "," : "", items[i]);
}

/* What this kubelet supports: its plugin services and health services. */
struct kubelet_services {
    char *svc[16];
    size_t n_svc;
    char *health[16]; /* newest first */
    size_t n_health;
};

/* The health service is optional.  Like the 1.37 kubelet: the first of the
 * kubelet's own list (newest first) that the plugin advertises, in
 * whatever order the plugin lists it; "" for none. */
static const char *health_version_of(const Pluginregistration__PluginInfo *info,
                                     const struct kubelet_services *ks)
{
    for (size_t k = 0; k < ks->n_health; k++)
        for (size_t i = 0; i < info->n_supported_versions; i++)
            if (!strcmp(info->supported_versions[i], ks->health[k]))
                return ks->health[k];
    return "";
}

/* Why the kubelet refuses the plugin (reason, "" when it does not), and
 * the service version it picks. */
static void judge_info(const Pluginregistration__PluginInfo *info,
                       const struct kubelet_services *ks, char *reason, size_t size,
                       const char **version)
{
    *version = "";
    reason[0] = '\0';
    if (strcmp(info->type, "DRAPlugin") != 0) {
        snprintf(reason, size, "no handler registered for plugin type: %s", info->type);
        return;
    }
    if (info->name[0] == '\0') {
        snprintf(reason, size, "plugin name is empty");
        return;
    }
    for (size_t i = 0; i < info->n_supported_versions && !(*version)[0]; i++)
        for (size_t k = 0; k < ks->n_svc; k++)
            if (!strcmp(info->supported_versions[i], ks->svc[k])) {
                *version = info->supported_versions[i];
                break;
            }
    if ((*version)[0])
        return;
    int n = snprintf(reason, size, "none of services supported by the plugin [");
    for (size_t i = 0; i < info->n_supported_versions && n > 0 && (size_t)n < size; i++)
        n += snprintf(reason + n, size - (size_t)n, "%s%s", i ? " " : "",
                      info->supported_versions[i]);
    if (n > 0 && (size_t)n < size)
        n += snprintf(reason + n, size - (size_t)n, "] are supported by the kubelet [");
    for (size_t k = 0; k < ks->n_svc && n > 0 && (size_t)n < size; k++)
        n += snprintf(reason + n, size - (size_t)n, "%s%s", k ? " " : "", ks->svc[k]);
    if (n > 0 && (size_t)n < size)
        snprintf(reason + n, size - (size_t)n, "]");
}

static void print_block(const char *sock, const Pluginregistration__PluginInfo *info,
                        const char *version, const char *health_version, const char *reason)
{
    bool ok = reason[0] == '\0';
    printf("socket=%s\ntype=", sock);
    print_oneline(stdout, info->type);
    printf("\ndriver=");
    print_oneline(stdout, info->name);
    printf("\nendpoint=");
    print_oneline(stdout, info->endpoint[0] ? info->endpoint : sock);
    printf("\nsupported_versions=");
    print_joined(info->supported_versions, info->n_supported_versions);
    printf("\nversion=%s\nhealth_service=%s\nhealth_version=%s\nregistered=%s\n", version,
           health_version[0] ? "true" : "false", health_version, ok ? "true" : "false");
    if (!ok) {
        printf("error=");
        print_oneline(stdout, reason);
        putchar('\n');
    }
}

/* Registers one plugin whose GetInfo answered; prints its block. */
static int register_plugin(struct rpc_client *c, const char *sock,
                           const Pluginregistration__PluginInfo *info,
                           const struct kubelet_services *ks)
{
    char reason[1024];
    const char *version;
    judge_info(info, ks, reason, sizeof(reason), &version);
    bool ok = reason[0] == '\0';

    Pluginregistration__RegistrationStatus st = PLUGINREGISTRATION__REGISTRATION_STATUS__INIT;
    st.plugin_registered = ok;
    st.error = reason;
    uint8_t buf[2048];
    size_t len = pluginregistration__registration_status__pack(&st, buf);
    struct rpc_answer a;
    struct error err;
    int rc = rpc_client_call(c, "/pluginregistration.Registration/NotifyRegistrationStatus", buf,
                             len, NOTIFY_TIMEOUT, &a, &err);
    print_block(sock, info, version, health_version_of(info, ks), reason);
    int status = ok ? EXIT_OK : EXIT_FAILED;
    if (rc < 0) {
        fprintf(stderr, "kubelet-standin: NotifyRegistrationStatus on %s: %s\n", sock, err.msg);
        status = EXIT_RPC;
    } else {
        printf("notify_status=%s\n", wire_status_name(a.status));
        /* A refusal may be answered with an error (the Go helper does); an
         * accepted registration must be acknowledged. */
        if (ok && a.status != GRPC_STATUS_OK) {
            fprintf(stderr, "kubelet-standin: NotifyRegistrationStatus(true) on %s: %s: %s\n", sock,
                    wire_status_name(a.status), a.details ? a.details : "");
            status = EXIT_RPC;
        }
        rpc_answer_free(&a);
    }
    if (!ok)
        fprintf(stderr, "kubelet-standin: registration refused: %s\n", reason);
    return status;
}

/* One socket: GetInfo, and the registration of the plugin when it is the
 * one asked for.  Returns its exit status (EXIT_OK when it was skipped);
 * *handled counts the plugins registered, last_error says why one was not. */
static int try_socket(const char *path, const char *driver, const struct kubelet_services *ks,
                      size_t *handled, char *last_error, size_t size)
{
    struct error err;
    struct rpc_client *c = rpc_client_new(path, &err);
    if (c == NULL) {
        snprintf(last_error, size, "%s", err.msg);
        return EXIT_OK;
    }
    struct rpc_answer a;
    Pluginregistration__PluginInfo *info = NULL;
    int status = EXIT_OK;
    if (rpc_client_call(c, "/pluginregistration.Registration/GetInfo", "", 0, GET_INFO_TIMEOUT, &a,
                        &err) < 0) {
        snprintf(last_error, size, "GetInfo on %s: %s", path, err.msg);
    } else if (a.status != GRPC_STATUS_OK) {
        snprintf(last_error, size, "GetInfo on %s: %s: %s", path, wire_status_name(a.status),
                 a.details ? a.details : "");
    } else if ((info = pluginregistration__plugin_info__unpack(NULL, a.len, a.data)) == NULL) {
        snprintf(last_error, size, "GetInfo on %s: the answer (%zu bytes) is not a PluginInfo",
                 path, a.len);
    } else if (driver && strcmp(info->name, driver) != 0) {
        snprintf(last_error, size, "%s is driver %s, not %s", path, info->name, driver);
    } else {
        if ((*handled)++)
            putchar('\n');
        status = register_plugin(c, path, info, ks);
    }
    rpc_answer_free(&a); /* zeroed by the call even when it failed */
    if (info)
        pluginregistration__plugin_info__free_unpacked(info, NULL);
    rpc_client_free(c);
    return status;
}

/* Registers what the sockets below dir serve until at least one plugin is
 * handled or timeout seconds passed. */
static int register_all(const char *dir, const char *driver, double timeout, const char *timeout_s,
                        const struct kubelet_services *ks)
{
    double deadline = (double)monotonic_ns() / 1e9 + timeout;
    char last_error[1024] = "no socket found";
    int status = EXIT_OK;
    size_t handled = 0;
    struct socket_list socks = {{0}, 0};
    for (;;) {
        scan_dir(dir, 0, &socks);
        qsort(socks.paths, socks.n, sizeof(socks.paths[0]), cmp_str);
        for (size_t i = 0; i < socks.n; i++) {
            int r =
                try_socket(socks.paths[i], driver, ks, &handled, last_error, sizeof(last_error));
            if (r > status)
                status = r;
        }
        free_sockets(&socks);
        if (handled > 0 || (double)monotonic_ns() / 1e9 >= deadline)
            break;
        struct timespec pause = {0, 100 * 1000000L};
        nanosleep(&pause, NULL);
    }
    fflush(stdout);
    if (handled == 0) {
        fprintf(stderr,
                "kubelet-standin register: no %s%splugin registered from %s within %s s: %s\n",
                driver ? driver : "", driver ? " " : "", dir, timeout_s, last_error);
        return EXIT_RPC;
    }
    return status;
}

static const struct flags_program program = {
    "kubelet-standin register", "--registry-dir DIR [flags]",
    "Finds DRA plugin sockets in DIR and registers them as the kubelet does.\n"
    "Prints socket, type, driver, endpoint, supported_versions, version,\n"
    "health_service (true/false), health_version (the health service picked),\n"
    "registered (and error) as key=value lines, one block\n"
    "per plugin, blocks separated by an empty line."};

int cmd_register(int argc, char **argv)
{
    const char *dir = NULL, *driver = NULL, *timeout_s = "10";
    const char *services = "v1.DRAPlugin,v1beta1.DRAPlugin";
    const char *health_services = "v1.DRAResourceHealth,v1alpha1.DRAResourceHealth";
    const struct flag flags[] = {
        {"registry-dir", "KUBELET_STANDIN_REGISTRY_DIR", FLAG_STRING, &dir,
         "the kubelet's plugins_registry directory (required)"},
        {"driver", "KUBELET_STANDIN_DRIVER", FLAG_STRING, &driver,
         "register only the plugin whose GetInfo name is this"},
        {"timeout", "KUBELET_STANDIN_TIMEOUT", FLAG_STRING, &timeout_s,
         "seconds to wait for a plugin socket to appear and answer"},
        {"kubelet-services", "KUBELET_STANDIN_SERVICES", FLAG_STRING, &services,
         "services this kubelet supports, comma-separated (1.34-1.37: v1 and v1beta1)"},
        {"kubelet-health-services", "KUBELET_STANDIN_HEALTH_SERVICES", FLAG_STRING,
         &health_services,
         "health services this kubelet supports, newest first, comma-separated (1.37: v1 "
         "and v1alpha1; 1.34-1.36: v1alpha1; \"\" = none)"},
    };
    int parsed = flags_main(flags_read, flags, FLAGS_COUNT(flags), argc, argv, &program, NULL);
    if (parsed != FLAGS_GO_ON)
        return parsed;
    double timeout;
    if (dir == NULL)
        return flags_usage_error(&program, "--registry-dir is required");
    if (parse_seconds(timeout_s, &timeout) < 0)
        return flags_usage_error(&program, "--timeout wants seconds, e.g. 10 or 0.5");
    cleanup_free char *svc_copy = xstrdup(services);
    cleanup_free char *health_copy = xstrdup(health_services);
    struct kubelet_services ks;
    ks.n_svc = split_list(svc_copy, ks.svc, 16);
    ks.n_health = split_list(health_copy, ks.health, 16);
    return register_all(dir, driver, timeout, timeout_s, &ks);
}
