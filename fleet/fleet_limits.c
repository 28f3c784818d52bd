// SPDX-License-Identifier: Apache-2.0
#include "fleet_limits.h"

#include <stdbool.h>
#include <string.h>

#include "driver/publish/slice_builder.h"

/* The Node uid of slices built only to be held against the limits: they
 * are never sent, so no real Node owns them. */
#define CHECK_NODE_UID "00000000-0000-0000-0000-000000000000"

static size_t size_of(const json_t *parent, const char *key)
{
    const json_t *v = json_object_get(parent, key);
    if (json_is_array(v))
        return json_array_size(v);
    return json_is_object(v) ? json_object_size(v) : 0;
}

static int over(const char *node, size_t index, const char *what, size_t have, size_t limit,
                const char *limit_name, struct error *err)
{
    return error_set(err,
                     "node %s: ResourceSlice %zu: %s: %zu, more than the API server accepts "
                     "(%zu, %s)",
                     node, index, what, have, limit, limit_name);
}

/* A device's consumesCounters entries and their counters. */
static int check_consumption(const char *node, size_t index, const char *dev, const json_t *d,
                             struct error *err)
{
    const json_t *cc = json_object_get(d, "consumesCounters");
    char what[200];
    snprintf(what, sizeof(what), "device %s: counter consumptions", dev);
    if (json_array_size(cc) > FLEET_MAX_CONSUMPTIONS)
        return over(node, index, what, json_array_size(cc), FLEET_MAX_CONSUMPTIONS,
                    "ResourceSliceMaxDeviceCounterConsumptionsPerDevice", err);
    size_t i;
    const json_t *c;
    json_array_foreach(cc, i, c)
    {
        snprintf(what, sizeof(what), "device %s: counters of consumption %zu", dev, i);
        if (size_of(c, "counters") > FLEET_MAX_COUNTERS_PER_CONSUMER)
            return over(node, index, what, size_of(c, "counters"), FLEET_MAX_COUNTERS_PER_CONSUMER,
                        "ResourceSliceMaxCountersPerDeviceCounterConsumption", err);
    }
    return 0;
}

static int check_device(const char *node, size_t index, const json_t *d, struct error *err)
{
    const char *name = json_string_value(json_object_get(d, "name"));
    name = name != NULL ? name : "?";
    char what[200];
    snprintf(what, sizeof(what), "device %s: taints", name);
    if (size_of(d, "taints") > FLEET_MAX_TAINTS)
        return over(node, index, what, size_of(d, "taints"), FLEET_MAX_TAINTS,
                    "DeviceTaintsMaxLength", err);
    size_t attrs = size_of(d, "attributes") + size_of(d, "capacity");
    snprintf(what, sizeof(what), "device %s: attributes and capacities", name);
    if (attrs > FLEET_MAX_ATTRS_AND_CAPS)
        return over(node, index, what, attrs, FLEET_MAX_ATTRS_AND_CAPS,
                    "ResourceSliceMaxAttributesAndCapacitiesPerDevice", err);
    snprintf(what, sizeof(what), "device %s: binding conditions", name);
    if (size_of(d, "bindingConditions") > FLEET_MAX_BINDING_CONDITIONS)
        return over(node, index, what, size_of(d, "bindingConditions"),
                    FLEET_MAX_BINDING_CONDITIONS, "BindingConditionsMaxSize", err);
    snprintf(what, sizeof(what), "device %s: binding failure conditions", name);
    if (size_of(d, "bindingFailureConditions") > FLEET_MAX_BINDING_CONDITIONS)
        return over(node, index, what, size_of(d, "bindingFailureConditions"),
                    FLEET_MAX_BINDING_CONDITIONS, "BindingFailureConditionsMaxSize", err);
    return check_consumption(node, index, name, d, err);
}

static bool advanced(const json_t *d)
{
    return size_of(d, "taints") > 0 || size_of(d, "consumesCounters") > 0 ||
           size_of(d, "bindingConditions") > 0;
}

