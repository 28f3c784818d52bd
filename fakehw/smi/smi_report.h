// SPDX-License-Identifier: Apache-2.0
/* fakegpu-smi -q: nvidia-smi -q's report, its sections in its order, for
 * the GPUs shown.  What fakehw knows is filled in (names, UUID, PCI
 * placement, memory, MIG mode); what it has no source for reads "N/A", as
 * nvidia-smi prints an unsupported value; a "fakehw" section at the end of
 * each GPU adds its device name, health, NUMA node, share and visible MIG
 * devices. */
#ifndef FAKEHW_SMI_SMI_REPORT_H
#define FAKEHW_SMI_SMI_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "smi_fields.h"

/* Prints the report: the header (timestamp, driver and CUDA versions, count,
 * the number of visible GPUs, as "Attached GPUs"), then one block per GPU
 * of gpus[0..n-1]. */
void smi_print_report(FILE *out, const struct smi_gpu *gpus, size_t n, size_t count);

#endif
