// SPDX-License-Identifier: Apache-2.0
/* Metric storage and the Prometheus text exposition (metrics.h). */
#include "metrics_test.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "version.h"
#include "xalloc.h"

/* Upper bounds of the histogram buckets, in nanoseconds: 0.5 ms to 10 s.
 * A prepare takes about a millisecond, a flip reaches the API in tens of
 * milliseconds, and retries against a failing API server take seconds. */
static const long long bucket_ns[] = {
    500000LL,    1000000LL,   2500000LL,   5000000LL,    10000000LL,   25000000LL,   50000000LL,
    100000000LL, 250000000LL, 500000000LL, 1000000000LL, 2500000000LL, 5000000000LL, 10000000000LL,
};
#define NBUCKETS (sizeof(bucket_ns) / sizeof(bucket_ns[0]))

struct histogram {
    atomic_ulong bucket[NBUCKETS + 1]; /* per bucket, not cumulative; last = above all */
    atomic_ullong sum_ns;
    atomic_ulong count;
};

/* HTTP methods as the client sends them, then WATCH and anything else. */
static const char *const verbs[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "WATCH", "other"};
#define NVERBS    (sizeof(verbs) / sizeof(verbs[0]))
#define NSTATUSES 600 /* 0 = no answer; 100..599 */

struct metrics {
    struct histogram op[METRICS_OPS][2]; /* [op][ok] */
    struct histogram latency[METRICS_LATENCIES];
    atomic_ulong flips;
    atomic_ulong claim_reads[METRICS_CLAIM_SOURCES];
    atomic_ulong api[NVERBS][NSTATUSES];
};

struct metrics *metrics_new(struct error *err)
{
    (void)err; // nothing but memory can fail, and that is fatal
    /* calloc'ed memory is a valid zero for the lock-free atomics used here. */
    return xcalloc(1, sizeof(struct metrics));
}

void metrics_free(struct metrics *m)
{
    free(m);
}

