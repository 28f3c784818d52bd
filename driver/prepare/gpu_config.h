// SPDX-License-Identifier: Apache-2.0
/* Opaque device configuration of this driver: GpuConfig.
 *
 *   apiVersion: gpu.fakehw.example.com/v1alpha1
 *   kind: GpuConfig
 *   sharing:                          # optional; default TimeSlicing / Default
 *     strategy: TimeSlicing | SpacePartitioning
 *     timeSlicing: {interval: Default | Short | Medium | Long}    # TimeSlicing only
 *     spacePartitioning: {partitionCount: 1..64}                  # SpacePartitioning only
 *   env: {NAME: "value", ...}         # extra container env; NAME [A-Za-z_][A-Za-z0-9_]*,
 *                                     # not starting with FAKEHW_ or DRA_ (ours)
 *
 * Where it comes from: status.allocation.devices.config[] of the claim, whose
 * entries with opaque.driver == this driver apply (others are skipped).  The
 * scheduler copies the DeviceClass config in with source FromClass, so the
 * class is never fetched.  Entries apply FromClass first, then FromClaim, each
 * in list order; an entry applies to the results whose request it lists
 * ("req" also matches "req/sub"), or to all when its requests list is empty.
 * A later entry's sharing replaces the earlier one as a whole; env merges per
 * name, the later value winning.
 *
 * env is limited to GPU_CONFIG_ENV_ENTRIES_MAX variables, values of
 * GPU_CONFIG_ENV_VALUE_MAX bytes and GPU_CONFIG_ENV_TOTAL_MAX bytes in all,
 * per config entry and for the merged env of each result.
 *
 * Unknown apiVersion, kind or field, a wrong type, a value out of range, env
 * over its limits, or mixing timeSlicing with SpacePartitioning (or the reverse) is an error
 * naming the entry and the field:
 *   config[1] (FromClaim): parameters: unknown field "sharing.timeslicing" */
#ifndef FAKEHW_PREPARE_GPU_CONFIG_H
#define FAKEHW_PREPARE_GPU_CONFIG_H

#include <jansson.h>
#include <stddef.h>

#include "error.h"

#define GPU_CONFIG_API_VERSION   "gpu.fakehw.example.com/v1alpha1"
#define GPU_CONFIG_KIND          "GpuConfig"
#define GPU_CONFIG_PARTITION_MAX 64
#define GPU_CONFIG_ENV_NAME_MAX  256
/* env goes into the CDI spec and every container of the claim: bounded per
 * config entry and, after merging, per allocation result. */
#define GPU_CONFIG_ENV_ENTRIES_MAX 64          /* variables */
#define GPU_CONFIG_ENV_VALUE_MAX   4096        /* bytes of one value */
#define GPU_CONFIG_ENV_TOTAL_MAX   (32 * 1024) /* bytes of all names and values */

enum gpu_sharing_strategy {
    GPU_SHARING_TIME_SLICING,
    GPU_SHARING_SPACE_PARTITIONING,
};

/* The effective configuration of one allocation result. */
struct gpu_config {
    enum gpu_sharing_strategy strategy;
    const char *interval; /* TimeSlicing: static "Default" | "Short" | "Medium" | "Long" */
    long partition_count; /* SpacePartitioning: 1..GPU_CONFIG_PARTITION_MAX */
    json_t *env;          /* object NAME -> string; owned */
};

/* "TimeSlicing" / "SpacePartitioning". */
const char *gpu_sharing_strategy_name(enum gpu_sharing_strategy s);

/* Fills out[i] with the effective config of result i, whose request is
 * requests[i] ("req" or "req/sub").  config is status.allocation.devices.config
 * (an array, or NULL when absent).  On failure nothing is left allocated.
 * Release with gpu_config_free. */
int gpu_config_resolve(const char *driver, const json_t *config, const char *const *requests,
                       size_t n, struct gpu_config *out, struct error *err);
void gpu_config_free(struct gpu_config *c, size_t n);

#endif
