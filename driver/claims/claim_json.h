// SPDX-License-Identifier: Apache-2.0
/* What every reader of a ResourceClaim's JSON asks of it, in one place: its
 * metadata strings, whether it holds an allocation result of a driver and
 * pool, the merge patch that replaces its status.devices, and the RFC3339
 * times its conditions carry.  Pure functions, no I/O. */
#ifndef FAKEHW_DRIVER_CLAIM_JSON_H
#define FAKEHW_DRIVER_CLAIM_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* metadata.<key> of claim when it is a string ("namespace", "name", "uid",
 * "resourceVersion"), else NULL. */
const char *claim_meta(const json_t *claim, const char *key);

/* status.allocation.devices.results of claim, NULL when it has none.  This
 * and claim_result_of are inline: the binding-condition JSON, which links no
 * claims code, reads results too. */
static inline const json_t *claim_allocation_results(const json_t *claim)
{
    const json_t *alloc = json_object_get(json_object_get(claim, "status"), "allocation");
    return json_object_get(json_object_get(alloc, "devices"), "results");
}

/* True when allocation result r is of driver and pool (pool NULL: of any). */
static inline bool claim_result_of(const json_t *r, const char *driver, const char *pool)
{
    const char *d = json_string_value(json_object_get(r, "driver"));
    const char *p = json_string_value(json_object_get(r, "pool"));
    return d != NULL && p != NULL && strcmp(d, driver) == 0 &&
           (pool == NULL || strcmp(p, pool) == 0);
}

/* True when claim has at least one allocation result of driver and pool
 * (pool NULL: of any pool). */
bool claim_has_results(const json_t *claim, const char *driver, const char *pool);

/* The merge patch that replaces status.devices, guarded by the claim's
 * resourceVersion so a concurrent writer makes it fail with 409:
 * {"metadata": {"resourceVersion": rv}, "status": {"devices": devices}}. */
json_t *claim_devices_patch(const json_t *claim, const json_t *devices);

/* Formats t (Unix seconds) as RFC3339 UTC into buf (at least 21 bytes). */
void claim_format_time(long long t, char *buf, size_t size);

#endif
