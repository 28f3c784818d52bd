// SPDX-License-Identifier: Apache-2.0
/* Consumable capacity (KEP-5075) in ResourceSlices: see validate.h. */
#include <stdio.h>
#include <string.h>

#include "quantity.h"
#include "validate.h"

/* The quantity at key of obj in bytes; false when absent or not a quantity. */
static bool bytes_at(const json_t *obj, const char *key, uint64_t *out)
{
    const char *q = json_string_value(json_object_get(obj, key));
    struct error err;
    return q != NULL && quantity_parse_bytes(q, out, &err) == 0;
}

static void invalid_q(struct field_errors *fe, const json_t *obj, const char *key,
                      const char *detail, const char *field)
{
    const char *q = json_string_value(json_object_get(obj, key));
    char m[300];
    snprintf(m, sizeof(m), "Invalid value: \"%.40s\": %s", q ? q : "", detail);
    fe_add(fe, "Invalid", m, "%s", field);
}

static void check_policy(struct field_errors *fe, const char *base, const json_t *cap,
                         const json_t *policy)
{
    uint64_t value = 0, def = 0, min = 0, max = 0;
    bytes_at(cap, "value", &value);
    const json_t *range = json_object_get(policy, "validRange");
    const json_t *values = json_object_get(policy, "validValues");
    if (range != NULL && json_array_size(values) > 0) {
        fe_add(fe, "Forbidden",
               "Forbidden: exactly one policy can be specified, cannot specify \"validValues\" "
               "and \"validRange\" at the same time",
               "%s", base);
        return;
    }
    if (range == NULL)
        return;
    if (!bytes_at(policy, "default", &def)) {
        fe_add(fe, "Required", "Required value: required when validRange is defined", "%s.default",
               base);
        return;
    }
    char field[256];
    snprintf(field, sizeof(field), "%s.validRange", base);
    if (!bytes_at(range, "min", &min)) {
        fe_add(fe, "Required", "Required value: required when validRange is defined", "%s.min",
               field);
        return;
    }
    char f[300];
    if (min > value) {
        snprintf(f, sizeof(f), "%s.min", field);
        invalid_q(fe, range, "min", "min is larger than capacity value", f);
    }
    if (def < min) {
        snprintf(f, sizeof(f), "%s.default", field);
        invalid_q(fe, policy, "default", "default is less than min", f);
    }
    uint64_t step = 0;
    if (json_object_get(range, "step") != NULL) {
        snprintf(f, sizeof(f), "%s.step", field);
        if (!bytes_at(range, "step", &step) || step == 0) {
            invalid_q(fe, range, "step", "must be greater than zero", f);
        } else {
            if (min + step > value)
                invalid_q(fe, range, "step", "one step is larger than capacity value", f);
            char detail[200];
            snprintf(detail, sizeof(detail),
                     "value is not a multiple of a given step (%.40s) from (%.40s)",
                     json_string_value(json_object_get(range, "step")),
                     json_string_value(json_object_get(range, "min")));
            if (def >= min && (def - min) % step != 0)
                invalid_q(fe, policy, "default", detail, f);
            if (bytes_at(range, "max", &max) && max >= min && (max - min) % step != 0)
                invalid_q(fe, range, "max", detail, f);
        }
    }
    if (bytes_at(range, "max", &max)) {
        snprintf(f, sizeof(f), "%s.max", field);
        if (min > max)
            invalid_q(fe, range, "min", "min is larger than max", f);
        if (max > value)
            invalid_q(fe, range, "max", "max is larger than capacity value", f);
        snprintf(f, sizeof(f), "%s.default", field);
        if (def > max)
            invalid_q(fe, policy, "default", "default is more than max", f);
    }
}

void validate_slice_shares(const json_t *spec, struct field_errors *fe)
{
    size_t i;
    const json_t *d;
    json_array_foreach(json_object_get(spec, "devices"), i, d)
    {
        bool multi = json_is_true(json_object_get(d, "allowMultipleAllocations"));
        const char *key;
        const json_t *cap;
        json_object_foreach((json_t *)json_object_get(d, "capacity"), key, cap)
        {
            const json_t *policy = json_object_get(cap, "requestPolicy");
            if (policy == NULL || json_is_null(policy))
                continue;
            char base[256];
            snprintf(base, sizeof(base), "spec.devices[%zu].capacity[%s].requestPolicy", i, key);
            if (!multi)
                fe_add(fe, "Forbidden", "Forbidden: allowMultipleAllocations must be true", "%s",
                       base);
            else
                check_policy(fe, base, cap, policy);
        }
    }
}

void slice_drop_shares(json_t *obj)
{
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(json_object_get(obj, "spec"), "devices"), i, d)
    {
        json_object_del(d, "allowMultipleAllocations");
        const char *key;
        json_t *cap;
        json_object_foreach(json_object_get(d, "capacity"), key, cap)
            json_object_del(cap, "requestPolicy");
    }
}
