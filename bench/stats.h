// SPDX-License-Identifier: Apache-2.0
/* Statistics of the benchmarks: per-operation samples within one run
 * (p50/p99 by nearest rank), and a figure's spread over repeated runs
 * (median, min, max of the per-run values). */
#ifndef FAKEHW_BENCH_STATS_H
#define FAKEHW_BENCH_STATS_H

#include <stddef.h>

/* A growable array of samples (any unit; the suites use milliseconds). */
struct samples {
    double *v;
    size_t n, cap;
};

/* Appends v; -1 when out of memory. */
int samples_add(struct samples *s, double v);

/* Merges another sample set into s (for callers that each kept their own). */
int samples_merge(struct samples *s, const struct samples *from);

/* The p-th percentile (0 < p <= 100) by nearest rank: the smallest sample
 * that at least p% of the samples are <= to.  Sorts s in place.  NaN when s
 * is empty. */
double samples_percentile(struct samples *s, double p);

void samples_clear(struct samples *s);
void samples_free(struct samples *s);

/* A figure over repeated runs. */
struct spread {
    double median; /* middle value; the mean of the two middle ones for an even count */
    double min, max;
    size_t runs;
};

/* Fills *out from n per-run values (n may be 0: everything NaN).  values is
 * not modified. */
void spread_of(const double *values, size_t n, struct spread *out);

#endif
