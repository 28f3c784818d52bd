// SPDX-License-Identifier: Apache-2.0
/* Facts about the machine and the run that a benchmark figure means
 * nothing without: CPUs, CPU model, kernel, memory, the file system the
 * plugin's files go to, the load when the run started and ended. */
#ifndef FAKEHW_BENCH_MACHINE_H
#define FAKEHW_BENCH_MACHINE_H

#include "report.h"

/* Adds the machine's facts to the report; work_dir is where the run's
 * directories are and cdi_dir where the CDI specs go (for their file
 * systems). */
void machine_describe(struct report *r, const char *work_dir, const char *cdi_dir);

/* The 1-, 5- and 15-minute load averages as text ("0.12 0.30 0.25"). */
void machine_loadavg(char *buf, size_t len);

#endif
