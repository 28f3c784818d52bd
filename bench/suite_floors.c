// SPDX-License-Identifier: Apache-2.0
/* Floors: what the figures of the other suites are compared to, measured in
 * the same invocation: a bare unary gRPC round trip over a unix socket (the
 * plugin's own server module, echo_server.c), an HTTP GET of a claim from
 * the API stand-in on a keep-alive connection, and the fsync of a small
 * file in the directory the plugin's files live in. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api_client.h"
#include "atomic_file.h"
#include "conformance/node/standins/kubelet/grpc_client.h"
#include "load.h"
#include "proc.h"
#include "suites.h"
#include "world.h"

#define ECHO_METHOD "/fakehw.bench.Echo/Ping"

struct floor_ctx {
    struct rpc_client *grpc;
    struct api_client *http;
    char claim_path[256];
    int fd;
    char file[2400];
};

static int op_grpc(void *ctx, int caller, int i, struct samples *sets, struct error *err)
{
    (void)caller;
    (void)i;
    struct floor_ctx *f = ctx;
    struct rpc_answer a;
    int64_t t0 = now_mono_ns();
    if (rpc_client_call(f->grpc, ECHO_METHOD, "", 0, 10, &a, err) < 0)
        return -1;
    double ms = ms_since(t0);
    int rc = 0;
    if (a.status != GRPC_STATUS_OK)
        rc = error_set(err, "echo call: %s: %s", wire_status_name(a.status), a.details);
    rpc_answer_free(&a);
    if (rc == 0 && samples_add(&sets[0], ms) < 0)
        rc = error_set(err, "out of memory");
    return rc;
}

static int op_http(void *ctx, int caller, int i, struct samples *sets, struct error *err)
{
    (void)caller;
    (void)i;
    struct floor_ctx *f = ctx;
    int64_t t0 = now_mono_ns();
    if (api_get_discard(f->http, f->claim_path, err) < 0)
        return -1;
    return samples_add(&sets[0], ms_since(t0)) < 0 ? error_set(err, "out of memory") : 0;
}

/* A write of buf (len bytes) to the floor's file: fsync_write or
 * atomic_write. */
typedef int write_fn(struct floor_ctx *f, const char *buf, size_t len, struct error *err);

static int fsync_write(struct floor_ctx *f, const char *buf, size_t len, struct error *err)
{
    if (pwrite(f->fd, buf, len, 0) != (ssize_t)len || fsync(f->fd) < 0)
        return error_set_errno(err, errno, "writing and syncing %s", f->file);
    return 0;
}

static int atomic_write(struct floor_ctx *f, const char *buf, size_t len, struct error *err)
{
    return atomic_write_file(f->file, buf, len, 0644, err);
}

/* The sample of one write of 256 bytes, a letter that changes with i. */
static int timed_write(struct floor_ctx *f, int i, write_fn *write_op, struct samples *sets,
                       struct error *err)
{
    char buf[256];
    memset(buf, 'a' + i % 26, sizeof(buf));
    int64_t t0 = now_mono_ns();
    if (write_op(f, buf, sizeof(buf), err) < 0)
        return -1;
    return samples_add(&sets[0], ms_since(t0)) < 0 ? error_set(err, "out of memory") : 0;
}

static int op_fsync(void *ctx, int caller, int i, struct samples *sets, struct error *err)
{
    (void)caller;
    return timed_write(ctx, i, fsync_write, sets, err);
}

static int op_atomic(void *ctx, int caller, int i, struct samples *sets, struct error *err)
{
    (void)caller;
    return timed_write(ctx, i, atomic_write, sets, err);
}

/* Runs op `n` times over `callers` callers after a warm-up; adds p50 and
 * p99 to the figures named `what`; *p50 gets this run's p50. */
static int measure(struct bench *b, struct floor_ctx *f, load_op_fn op, int callers, int n,
                   const char *what, bool p99, double *p50, struct error *err)
{
    struct samples s = {0};
    double wall;
    if (load_run(1, 20, op, f, 1, &s, &wall, err) < 0)
        return error_prefix(err, "%s (warm-up)", what);
    samples_clear(&s);
    if (load_run(callers, n / callers, op, f, 1, &s, &wall, err) < 0) {
        samples_free(&s);
        return error_prefix(err, "%s", what);
    }
    double v50 = samples_percentile(&s, 50), v99 = samples_percentile(&s, 99);
    figure_add_run(report_figure(b->report, GROUP_FLOORS, "ms", "%s, p50", what), v50);
    if (p99)
        figure_add_run(report_figure(b->report, GROUP_FLOORS, "ms", "%s, p99", what), v99);
    if (p50)
        *p50 = v50;
    samples_free(&s);
    return 0;
}

