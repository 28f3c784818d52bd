// SPDX-License-Identifier: Apache-2.0
/* The benchmark report: figures (one value per run, summarised as median and
 * min-max), their targets, and facts about the machine; written as Markdown
 * (results.md, the table docs/benchmarks.md keeps) and JSON (results.json). */
#ifndef FAKEHW_BENCH_REPORT_H
#define FAKEHW_BENCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"

#define REPORT_MAX_RUNS 64
#define REPORT_MAX_META 32

struct figure {
    char group[48]; /* table the figure goes in: "Floors", "Prepare and unprepare", ... */
    char name[160]; /* "prepare, 1 device, sequential, p50" */
    char unit[16];  /* "ms", "MiB", "%", "/s", "x" */
    double runs[REPORT_MAX_RUNS];
    size_t n;
    bool has_target;
    double limit;    /* the target is met when the median is below this */
    char target[96]; /* the target as the table shows it: "< 10 ms" */
};

struct report {
    struct figure *figs;
    size_t n, cap;
    char *meta_key[REPORT_MAX_META], *meta_val[REPORT_MAX_META];
    size_t n_meta;
};

/* The figure of that group and name, created on first use (in that order
 * in the tables).  NULL only when out of memory. */
struct figure *report_figure(struct report *r, const char *group, const char *unit, const char *fmt,
                             ...) __attribute__((format(printf, 4, 5)));

/* Adds one run's value (NaN is ignored: a run that produced no value). */
void figure_add_run(struct figure *f, double v);

/* Sets the target: met when the median is below limit. */
void figure_target_below(struct figure *f, double limit, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A machine or run fact ("CPU", "Intel(R) Xeon(R) ..."); replaces an
 * earlier value of the same key. */
void report_meta(struct report *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prints the report as Markdown: the facts, then one table per group. */
void report_print_markdown(const struct report *r, FILE *out);

/* Writes <dir>/results.md and <dir>/results.json (atomically). */
int report_write(const struct report *r, const char *dir, struct error *err);

void report_free(struct report *r);

#endif
