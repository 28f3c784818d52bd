// SPDX-License-Identifier: Apache-2.0
/* Concurrent callers for latency benchmarks: `callers` threads released
 * together, each running an operation `iterations` times.  The operation
 * times its own parts into the caller's sample sets (e.g. prepare and
 * unprepare apart); they are merged when every caller is done. */
#ifndef FAKEHW_BENCH_LOAD_H
#define FAKEHW_BENCH_LOAD_H

#include <stdint.h>

#include "error.h"
#include "stats.h"

#define LOAD_MAX_SETS    4
#define LOAD_MAX_CALLERS 64

/* One iteration of caller `caller`; sets has the caller's n_sets sample
 * sets.  -1 with err stops the whole load. */
typedef int (*load_op_fn)(void *ctx, int caller, int iteration, struct samples *sets,
                          struct error *err);

/* Runs the load; out[0..n_sets-1] get every caller's samples, *wall_ms the
 * time from the release of the callers to the end of the last one.  -1 with
 * the first caller's error. */
int load_run(int callers, int iterations, load_op_fn op, void *ctx, int n_sets, struct samples *out,
             double *wall_ms, struct error *err);

/* Milliseconds since a now_mono_ns() value. */
double ms_since(int64_t t0_ns);

#endif