static void observe(struct histogram *h, long long ns)
{
    if (ns < 0)
        ns = 0;
    size_t i = 0;
    while (i < NBUCKETS && ns > bucket_ns[i])
        i++;
    atomic_fetch_add_explicit(&h->bucket[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_ns, (unsigned long long)ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
}

void metrics_claim_op(struct metrics *m, enum metrics_op op, bool ok, long long duration_ns)
{
    if (m != NULL && op < METRICS_OPS)
        observe(&m->op[op][ok ? 1 : 0], duration_ns);
}

void metrics_api_request(struct metrics *m, const char *verb, long status)
{
    if (m == NULL)
        return;
    size_t v = 0;
    while (v < NVERBS - 1 && strcmp(verbs[v], verb) != 0)
        v++;
    if (status < 100 || status >= NSTATUSES)
        status = 0; /* no answer, or nothing HTTP knows */
    atomic_fetch_add_explicit(&m->api[v][status], 1, memory_order_relaxed);
}

void metrics_health_flips(struct metrics *m, unsigned long n)
{
    if (m != NULL)
        atomic_fetch_add_explicit(&m->flips, n, memory_order_relaxed);
}

void metrics_claim_read(struct metrics *m, enum metrics_claim_source source)
{
    if (m != NULL && source < METRICS_CLAIM_SOURCES)
        atomic_fetch_add_explicit(&m->claim_reads[source], 1, memory_order_relaxed);
}

void metrics_latency(struct metrics *m, enum metrics_latency which, long long ns)
{
    if (m != NULL && which < METRICS_LATENCIES)
        observe(&m->latency[which], ns);
}

void metrics_on_claim(void *ctx, bool prepare, bool ok, long long duration_ns)
{
    metrics_claim_op(ctx, prepare ? METRICS_PREPARE : METRICS_UNPREPARE, ok, duration_ns);
}

void metrics_on_api_response(void *ctx, const char *method, long status)
{
    metrics_api_request(ctx, method, status);
}

void metrics_on_slice_published(void *ctx, long latency_ms)
{
    metrics_latency(ctx, METRICS_TO_SLICE, (long long)latency_ms * 1000000LL);
}

void metrics_on_claim_status_written(void *ctx, long latency_ms)
{
    metrics_latency(ctx, METRICS_TO_CLAIM_STATUS, (long long)latency_ms * 1000000LL);
}

/* --- exposition --- */

static void header(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP " METRICS_PREFIX "%s %s\n# TYPE " METRICS_PREFIX "%s %s\n", name, help, name,
            type);
}

/* One histogram's samples; labels is "" or `key="value",`. */
static void histogram_samples(FILE *f, const char *name, const char *labels,
                              const struct histogram *h)
{
    /* Read the buckets first and derive the count from them, so that the
     * +Inf bucket and _count agree even while others record. */
    unsigned long cumulative = 0;
    for (size_t i = 0; i <= NBUCKETS; i++) {
        cumulative += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
        if (i < NBUCKETS)
            fprintf(f, METRICS_PREFIX "%s_bucket{%sle=\"%g\"} %lu\n", name, labels,
                    (double)bucket_ns[i] / 1e9, cumulative);
        else
            fprintf(f, METRICS_PREFIX "%s_bucket{%sle=\"+Inf\"} %lu\n", name, labels, cumulative);
    }
    unsigned long long sum = atomic_load_explicit(&h->sum_ns, memory_order_relaxed);
    size_t n = strlen(labels);
    /* Without labels the braces go too; else drop the trailing comma. */
    if (n == 0)
        fprintf(f, METRICS_PREFIX "%s_sum %.9f\n" METRICS_PREFIX "%s_count %lu\n", name,
                (double)sum / 1e9, name, cumulative);
    else
        fprintf(f, METRICS_PREFIX "%s_sum{%.*s} %.9f\n" METRICS_PREFIX "%s_count{%.*s} %lu\n", name,
                (int)(n - 1), labels, (double)sum / 1e9, name, (int)(n - 1), labels, cumulative);
}

static const char *const op_names[METRICS_OPS] = {"node_prepare", "node_unprepare"};
static const char *const op_what[METRICS_OPS] = {"NodePrepareResources", "NodeUnprepareResources"};

static void render_ops(FILE *f, struct metrics *m)
{
    char name[64], help[160];
    for (int op = 0; op < METRICS_OPS; op++) {
        snprintf(name, sizeof(name), "%s_claims_total", op_names[op]);
        snprintf(help, sizeof(help), "Claims of the kubelet's %s calls, by result.", op_what[op]);
        header(f, name, "counter", help);
        for (int ok = 1; ok >= 0; ok--)
            fprintf(f, METRICS_PREFIX "%s{result=\"%s\"} %lu\n", name, ok ? "success" : "error",
                    atomic_load_explicit(&m->op[op][ok].count, memory_order_relaxed));
        snprintf(name, sizeof(name), "%s_duration_seconds", op_names[op]);
        snprintf(help, sizeof(help), "Time to handle one claim of a %s call, by result.",
                 op_what[op]);
        header(f, name, "histogram", help);
        histogram_samples(f, name, "result=\"success\",", &m->op[op][1]);
        histogram_samples(f, name, "result=\"error\",", &m->op[op][0]);
    }
}

static const struct {
    const char *name, *help;
} latency_meta[METRICS_LATENCIES] = {
    [METRICS_TO_SLICE] = {"health_change_to_slice_seconds",
                          "Time from a device health change seen in the fakehw tree to the "
                          "ResourceSlices written with it (taint added or removed)."},
    [METRICS_TO_HEALTH_STREAM] = {"health_change_to_health_stream_seconds",
                                  "Time from a device health change seen in the fakehw tree to "
                                  "the kubelet's health stream updated."},
    [METRICS_TO_CLAIM_STATUS] = {"health_change_to_claim_status_seconds",
                                 "Time from a device health change seen in the fakehw tree to "
                                 "the status.devices of a claim holding the device written."},
};

static void render_api(FILE *f, struct metrics *m)
{
    header(f, "api_requests_total", "counter",
           "Requests to the Kubernetes API server, every attempt, by verb (HTTP method, or WATCH) "
           "and status code (\"<error>\": no answer).");
    for (size_t v = 0; v < NVERBS; v++)
        for (int s = 0; s < NSTATUSES; s++) {
            unsigned long n = atomic_load_explicit(&m->api[v][s], memory_order_relaxed);
            if (n == 0)
                continue;
            if (s == 0)
                fprintf(f, METRICS_PREFIX "api_requests_total{verb=\"%s\",code=\"<error>\"} %lu\n",
                        verbs[v], n);
            else
                fprintf(f, METRICS_PREFIX "api_requests_total{verb=\"%s\",code=\"%d\"} %lu\n",
                        verbs[v], s, n);
        }
}

/* The metrics of the state the plugin hands over at each scrape, one row
 * each: name, type, help, and where the value is in struct metrics_state
 * (a size_t or an unsigned long). */
#define STATE_SIZE(field)  offsetof(struct metrics_state, field), true
#define STATE_COUNT(field) offsetof(struct metrics_state, field), false
static const struct state_metric {
    const char *name, *type, *help;
    size_t offset;
    bool is_size;
} state_metrics[] = {
    {"claims_prepared", "gauge", "ResourceClaims prepared on this node.",
     STATE_SIZE(claims_prepared)},
    {"claims_watched", "gauge",
     "ResourceClaims allocated to this node's pool that the plugin's claim watch keeps.",
     STATE_SIZE(claims_watched)},
    {"resourceslices", "gauge",
     "ResourceSlices of this node's pool, as of the last successful sync.", STATE_SIZE(slices)},
    {"devices_published", "gauge", "Devices in this node's ResourceSlices.", STATE_SIZE(devices)},
    {"devices_tainted", "gauge", "Published devices that carry an unhealthy taint.",
     STATE_SIZE(tainted)},
    {"resourceslice_syncs_total", "counter",
     "Attempts to bring this node's ResourceSlices in line with the fakehw tree.",
     STATE_COUNT(slice_syncs)},
    {"resourceslice_sync_errors_total", "counter",
     "ResourceSlice sync attempts that failed (retried with backoff).",
     STATE_COUNT(slice_sync_errors)},
    {"resourceslice_syncs_skipped_total", "counter",
     "Syncs left out because the device changes since the last one left the "
     "ResourceSlices as they were: no API request.",
     STATE_COUNT(slice_syncs_skipped)},
    {"claim_status_writes_total", "counter",
     "ResourceClaim status.devices written (PATCH answered 2xx).",
     STATE_COUNT(claim_status_writes)},
    {"claim_status_errors_total", "counter",
     "ResourceClaim status.devices writes that failed (retried with backoff).",
     STATE_COUNT(claim_status_errors)},
};

static void render_state(FILE *f, const struct metrics_state *st)
{
    for (size_t i = 0; i < sizeof(state_metrics) / sizeof(state_metrics[0]); i++) {
        const struct state_metric *m = &state_metrics[i];
        const char *at = (const char *)st + m->offset;
        unsigned long v = m->is_size ? (unsigned long)*(const size_t *)(const void *)at
                                     : *(const unsigned long *)(const void *)at;
        header(f, m->name, m->type, m->help);
        fprintf(f, METRICS_PREFIX "%s %lu\n", m->name, v);
    }
}

int metrics_render(struct metrics *m, const struct metrics_state *state, char **text, size_t *len,
                   struct error *err)
{
    *text = NULL;
    *len = 0;
    (void)err;
    /* A memory stream fails only when out of memory: fatal, as everywhere. */
    FILE *f = open_memstream(text, len);
    if (f == NULL)
        xalloc_die();
    /* Both values are [A-Za-z0-9._+-] (common/build.mk): nothing to escape. */
    header(f, "build_info", "gauge",
           "The plugin's release and the git commit it was built from; always 1.");
    fprintf(f, METRICS_PREFIX "build_info{version=\"%s\",git_commit=\"%s\"} 1\n",
            FAKEHW_DRA_VERSION, fakehw_git_commit);
    render_ops(f, m);
    render_state(f, state);
    header(f, "health_flips_total", "counter",
           "Device health changes (healthy to unhealthy or back) seen in the fakehw tree.");
    fprintf(f, METRICS_PREFIX "health_flips_total %lu\n",
            atomic_load_explicit(&m->flips, memory_order_relaxed));
    for (int i = 0; i < METRICS_LATENCIES; i++) {
        header(f, latency_meta[i].name, "histogram", latency_meta[i].help);
        histogram_samples(f, latency_meta[i].name, "", &m->latency[i]);
    }
    header(f, "prepare_claim_reads_total", "counter",
           "Claims a prepare read, by source: \"watch\" (the plugin's claim watch had it, no "
           "API call) or \"get\" (a GET from the API server).");
    static const char *const sources[METRICS_CLAIM_SOURCES] = {"watch", "get"};
    for (int s = 0; s < METRICS_CLAIM_SOURCES; s++)
        fprintf(f, METRICS_PREFIX "prepare_claim_reads_total{source=\"%s\"} %lu\n", sources[s],
                atomic_load_explicit(&m->claim_reads[s], memory_order_relaxed));
    render_api(f, m);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad)
        xalloc_die();
    return 0;
}
