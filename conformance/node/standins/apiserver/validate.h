// SPDX-License-Identifier: Apache-2.0
/* Validation the real API server does and the driver can get wrong: object
 * names, ResourceSlice specs (limits, one-of rules, attribute values, taints)
 * and ResourceClaim status (allocation results, device status entries). */
#ifndef APISERVER_STANDIN_VALIDATE_H
#define APISERVER_STANDIN_VALIDATE_H

#include <jansson.h>
#include <stdbool.h>

#include "resources.h"
#include "status.h"

/* Taint effects accepted (1.35+: None too). */
#define SLICE_MAX_DEVICES                    128
#define SLICE_MAX_DEVICES_WITH_TAINTS        64
#define DEVICE_MAX_ATTRIBUTES_AND_CAPACITIES 32
#define DEVICE_MAX_TAINTS                    16
#define ATTRIBUTE_MAX_STRING                 64

/* Partitionable devices (KEP-4815), in validate_counters.c. */
#define SLICE_MAX_COUNTER_SETS           8
#define COUNTER_SET_MAX_COUNTERS         32
#define DEVICE_MAX_COUNTER_CONSUMPTIONS  2
#define COUNTER_CONSUMPTION_MAX_COUNTERS 32

bool is_quantity(const char *s);
void check_label(struct field_errors *fe, const char *s, const char *field);

/* spec.sharedCounters and spec.devices[].consumesCounters as the real
 * server checks them (1.35+: a slice holds devices or counter sets, not
 * both).  It does not check that a consumed set exists (sets may be in
 * other slices of the pool): the scheduler does, and so do the node suite's
 * checks. */
void validate_slice_counters(const json_t *spec, struct field_errors *fe);

/* Removes them, like a server with DRAPartitionableDevices off. */
void slice_drop_counters(json_t *obj);

/* Consumable capacity (validate_shares.c): a capacity's requestPolicy needs
 * allowMultipleAllocations; its validRange needs default and min, and min <=
 * default <= max <= the capacity.  slice_drop_shares removes both fields,
 * like a server with DRAConsumableCapacity off. */
void validate_slice_shares(const json_t *spec, struct field_errors *fe);
void slice_drop_shares(json_t *obj);

/* spec.partitionTypeAttribute (1.37, gate DRAPartitionableDevicesType;
 * validate_partition_type.c) as the 1.37.2 server checks it: a fully
 * qualified attribute name, set only on a slice with a device that consumes
 * counters, and every such device carries that attribute (by its full name,
 * or bare when it is in the driver's domain) as a string.
 * slice_drop_partition_type removes it, like a server with the gate off
 * (1.34-1.36 do not know the field and drop it too). */
void validate_slice_partition_type(const json_t *spec, struct field_errors *fe);
void slice_drop_partition_type(json_t *obj);
void check_qualified_name(struct field_errors *fe, const char *name, const char *field);

/* Refuses them: one Forbidden error per use, like a server that does not
 * serve the fields. */
void slice_refuse_counters(const json_t *obj, struct field_errors *fe);

/* Checks metadata.name as a DNS subdomain into fe. */
void validate_name(const char *name, struct field_errors *fe);

/* Validates obj (the object about to be stored) of resource r; old is the
 * stored version on update, NULL on create (immutable fields). */
void validate_object(const struct resource *r, const json_t *obj, const json_t *old,
                     struct field_errors *fe);

#endif
