// SPDX-License-Identifier: Apache-2.0
/* Prepare and unprepare: the kubelet's NodePrepareResources and
 * NodeUnprepareResources of one claim per call, against the real plugin
 * (which GETs the claim from the API stand-in, writes the CDI specs and the
 * device metadata without fsync and appends one line to its checkpoint
 * journal) on a node of 64 fake GPUs.  Each caller owns one claim on
 * devices of its own and cycles it: prepare, unprepare, prepare, ...  as pods
 * come and go; the cycles per second are the sustained prepare rate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_client.h"
#include "kubelet_calls.h"
#include "load.h"
#include "suites.h"
#include "world.h"

#define PREPARE_GPUS 64
#define MAX_CALLERS  8

struct config {
    int devices, callers;
    const char *label;
};

static const struct config configs[] = {
    {1, 1, "1 device, sequential"},
    {8, 1, "8 devices, sequential"},
    {1, 8, "1 device, 8 concurrent callers"},
    {8, 8, "8 devices, 8 concurrent callers"},
};
#define N_CONFIGS (sizeof(configs) / sizeof(configs[0]))

struct prep_ctx {
    struct rpc_client *grpc; /* one connection, shared like the kubelet's */
    struct dra_claim claims[N_CONFIGS][MAX_CALLERS];
    size_t cfg;
};

static int op_cycle(void *ctx, int caller, int i, struct samples *sets, struct error *err)
{
    (void)i;
    struct prep_ctx *p = ctx;
    const struct dra_claim *c = &p->claims[p->cfg][caller];
    int64_t t0 = now_mono_ns();
    if (dra_prepare(p->grpc, c, err) < 0)
        return -1;
    double prep = ms_since(t0);
    t0 = now_mono_ns();
    if (dra_unprepare(p->grpc, c, err) < 0)
        return -1;
    double unprep = ms_since(t0);
    if (samples_add(&sets[0], prep) < 0 || samples_add(&sets[1], unprep) < 0)
        return error_set(err, "out of memory");
    return 0;
}

static int create_claims(struct world *w, struct prep_ctx *p, struct error *err)
{
    const struct api_client_tls tls = {w->certs.ca, w->certs.client_cert, w->certs.client_key};
    struct api_client *api = api_client_new(w->api_url, w->tls ? &tls : NULL, err);
    if (api == NULL)
        return -1;
    int rc = 0;
    for (size_t k = 0; k < N_CONFIGS && rc == 0; k++) {
        const struct config *c = &configs[k];
        for (int caller = 0; caller < c->callers && rc == 0; caller++) {
            char name[64], uid[64], devname[8][16];
            char *devs[8];
            snprintf(name, sizeof(name), "p%dx%d-%d", c->devices, c->callers, caller);
            for (int d = 0; d < c->devices; d++) {
                snprintf(devname[d], sizeof(devname[d]), "gpu-%d", caller * c->devices + d);
                devs[d] = devname[d];
            }
            rc = api_create_allocated_claim(api, "bench", name, WORLD_DRIVER, WORLD_NODE, devs,
                                            (size_t)c->devices, uid, err);
            if (rc == 0)
                rc = dra_claim_init(&p->claims[k][caller], "bench", name, uid, (size_t)c->devices,
                                    err);
        }
    }
    api_client_free(api);
    return rc;
}

static void samples_pair_free(struct samples (*s)[2])
{
    samples_free(&(*s)[0]);
    samples_free(&(*s)[1]);
}
#define cleanup_samples_pair __attribute__((cleanup(samples_pair_free)))

/* Cycles configuration k's claims on p's plugin and adds its figures under
 * label; the 1-device sequential one also as a ratio to the prepare floor. */
