// SPDX-License-Identifier: Apache-2.0
/* The kubelet plugin's Prometheus metrics: a fixed set of counters and
 * histograms that the parts record into, and their text exposition
 * (format 0.0.4).  docs/metrics.md lists every metric.
 *
 * Recording is lock-free (C11 atomics, relaxed: each value is independent)
 * and allocation-free, so it costs next to nothing on the prepare path and
 * may be called from any thread.  Values that another part already keeps
 * (slices published, claims prepared) are not duplicated here: the caller
 * reads them at scrape time into struct metrics_state. */
#ifndef FAKEHW_DRIVER_METRICS_H
#define FAKEHW_DRIVER_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* Prefix of every metric name. */
#define METRICS_PREFIX "fakehw_dra_"

/* How long a device health change took to reach each consumer. */
enum metrics_latency {
    METRICS_TO_SLICE,         /* the ResourceSlices written (taint added or removed) */
    METRICS_TO_HEALTH_STREAM, /* the kubelet's health stream updated */
    METRICS_TO_CLAIM_STATUS,  /* a holding claim's status.devices written */
    METRICS_LATENCIES
};

/* Where a prepare found the claim the kubelet named. */
enum metrics_claim_source {
    METRICS_CLAIM_FROM_WATCH, /* the plugin's claim watch had it */
    METRICS_CLAIM_FROM_GET,   /* a GET from the API server (or its failure) */
    METRICS_CLAIM_SOURCES
};

struct metrics;

/* NULL when out of memory (err filled). */
struct metrics *metrics_new(struct error *err);
void metrics_free(struct metrics *m);

/* Records n device health changes seen in the fakehw tree.  m may be NULL. */
void metrics_health_flips(struct metrics *m, unsigned long n);

/* Records where a prepare read its claim.  m may be NULL. */
void metrics_claim_read(struct metrics *m, enum metrics_claim_source source);

/* Records the time from a health change to one consumer.  m may be NULL. */
void metrics_latency(struct metrics *m, enum metrics_latency which, long long ns);

/* Adapters with the signatures of the parts' observer callbacks; ctx is the
 * struct metrics (dra_service_set_observer, kube_client_options.on_response,
 * slice_publisher_options.on_published,
 * claim_status_options.on_changed_written). */
void metrics_on_claim(void *ctx, bool prepare, bool ok, long long duration_ns);
void metrics_on_api_response(void *ctx, const char *method, long status);
void metrics_on_slice_published(void *ctx, long latency_ms);
void metrics_on_claim_status_written(void *ctx, long latency_ms);

/* What other parts keep, read when a scrape comes. */
struct metrics_state {
    size_t claims_prepared;            /* claims prepared on this node now */
    size_t claims_watched;             /* allocated claims of this pool the watch keeps */
    size_t slices;                     /* ResourceSlices of the last successful sync */
    size_t devices;                    /* devices in them */
    size_t tainted;                    /* of which tainted */
    unsigned long slice_syncs;         /* sync attempts */
    unsigned long slice_sync_errors;   /* failed sync attempts */
    unsigned long slice_syncs_skipped; /* device updates that changed nothing published */
    unsigned long claim_status_writes;
    unsigned long claim_status_errors;
};

/* The exposition of every metric, newly malloc'ed into *text (*len bytes,
 * NUL-terminated).  Safe while other threads record. */
int metrics_render(struct metrics *m, const struct metrics_state *state, char **text, size_t *len,
                   struct error *err);

#endif
