// SPDX-License-Identifier: Apache-2.0
/* `fakehw-bench echo-server --socket PATH`: the plugin's gRPC server module
 * (driver/grpc/rpc_server.h, same worker count as the plugin's DRA socket)
 * with one method that answers an empty message at once: the floor of a
 * unary gRPC round trip over a unix socket. */
#include <stdio.h>

#include "driver/grpc/rpc_server.h"
#include "flags.h"
#include "log.h"
#include "proto/dra_health_v1alpha1.pb-c.h"
#include "stop_signals.h"
#include "suites.h"

#define ECHO_METHOD "/fakehw.bench.Echo/Ping"

static void ping(void *ctx, const ProtobufCMessage *req, struct rpc_reply *reply)
{
    (void)ctx;
    (void)req;
    rpc_reply_packed(reply, "", 0);
}

static const struct flags_program program = {"fakehw-bench echo-server", "--socket PATH",
                                             "Serves " ECHO_METHOD
                                             " (empty in, empty out) until SIGTERM."};

int echo_server_main(int argc, char **argv)
{
    const char *socket_path = NULL;
    long workers = 4;
    const struct flag flags[] = {
        {"socket", "ECHO_SOCKET", FLAG_STRING, &socket_path, "unix socket to serve (required)"},
        {"workers", "ECHO_WORKERS", FLAG_INT, &workers, "handler threads (the plugin's default)"},
    };
    int next;
    int parsed = flags_main(flags_read, flags, FLAGS_COUNT(flags), argc, argv, &program, &next);
    if (parsed != FLAGS_GO_ON)
        return parsed;
    if (next != argc || socket_path == NULL || workers < 1)
        return flags_usage_error(&program, "--socket is required, --workers >= 1, no arguments");
    sigset_t set;
    stop_signals_block(&set);

    const struct rpc_server_config cfg = {"echo", socket_path, (int)workers};
    const struct rpc_method m = {.path = ECHO_METHOD,
                                 .request = &v1alpha1__node_watch_resources_request__descriptor,
                                 .unary = ping};
    struct error err;
    struct rpc_server *srv = rpc_server_new(&cfg, &err);
    if (srv == NULL || rpc_server_add_method(srv, &m, &err) < 0 ||
        rpc_server_start(srv, &err) < 0) {
        fprintf(stderr, "fakehw-bench echo-server: %s\n", err.msg);
        rpc_server_free(srv);
        return 1;
    }
    LOG_I("echo server on %s", socket_path);
    stop_signals_wait(&set);
    rpc_server_free(srv);
    return 0;
}
