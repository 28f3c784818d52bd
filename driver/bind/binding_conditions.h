// SPDX-License-Identifier: Apache-2.0
/* Device binding conditions (KEP-5007) for attachable fake GPUs: the JSON
 * this driver publishes and writes, pure functions without I/O (the thread
 * that acts on claims is binder.h).
 *
 * A device whose fakehw `attach` file is not "none" is published with
 *   "bindsToNode": true,
 *   "bindingConditions": ["<driver>/attached"],
 *   "bindingFailureConditions": ["<driver>/attach-failed"]
 * The scheduler copies both lists into the claim's allocation result and
 * waits in PreBind until every binding condition is True in the claim's
 * status.devices entry of the device (or a failure condition is True, or
 * its binding timeout passes).  The plugin sets them: binder.h. */
#ifndef FAKEHW_DRIVER_BINDING_CONDITIONS_H
#define FAKEHW_DRIVER_BINDING_CONDITIONS_H

#include <jansson.h>
#include <stdbool.h>

#include "error.h"

#define BINDING_ATTACHED_SUFFIX "attached"
#define BINDING_FAILED_SUFFIX   "attach-failed"
/* <driver (at most 63)>/<suffix> */
#define BINDING_CONDITION_MAX 128

/* Condition reasons (metav1.Condition: CamelCase). */
#define BINDING_REASON_ATTACHED "Attached"
#define BINDING_REASON_FAILED   "AttachFailed"

struct binding_names {
    char attached[BINDING_CONDITION_MAX]; /* "<driver>/attached" */
    char failed[BINDING_CONDITION_MAX];   /* "<driver>/attach-failed" */
};

void binding_names_make(const char *driver, struct binding_names *names);

/* Adds bindsToNode, bindingConditions and bindingFailureConditions to a
 * ResourceSlice device.  -1 only when out of memory. */
int binding_device_add(json_t *device, const struct binding_names *names);

/* Calls fn for every allocation result of driver and pool in the claim, with
 * whether the result carries binding conditions. */
typedef void (*binding_result_fn)(void *ctx, const char *device, bool has_binding_conditions);
void binding_claim_results(const json_t *claim, const char *driver, const char *pool,
                           binding_result_fn fn, void *ctx);

/* The same with each result's pool, for driver and pool or (pool NULL) for
 * every pool of driver. */
typedef void (*binding_pool_result_fn)(void *ctx, const char *pool, const char *device,
                                       bool has_binding_conditions);
void binding_claim_pool_results(const json_t *claim, const char *driver, const char *pool,
                                binding_pool_result_fn fn, void *ctx);

/* What the claim's status.devices already reports for one device. */
enum binding_reported {
    BINDING_REPORTED_NOTHING,
    BINDING_REPORTED_ATTACHED, /* the attached condition is True */
    BINDING_REPORTED_FAILED,   /* the attach-failed condition is True */
};

enum binding_reported binding_claim_reported(const json_t *claim, const char *driver,
                                             const char *pool, const char *device,
                                             const struct binding_names *names);

/* status.allocation.allocationTimestamp, or "" when there is none: with the
 * claim's uid it tells one allocation from the next. */
const char *binding_allocation_time(const json_t *claim);

/* A new status.devices list: the claim's own, with the condition
 * (type True, reason, message, lastTransitionTime now, observedGeneration
 * the claim's generation) set in the entry of driver/pool/device, which is
 * added when missing.  Other entries and other conditions stay as they
 * are.  NULL when out of memory. */
json_t *binding_status_set(const json_t *claim, const char *driver, const char *pool,
                           const char *device, const char *type, const char *reason,
                           const char *message, const char *now);

#endif
