// SPDX-License-Identifier: Apache-2.0
/* What the API server accepts of a ResourceSlice (k8s.io/api resource/v1
 * types.go), checked on the slices a fleet node's devices build into
 * before anything of the fleet is published:
 *
 *   devices per slice                     128 (ResourceSliceMaxDevices), 64 when a
 *                                         device has taints, consumes counters or
 *                                         binding conditions
 *                                         (ResourceSliceMaxDevicesWithAdvancedFeatures)
 *   counter sets per slice                8  (ResourceSliceMaxCounterSets)
 *   counters per counter set              32 (ResourceSliceMaxCountersPerCounterSet)
 *   counter consumptions per device       2  (ResourceSliceMaxDeviceCounterConsumptionsPerDevice)
 *   counters per consumption              32 (ResourceSliceMaxCountersPerDeviceCounterConsumption)
 *   taints per device                     16 (DeviceTaintsMaxLength)
 *   attributes + capacities per device    32 (ResourceSliceMaxAttributesAndCapacitiesPerDevice)
 *   binding (failure) conditions          4 each (BindingConditionsMaxSize)
 *
 * and no device the slice builder would leave out for breaking an API rule
 * (an attribute value longer than 64 characters, a bad name): the plugin
 * publishes the rest and logs it; a fleet refuses the config instead.
 * Every error names the node, the slice or device, and the limit. */
#ifndef FAKEHW_FLEET_LIMITS_H
#define FAKEHW_FLEET_LIMITS_H

#include <jansson.h>
#include <stddef.h>

#include "driver/device/device_snapshot.h"
#include "driver/device/personality.h"
#include "driver/health/device_health.h"
#include "error.h"

#define FLEET_MAX_DEVICES               128
#define FLEET_MAX_DEVICES_ADVANCED      64
#define FLEET_MAX_COUNTER_SETS          8
#define FLEET_MAX_COUNTERS_PER_SET      32
#define FLEET_MAX_CONSUMPTIONS          2
#define FLEET_MAX_COUNTERS_PER_CONSUMER 32
#define FLEET_MAX_TAINTS                16
#define FLEET_MAX_ATTRS_AND_CAPS        32
#define FLEET_MAX_BINDING_CONDITIONS    4

/* Checks one built ResourceSlice object (slice index of node's pool). */
int fleet_check_slice(const char *node, size_t index, const json_t *slice, struct error *err);

struct fleet_pool_check {
    const char *driver;
    const char *node;
    enum personality personality;
    enum taint_effect effect;
};

/* Builds node's pool from snap twice, as it is and with every device
 * unhealthy (tainted: the most a flip can make of it), and checks every
 * slice and that no device is rejected. */
int fleet_check_pool(const struct fleet_pool_check *c, const struct device_snapshot *snap,
                     struct error *err);

#endif