static int run_config(struct bench *b, struct prep_ctx *p, size_t k, const char *label,
                      struct error *err)
{
    const struct config *c = &configs[k];
    p->cfg = k;
    cleanup_samples_pair struct samples s[2] = {{0}, {0}};
    double wall;
    int per_caller = c->callers == 1 ? (b->quick ? 20 : 200) : (b->quick ? 4 : 40);
    if (load_run(c->callers, 5, op_cycle, p, 2, s, &wall, err) < 0) /* warm-up */
        return -1;
    samples_clear(&s[0]);
    samples_clear(&s[1]);
    if (load_run(c->callers, per_caller, op_cycle, p, 2, s, &wall, err) < 0)
        return -1;
    struct report *r = b->report;
    double p50 = samples_percentile(&s[0], 50);
    figure_add_run(report_figure(r, GROUP_PREPARE, "ms", "prepare, %s, p50", label), p50);
    figure_add_run(report_figure(r, GROUP_PREPARE, "ms", "prepare, %s, p99", label),
                   samples_percentile(&s[0], 99));
    figure_add_run(report_figure(r, GROUP_PREPARE, "ms", "unprepare, %s, p50", label),
                   samples_percentile(&s[1], 50));
    figure_add_run(report_figure(r, GROUP_PREPARE, "ms", "unprepare, %s, p99", label),
                   samples_percentile(&s[1], 99));
    figure_add_run(report_figure(r, GROUP_PREPARE, "/s",
                                 "prepares per second (each with its unprepare), %s", label),
                   (double)s[0].n / (wall / 1000.0));
    if (c->devices == 1 && c->callers == 1 && !isnan(b->prepare_floor_ms))
        figure_add_run(
            report_figure(r, GROUP_PREPARE, "x", "prepare, %s, p50 / prepare floor", label),
            p50 / b->prepare_floor_ms);
    return 0;
}

/* The lean world: a plugin without the two optional features that add
 * file-system and API work to each prepare, measured on configuration 0
 * (1 device, sequential) only.  It shows what those features cost, in the
 * same run. */
#define LEAN_LABEL "1 device, sequential, device metadata and claim device status off"

/* The world started, its claims made, every run. */
static int prepare_runs(struct bench *b, struct world *w, struct prep_ctx *p, bool lean,
                        struct error *err)
{
    if (world_start(w, PREPARE_GPUS, err) < 0 || create_claims(w, p, err) < 0 ||
        (p->grpc = rpc_client_new(w->dra_sock, err)) == NULL)
        return -1;
    for (int run = 0; run < b->runs; run++) {
        fprintf(stderr, "bench: prepare and unprepare%s, run %d/%d\n",
                lean ? " without device metadata and device status" : "", run + 1, b->runs);
        for (size_t k = 0; k < (lean ? 1 : N_CONFIGS); k++)
            if (run_config(b, p, k, lean ? LEAN_LABEL : configs[k].label, err) < 0)
                return -1;
    }
    return 0;
}

/* One world of PREPARE_GPUS with its claims; every run measures all
 * configurations, or (lean) configuration 0 on the lean plugin. */
static int measure_world(struct bench *b, bool lean, struct error *err)
{
    struct world w;
    struct prep_ctx *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return error_set(err, "out of memory");
    if (bench_world_init(b, &w, lean ? "prepare-lean" : "prepare", err) < 0) {
        free(p);
        return -1;
    }
    /* As against a kube-apiserver: HTTPS, a client certificate, claims of a
     * real claim's size.  (libmicrohttpd speaks HTTP/1.1 only, so the
     * connection is HTTP/1.1 where a kube-apiserver would negotiate h2.) */
    w.tls = true;
    if (lean) {
        w.plugin_flags[0] = "--device-metadata=false";
        w.plugin_flags[1] = "--device-status=false";
    }
    int rc = prepare_runs(b, &w, p, lean, err);
    rpc_client_free(p->grpc);
    for (size_t k = 0; k < N_CONFIGS; k++)
        for (int c = 0; c < MAX_CALLERS; c++)
            dra_claim_free(&p->claims[k][c]);
    free(p);
    return world_finish(&w, rc, false, err);
}

int suite_prepare(struct bench *b, struct error *err)
{
    if (measure_world(b, false, err) < 0 || measure_world(b, true, err) < 0)
        return -1;
    struct report *r = b->report;
    if (!isnan(b->prepare_floor_ms))
        figure_target_below(report_figure(r, GROUP_PREPARE, "x",
                                          "prepare, 1 device, sequential, p50 / prepare floor"),
                            3, "< 3x");
    figure_target_below(report_figure(r, GROUP_PREPARE, "ms", "prepare, %s, p99", configs[0].label),
                        10, "< 10 ms");
    return 0;
}
