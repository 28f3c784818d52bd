// SPDX-License-Identifier: Apache-2.0
/* The benchmark suites and what they share.  Each suite starts the parts it
 * needs (world.h), measures `runs` times, and adds its figures, with their
 * targets, to the report. */
#ifndef FAKEHW_BENCH_SUITES_H
#define FAKEHW_BENCH_SUITES_H

#include <stdbool.h>

#include "error.h"
#include "report.h"

struct bench {
    const char *bin_dir;  /* fakehw, fakehw-kubelet-plugin, apiserver-standin, fakegpu-smi */
    const char *self;     /* this program, for the echo server */
    const char *base;     /* scratch directory of this invocation */
    const char *cdi_base; /* where the worlds' CDI roots go: a tmpfs when there is one */
    int runs;             /* repetitions of every figure */
    bool quick;           /* fewer operations per run: a smoke test of the suite, not figures */
    bool keep;            /* keep every run's directory (logs, event log) */
    int sizes[8];         /* GPU counts of the start-up suite */
    size_t n_sizes;
    struct report *report;
    double prepare_floor_ms; /* median of gRPC + HTTP GET + fsync p50s; NaN until floors ran */
    int world_seq;           /* numbers the run directories */
};

/* Group names: the order of first use is the order of the tables. */
#define GROUP_FLOORS  "Floors (same machine, same run)"
#define GROUP_PREPARE "Prepare and unprepare"
#define GROUP_STARTUP "Start to registered and published"
#define GROUP_MEMORY  "Peak RSS (VmHWM, whole process)"
#define GROUP_HEALTH  "Health flips"
#define GROUP_IDLE    "Idle"
#define GROUP_FLAP    "API requests from tree changes"

int suite_floors(struct bench *b, struct error *err);
int suite_prepare(struct bench *b, struct error *err);
int suite_startup(struct bench *b, struct error *err);
int suite_health(struct bench *b, struct error *err); /* flips, then idle CPU */
int suite_flap(struct bench *b, struct error *err);   /* a flapping device's API requests */

/* `fakehw-bench echo-server`: the bare gRPC server of the floor. */
int echo_server_main(int argc, char **argv);

struct world;

/* world_init for a world of this invocation, in a fresh directory named
 * after what ("prepare-3"). */
int bench_world_init(struct bench *b, struct world *w, const char *what, struct error *err);

#endif
