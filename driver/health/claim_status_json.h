// SPDX-License-Identifier: Apache-2.0
/* The JSON of a ResourceClaim's status.devices as this driver writes it.
 * Pure functions, no I/O; the writer thread is claim_status.h.
 *
 * For every allocation result of this driver and pool (status.allocation.
 * devices.results[] with driver == ours and pool == ours) the claim gets one
 * entry, keyed like the API's list map by driver, pool, device and shareID:
 *
 *   {"driver": "gpu.fakehw.example.com", "pool": "node-1", "device": "gpu-0",
 *    "conditions": [{"type": "Ready", "status": "True" | "False",
 *                    "reason": "DeviceHealthy" | "XID79" | ...,
 *                    "message": "...", "lastTransitionTime": "RFC3339",
 *                    "observedGeneration": <claim metadata.generation>}],
 *    "data": {"uuid": "GPU-...", "productName": "NVIDIA A100-SXM4-40GB",
 *             "memory": "40Gi"}}
 *
 * Entries of other drivers or pools are kept as they are and come first, in
 * their order; ours follow in allocation order, so building twice from the
 * same input gives the same list.  Our entries for devices no longer
 * allocated are dropped.  Conditions of other
 * types in our entries are kept; lastTransitionTime of Ready changes only
 * when its status does. */
#ifndef FAKEHW_DRIVER_CLAIM_STATUS_JSON_H
#define FAKEHW_DRIVER_CLAIM_STATUS_JSON_H

#include <jansson.h>
#include <stdbool.h>

#include "driver/health/device_health.h"
#include "error.h"
#include "fakehw_tree.h"

#define CLAIM_CONDITION_READY "Ready"

/* Looks up one of our devices by name in the current inventory; NULL when it
 * has none (the device then reads as removed). */
typedef const struct fakehw_device *(*claim_device_find_fn)(void *ctx, const char *name);

/* What the driver's opaque config made of allocation result `result` of
 * claim, as a new JSON value for the entry's data under "config", or NULL
 * for none. */
typedef json_t *(*claim_config_data_fn)(void *ctx, const json_t *claim, size_t result,
                                        claim_device_find_fn find, void *find_ctx);

struct claim_status_input {
    const char *driver;
    const char *pool;
    claim_device_find_fn find;
    void *find_ctx;
    bool tree_up;    /* false: the fakehw tree is gone, every device is unhealthy */
    const char *now; /* RFC3339 UTC ("2025-11-22T05:13:00Z"), for new transitions */
    claim_config_data_fn config_data; /* NULL = no "config" in data */
    void *config_ctx;
    struct health_policy health; /* how health is published (device_health.h) */
};

/* Builds the status.devices list claim should carry.  Returns 0 with
 * *devices (a new array), -1 with err when the claim cannot take status
 * ("claim default/c1: not allocated", a malformed allocation result), or
 * CLAIM_STATUS_BUILD_FAILED with err when an entry could not be built
 * (out of memory): worth another try, the status would be stale. */
#define CLAIM_STATUS_BUILD_FAILED (-2)
int claim_status_devices_build(const json_t *claim, const struct claim_status_input *in,
                               json_t **devices, struct error *err);

#endif