/* The parts the floors need (the API stand-in with one allocated claim,
 * the echo server, the fsync file), then every run. */
static int floors_run(struct bench *b, struct world *w, struct proc *echo, struct floor_ctx *f,
                      struct error *err)
{
    char sock[2400], log[2400];
    if (bench_world_init(b, w, "floors", err) < 0 || world_start_api(w, err) < 0)
        return -1;

    /* The GET of the floor is the GET prepare does: one allocated claim. */
    char uid[64];
    char *devs[] = {"gpu-0"};
    if ((f->http = api_client_new(w->api_url, NULL, err)) == NULL ||
        api_create_allocated_claim(f->http, "bench", "floor", WORLD_DRIVER, WORLD_NODE, devs, 1,
                                   uid, err) < 0)
        return -1;
    snprintf(f->claim_path, sizeof(f->claim_path),
             "/apis/resource.k8s.io/v1/namespaces/bench/resourceclaims/floor");

    snprintf(sock, sizeof(sock), "%s/echo.sock", w->dir);
    snprintf(log, sizeof(log), "%s/echo-server.log", w->dir);
    char *argv[] = {(char *)b->self, "echo-server", "--socket", sock, NULL};
    if (proc_spawn(echo, "echo-server", argv, log, NULL, err) < 0 ||
        wait_for_path(sock, 10000, echo, NULL, err) < 0 ||
        (f->grpc = rpc_client_new(sock, err)) == NULL)
        return -1;

    /* The fsync floor uses the file system of the plugin's directories. */
    snprintf(f->file, sizeof(f->file), "%s/fsync-floor", w->plugins);
    f->fd = open(f->file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (f->fd < 0)
        return error_set_errno(err, errno, "creating %s", f->file);

    int n = b->quick ? 100 : 1000;
    int n_sync = b->quick ? 20 : 200;
    for (int run = 0; run < b->runs; run++) {
        fprintf(stderr, "bench: floors, run %d/%d\n", run + 1, b->runs);
        double g50, h50, s50;
        if (measure(b, f, op_grpc, 1, n, "gRPC unary round trip, sequential", true, &g50, err) <
                0 ||
            measure(b, f, op_grpc, 8, n, "gRPC unary round trip, 8 concurrent callers", true, NULL,
                    err) < 0 ||
            measure(b, f, op_http, 1, n, "HTTP GET of a claim from the API stand-in", true, &h50,
                    err) < 0 ||
            measure(b, f, op_fsync, 1, n_sync, "fsync of a 256-byte file (pwrite + fsync)", true,
                    &s50, err) < 0 ||
            measure(b, f, op_atomic, 1, n_sync / 2,
                    "atomic file replace (temp file, fsync, rename, fsync of the directory)", false,
                    NULL, err) < 0)
            return -1;
        figure_add_run(report_figure(b->report, GROUP_FLOORS, "ms",
                                     "prepare floor: gRPC + HTTP GET + fsync (sum of the p50s)"),
                       g50 + h50 + s50);
    }
    struct figure *fl = report_figure(b->report, GROUP_FLOORS, "ms",
                                      "prepare floor: gRPC + HTTP GET + fsync (sum of the p50s)");
    struct spread sp;
    spread_of(fl->runs, fl->n, &sp);
    b->prepare_floor_ms = sp.median;
    return 0;
}

int suite_floors(struct bench *b, struct error *err)
{
    struct world w;
    struct proc echo = {0};
    struct floor_ctx f = {.fd = -1};
    int rc = floors_run(b, &w, &echo, &f, err);
    if (f.fd >= 0)
        close(f.fd);
    api_client_free(f.http);
    rpc_client_free(f.grpc);
    struct error e;
    if (proc_stop(&echo, 5000, &e) < 0 && rc == 0)
        rc = error_set(err, "%s", e.msg);
    return world_finish(&w, rc, false, err);
}
