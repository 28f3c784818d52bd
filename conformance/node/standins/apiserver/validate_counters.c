// SPDX-License-Identifier: Apache-2.0
/* Partitionable devices in ResourceSlices: see validate.h. */
#include <stdio.h>
#include <string.h>

#include "validate.h"

/* A map of counters: {"name": {"value": quantity}}, 1..max entries. */
static void check_counters(struct field_errors *fe, const json_t *counters, size_t max,
                           const char *base)
{
    if (json_object_size(counters) == 0) {
        fe_add(fe, "Required", "Required value", "%s.counters", base);
        return;
    }
    if (!json_is_object(counters)) {
        fe_add(fe, "Invalid", "Invalid value: must be a map", "%s.counters", base);
        return;
    }
    if (json_object_size(counters) > max) {
        char m[128];
        snprintf(m, sizeof(m), "Too many: %zu: must have at most %zu items",
                 json_object_size(counters), max);
        fe_add(fe, "TooMany", m, "%s.counters", base);
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)counters, key, v)
    {
        char field[512];
        snprintf(field, sizeof(field), "%s.counters[%s]", base, key);
        check_label(fe, key, field);
        const char *q = json_string_value(json_object_get(v, "value"));
        if (q == NULL)
            fe_add(fe, "Required", "Required value", "%s.value", field);
        else if (!is_quantity(q))
            fe_add(fe, "Invalid", "Invalid value: quantities must match the regular expression",
                   "%s.value", field);
    }
}

/* A list of named entries: at most max, names unique DNS labels. */
static void check_named_list(struct field_errors *fe, const json_t *list, size_t max,
                             const char *name_key, size_t max_counters, const char *base)
{
    if (json_array_size(list) > max) {
        char m[128];
        snprintf(m, sizeof(m), "Too many: %zu: must have at most %zu items", json_array_size(list),
                 max);
        fe_add(fe, "TooMany", m, "%s", base);
    }
    size_t i;
    const json_t *e;
    json_array_foreach(list, i, e)
    {
        char field[512];
        snprintf(field, sizeof(field), "%s[%zu]", base, i);
        const char *name = json_string_value(json_object_get(e, name_key));
        if (name == NULL || name[0] == '\0') {
            fe_add(fe, "Required", "Required value", "%s.%s", field, name_key);
        } else {
            char nf[600];
            snprintf(nf, sizeof(nf), "%s.%s", field, name_key);
            check_label(fe, name, nf);
            for (size_t j = 0; j < i; j++) {
                const char *other =
                    json_string_value(json_object_get(json_array_get(list, j), name_key));
                if (other && !strcmp(other, name)) {
                    char m[128];
                    snprintf(m, sizeof(m), "Duplicate value: \"%.63s\"", name);
                    fe_add(fe, "Duplicate", m, "%s", field);
                    break;
                }
            }
        }
        check_counters(fe, json_object_get(e, "counters"), max_counters, field);
    }
}

void validate_slice_counters(const json_t *spec, struct field_errors *fe)
{
    const json_t *sets = json_object_get(spec, "sharedCounters");
    const json_t *devices = json_object_get(spec, "devices");
    if (sets && !json_is_null(sets) && devices && !json_is_null(devices))
        fe_add(fe, "Invalid",
               "Invalid value: \"\": only one of `sharedCounters` or `devices` is "
               "allowed",
               "spec");
    if (sets && !json_is_null(sets) && !json_is_array(sets))
        fe_add(fe, "Invalid", "Invalid value: must be a list", "spec.sharedCounters");
    else
        check_named_list(fe, sets, SLICE_MAX_COUNTER_SETS, "name", COUNTER_SET_MAX_COUNTERS,
                         "spec.sharedCounters");
    size_t i;
    const json_t *d;
    json_array_foreach(devices, i, d)
    {
        const json_t *cc = json_object_get(d, "consumesCounters");
        if (cc == NULL || json_is_null(cc))
            continue;
        char base[128];
        snprintf(base, sizeof(base), "spec.devices[%zu].consumesCounters", i);
        if (!json_is_array(cc))
            fe_add(fe, "Invalid", "Invalid value: must be a list", "%s", base);
        else
            check_named_list(fe, cc, DEVICE_MAX_COUNTER_CONSUMPTIONS, "counterSet",
                             COUNTER_CONSUMPTION_MAX_COUNTERS, base);
    }
}

void slice_drop_counters(json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");
    json_object_del(spec, "sharedCounters");
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(spec, "devices"), i, d)
        json_object_del(d, "consumesCounters");
}

void slice_refuse_counters(const json_t *obj, struct field_errors *fe)
{
    const json_t *spec = json_object_get(obj, "spec");
    if (json_object_get(spec, "sharedCounters") != NULL)
        fe_add(fe, "Forbidden", "Forbidden: disabled by feature gate DRAPartitionableDevices",
               "spec.sharedCounters");
    size_t i;
    const json_t *d;
    json_array_foreach(json_object_get(spec, "devices"), i, d)
    {
        if (json_object_get(d, "consumesCounters") != NULL)
            fe_add(fe, "Forbidden", "Forbidden: disabled by feature gate DRAPartitionableDevices",
                   "spec.devices[%zu].consumesCounters", i);
    }
}
