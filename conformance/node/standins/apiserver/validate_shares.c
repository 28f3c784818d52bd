// SPDX-License-Identifier: Apache-2.0
/* Consumable capacity (KEP-5075) in ResourceSlices: see validate.h. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"

typedef unsigned __int128 u128;

/* A quantity as a whole number of bytes, 0 to 2^63-1: digits[.digits] and a
 * binary or decimal suffix or an exponent (is_quantity).  The stand-in's own
 * reading, not the plugin's common/base/quantity.c: a witness shares no code with
 * what it checks. */
static bool quantity_bytes(const char *s, uint64_t *out)
{
    if (s == NULL || !is_quantity(s) || *s == '-')
        return false;
    if (*s == '+')
        s++;
    u128 v = 0;
    int exp10 = 0;
    bool fraction = false;
    for (; isdigit((unsigned char)*s) || (*s == '.' && !fraction); s++) {
        if (*s == '.') {
            fraction = true;
            continue;
        }
        if (v > ((u128)1 << 120))
            return false; /* more digits than any int64 needs */
        v = v * 10 + (u128)(*s - '0');
        exp10 -= fraction;
    }
    static const char *const binary[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    static const struct {
        const char *suffix;
        int exp10;
    } decimal[] = {{"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
                   {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
    int pow1024 = 0;
    bool known = false;
    for (size_t i = 0; !known && i < sizeof(binary) / sizeof(binary[0]); i++)
        if (!strcmp(s, binary[i]))
            pow1024 = (int)i + 1, known = true;
    for (size_t i = 0; !known && i < sizeof(decimal) / sizeof(decimal[0]); i++)
        if (!strcmp(s, decimal[i].suffix))
            exp10 += decimal[i].exp10, known = true;
    if (!known) { /* is_quantity let only an exponent through */
        long e = strtol(s + 1, NULL, 10);
        if (e > 40 || e < -40)
            return false;
        exp10 += (int)e;
    }
    const u128 limit = (u128)INT64_MAX;
    for (; pow1024 > 0; pow1024--)
        if ((v *= 1024) > limit)
            return false;
    for (; exp10 > 0; exp10--)
        if ((v *= 10) > limit)
            return false;
    for (; exp10 < 0; exp10++) {
        if (v % 10 != 0)
            return false; /* a fraction of a byte */
        v /= 10;
    }
    if (v > limit)
        return false;
    *out = (uint64_t)v;
    return true;
}

/* The quantity at key of obj in bytes; false when absent or not a quantity. */
static bool bytes_at(const json_t *obj, const char *key, uint64_t *out)
{
    return quantity_bytes(json_string_value(json_object_get(obj, key)), out);
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