static int check_counter_sets(const char *node, size_t index, const json_t *spec, struct error *err)
{
    const json_t *sets = json_object_get(spec, "sharedCounters");
    if (json_array_size(sets) > FLEET_MAX_COUNTER_SETS)
        return over(node, index, "counter sets", json_array_size(sets), FLEET_MAX_COUNTER_SETS,
                    "ResourceSliceMaxCounterSets", err);
    size_t i;
    const json_t *s;
    json_array_foreach(sets, i, s)
    {
        const char *name = json_string_value(json_object_get(s, "name"));
        char what[200];
        snprintf(what, sizeof(what), "counter set %s: counters", name ? name : "?");
        if (size_of(s, "counters") > FLEET_MAX_COUNTERS_PER_SET)
            return over(node, index, what, size_of(s, "counters"), FLEET_MAX_COUNTERS_PER_SET,
                        "ResourceSliceMaxCountersPerCounterSet", err);
    }
    return 0;
}

int fleet_check_slice(const char *node, size_t index, const json_t *slice, struct error *err)
{
    const json_t *spec = json_object_get(slice, "spec");
    const json_t *devs = json_object_get(spec, "devices");
    size_t i, n_adv = 0;
    const json_t *d;
    json_array_foreach(devs, i, d)
    {
        if (check_device(node, index, d, err) < 0)
            return -1;
        n_adv += advanced(d);
    }
    size_t n = json_array_size(devs);
    if (n > FLEET_MAX_DEVICES)
        return over(node, index, "devices", n, FLEET_MAX_DEVICES, "ResourceSliceMaxDevices", err);
    if (n_adv > 0 && n > FLEET_MAX_DEVICES_ADVANCED)
        return over(node, index, "devices, some with taints, counters or binding conditions", n,
                    FLEET_MAX_DEVICES_ADVANCED, "ResourceSliceMaxDevicesWithAdvancedFeatures", err);
    return check_counter_sets(node, index, spec, err);
}

static int check_build(const struct fleet_pool_check *c, const struct device_snapshot *snap,
                       bool tree_up, struct error *err)
{
    struct slice_build_input in = {.driver = c->driver,
                                   .node = c->node,
                                   .node_uid = CHECK_NODE_UID,
                                   .devs = snap->devs,
                                   .n_devs = snap->n,
                                   .tree_up = tree_up,
                                   .effect = c->effect,
                                   .generation = 1,
                                   .partitions = true,
                                   .partition_type = true,
                                   .personality = c->personality};
    struct slice_build_result r = {0};
    if (slice_build(&in, &r, err) < 0)
        return error_prefix(err, "node %s", c->node);
    int rc = 0;
    if (json_array_size(r.rejected) > 0) {
        const json_t *first = json_array_get(r.rejected, 0);
        const char *dev = json_string_value(json_object_get(first, "device"));
        const char *why = json_string_value(json_object_get(first, "error"));
        size_t n = json_array_size(r.rejected);
        if (strncmp(why, "device ", 7) == 0) /* the validator names the device */
            rc = error_set(err, "node %s: %s (%zu device(s) break an API rule)", c->node, why, n);
        else
            rc = error_set(err, "node %s: device %s: %s (%zu device(s) break an API rule)", c->node,
                           dev, why, n);
    }
    size_t i;
    const json_t *s;
    json_array_foreach(r.slices, i, s)
    {
        if (rc == 0)
            rc = fleet_check_slice(c->node, i, s, err);
    }
    slice_build_result_free(&r);
    return rc;
}

int fleet_check_pool(const struct fleet_pool_check *c, const struct device_snapshot *snap,
                     struct error *err)
{
    if (check_build(c, snap, true, err) < 0)
        return -1;
    if (check_build(c, snap, false, err) < 0)
        return error_prefix(err, "with every device unhealthy");
    return 0;
}
