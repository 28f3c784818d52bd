// SPDX-License-Identifier: Apache-2.0
/* Object validation, worded like the real API server; see validate.h. */
#include "validate.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUBDOMAIN_MSG                                                                              \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "  \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define LABEL_MSG                                                                                  \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "     \
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define CIDENT_MSG                                                                                 \
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "   \
    "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for " \
    "validation is '[A-Za-z_][A-Za-z0-9_]*')"

/* "Invalid value: <json of v>: <detail>" */
static void invalid(struct field_errors *fe, const json_t *v, const char *detail, const char *field)
{
    char *val = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    char msg[1024];
    snprintf(msg, sizeof(msg), "Invalid value: %.200s: %s", val ? val : "null", detail);
    free(val);
    fe_add(fe, "Invalid", msg, "%s", field);
}

static void invalid_str(struct field_errors *fe, const char *s, const char *detail,
                        const char *field)
{
    json_t *v = json_string(s);
    invalid(fe, v, detail, field);
    json_decref(v);
}

static bool alnum_lower(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_dns_label(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63 || !alnum_lower(s[0]) || !alnum_lower(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!alnum_lower(s[i]) && s[i] != '-')
            return false;
    return true;
}

static bool is_dns_subdomain(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 253)
        return false;
    const char *p = s;
    while (*p) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        char part[254];
        if (len == 0 || len >= sizeof(part))
            return false;
        memcpy(part, p, len);
        part[len] = '\0';
        /* Parts follow the label rules but the whole name may be 253 long. */
        if (!alnum_lower(part[0]) || !alnum_lower(part[len - 1]))
            return false;
        for (size_t i = 0; i < len; i++)
            if (!alnum_lower(part[i]) && part[i] != '-')
                return false;
        if (dot == NULL)
            break;
        p = dot + 1;
        if (*p == '\0')
            return false;
    }
    return true;
}

static bool is_c_identifier(const char *s)
{
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (const char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return false;
    return true;
}

static void check_subdomain(struct field_errors *fe, const char *s, size_t max, const char *field)
{
    if (strlen(s) > max) {
        char d[64];
        snprintf(d, sizeof(d), "must be no more than %zu characters", max);
        invalid_str(fe, s, d, field);
    } else if (!is_dns_subdomain(s)) {
        invalid_str(fe, s, SUBDOMAIN_MSG, field);
    }
}

void check_label(struct field_errors *fe, const char *s, const char *field)
{
    if (strlen(s) > 63)
        invalid_str(fe, s, "must be no more than 63 characters", field);
    else if (!is_dns_label(s))
        invalid_str(fe, s, LABEL_MSG, field);
}

void validate_name(const char *name, struct field_errors *fe)
{
    check_subdomain(fe, name, 253, "metadata.name");
}

/* A QualifiedName: C identifier (<= 32) or <DNS subdomain (<= 63)>/<C
 * identifier>, with the checks and words of 1.38's validateQualifiedName
 * (a second slash was refused by 1.37 too, as a bad C identifier). */
void check_qualified_name(struct field_errors *fe, const char *name, const char *field)
{
    const char *slash = strchr(name, '/');
    const char *id = slash ? slash + 1 : name;
    if (slash && strchr(id, '/')) {
        invalid_str(fe, name, "must not contain more than one slash", field);
        return;
    }
    if (slash) {
        char domain[300];
        snprintf(domain, sizeof(domain), "%.*s", (int)(slash - name), name);
        if (domain[0] == '\0')
            invalid_str(fe, "", "the domain must not be empty", field);
        else
            check_subdomain(fe, domain, 63, field);
        if (*id == '\0') {
            invalid_str(fe, "", "the name must not be empty", field);
            return;
        }
    }
    if (strlen(id) > 32)
        invalid_str(fe, id, "must be no more than 32 characters", field);
    else if (!is_c_identifier(id))
        invalid_str(fe, id, CIDENT_MSG, field);
}

/* At most 18 digits: every number of a version fits into int64, as 1.38
 * requires ("new version numbers in device attributes must fit into int64"). */
#define SEMVER_MAX_DIGITS 18

/* Semantic version 2.0.0: MAJOR.MINOR.PATCH[-pre][+build], no leading zeros,
 * numbers (and digit-only pre-release identifiers) of at most 18 digits. */
static bool is_semver(const char *s)
{
    const char *p = s;
    for (int part = 0; part < 3; part++) {
        if (!isdigit((unsigned char)*p))
            return false;
        if (*p == '0' && isdigit((unsigned char)p[1]))
            return false;
        const char *start = p;
        while (isdigit((unsigned char)*p))
            p++;
        if (p - start > SEMVER_MAX_DIGITS)
            return false;
        if (part < 2 && *p++ != '.')
            return false;
    }
    for (int section = 0; section < 2 && *p; section++) {
        if (*p == '-' && section == 0) {
            p++;
        } else if (*p == '+') {
            p++;
            section = 1;
        } else {
            return false;
        }
        /* dot-separated non-empty identifiers of [0-9A-Za-z-]; a digit-only
         * pre-release identifier is a number like the three above */
        for (;;) {
            const char *start = p;
            bool digits = true;
            for (; *p && *p != '+' && *p != '.'; p++) {
                if (!isalnum((unsigned char)*p) && *p != '-')
                    return false;
                digits = digits && isdigit((unsigned char)*p);
            }
            if (p == start)
                return false;
            if (section == 0 && digits &&
                ((*start == '0' && p - start > 1) || p - start > SEMVER_MAX_DIGITS))
                return false;
            if (*p != '.')
                break;
            p++;
        }
        if (section == 1 && *p)
            return false;
    }
    return true;
}

/* A Kubernetes quantity: [+-]digits[.digits] then a suffix or exponent. */
bool is_quantity(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    bool digits = false;
    while (isdigit((unsigned char)*p)) {
        p++;
        digits = true;
    }
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) {
            p++;
            digits = true;
        }
    }
    if (!digits)
        return false;
    static const char *const suffixes[] = {"",  "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n",
                                           "u", "m",  "k",  "M",  "G",  "T",  "P",  "E"};
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
        if (!strcmp(p, suffixes[i]))
            return true;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return false;
        while (isdigit((unsigned char)*p))
            p++;
        return *p == '\0';
    }
    return false;
}

/* ---------- ResourceSlice ---------- */

static void check_attribute(struct field_errors *fe, const char *base, const char *key,
                            const json_t *v)
{
    char field[600];
    snprintf(field, sizeof(field), "%s.attributes[%s]", base, key);
    check_qualified_name(fe, key, field);
    if (!json_is_object(v)) {
        invalid(fe, v, "must be an object", field);
        return;
    }
    static const char *const kinds[] = {"int", "bool", "string", "version"};
    int set = 0;
    for (size_t i = 0; i < 4; i++)
        if (json_object_get(v, kinds[i]) && !json_is_null(json_object_get(v, kinds[i])))
            set++;
    if (set == 0) {
        fe_add(fe, "Required", "Required value: exactly one value must be specified", "%s", field);
        return;
    }
    if (set > 1) {
        invalid(fe, v, "exactly one value must be specified", field);
        return;
    }
    json_t *x;
    char sub[700];
    if ((x = json_object_get(v, "int")) && !json_is_integer(x)) {
        snprintf(sub, sizeof(sub), "%s.int", field);
        invalid(fe, x, "must be an integer", sub);
    }
    if ((x = json_object_get(v, "bool")) && !json_is_boolean(x)) {
        snprintf(sub, sizeof(sub), "%s.bool", field);
        invalid(fe, x, "must be a boolean", sub);
    }
    for (int k = 0; k < 2; k++) {
        const char *kind = k ? "version" : "string";
        if ((x = json_object_get(v, kind)) == NULL || json_is_null(x))
            continue;
        snprintf(sub, sizeof(sub), "%s.%s", field, kind);
        if (!json_is_string(x)) {
            invalid(fe, x, "must be a string", sub);
        } else if (json_string_length(x) > ATTRIBUTE_MAX_STRING) {
            char m[80];
            snprintf(m, sizeof(m), "Too long: may not be more than %d bytes", ATTRIBUTE_MAX_STRING);
            fe_add(fe, "TooLong", m, "%s", sub);
        } else if (k && !is_semver(json_string_value(x))) {
            invalid(fe, x, "must be a string compatible with semver.org spec 2.0.0", sub);
        }
    }
}

static void check_taint(struct field_errors *fe, const char *base, size_t t, const json_t *taint)
{
    char field[600];
    snprintf(field, sizeof(field), "%s.taints[%zu]", base, t);
    const char *key = json_string_value(json_object_get(taint, "key"));
    const char *value = json_string_value(json_object_get(taint, "value"));
    const char *effect = json_string_value(json_object_get(taint, "effect"));
    char sub[700];
    snprintf(sub, sizeof(sub), "%s.key", field);
    if (key == NULL || key[0] == '\0') {
        fe_add(fe, "Required", "Required value", "%s", sub);
    } else {
        /* A label key: [prefix/]name, name <= 63 of [A-Za-z0-9_.-]. */
        const char *slash = strchr(key, '/');
        const char *name = slash ? slash + 1 : key;
        bool ok = strlen(name) > 0 && strlen(name) <= 63 && isalnum((unsigned char)name[0]) &&
                  isalnum((unsigned char)name[strlen(name) - 1]);
        for (const char *p = name; ok && *p; p++)
            ok = isalnum((unsigned char)*p) || strchr("-_.", *p);
        if (slash) {
            char prefix[300];
            snprintf(prefix, sizeof(prefix), "%.*s", (int)(slash - key), key);
            ok = ok && strlen(prefix) <= 253 && is_dns_subdomain(prefix);
        }
        if (!ok)
            invalid_str(fe, key,
                        "name part must consist of alphanumeric characters, '-', '_' or '.', and "
                        "must start and end with an alphanumeric character (with an optional "
                        "DNS subdomain prefix and '/')",
                        sub);
    }
    if (value && strlen(value) > 63) {
        snprintf(sub, sizeof(sub), "%s.value", field);
        invalid_str(fe, value, "must be no more than 63 characters", sub);
    }
    snprintf(sub, sizeof(sub), "%s.effect", field);
    if (effect == NULL || effect[0] == '\0') {
        fe_add(fe, "Required", "Required value", "%s", sub);
    } else if (strcmp(effect, "NoSchedule") && strcmp(effect, "NoExecute") &&
               strcmp(effect, "None")) {
        char m[200];
        snprintf(m, sizeof(m),
                 "Unsupported value: \"%.60s\": supported values: \"NoExecute\", \"NoSchedule\", "
                 "\"None\"",
                 effect);
        fe_add(fe, "NotSupported", m, "%s", sub);
    }
    json_t *ta = json_object_get(taint, "timeAdded");
    if (ta && !json_is_null(ta) && !json_is_string(ta)) {
        snprintf(sub, sizeof(sub), "%s.timeAdded", field);
        invalid(fe, ta, "must be an RFC 3339 time", sub);
    }
}

static void check_device(struct field_errors *fe, size_t i, const json_t *d)
{
    char base[64];
    snprintf(base, sizeof(base), "spec.devices[%zu]", i);
    char field[128];
    const char *name = json_string_value(json_object_get(d, "name"));
    snprintf(field, sizeof(field), "%s.name", base);
    if (name == NULL || name[0] == '\0')
        fe_add(fe, "Required", "Required value", "%s", field);
    else
        check_label(fe, name, field);

    json_t *attrs = json_object_get(d, "attributes");
    json_t *caps = json_object_get(d, "capacity");
    size_t total = json_object_size(attrs) + json_object_size(caps);
    if (total > DEVICE_MAX_ATTRIBUTES_AND_CAPACITIES) {
        char m[160];
        snprintf(m, sizeof(m),
                 "Too many: %zu: the total number of attributes and capacities must not exceed "
                 "%d",
                 total, DEVICE_MAX_ATTRIBUTES_AND_CAPACITIES);
        fe_add(fe, "TooMany", m, "%s", base);
    }
    const char *k;
    json_t *v;
    json_object_foreach(attrs, k, v)
    {
        check_attribute(fe, base, k, v);
    }
    json_object_foreach(caps, k, v)
    {
        char cf[600];
        snprintf(cf, sizeof(cf), "%s.capacity[%s]", base, k);
        check_qualified_name(fe, k, cf);
        json_t *q = json_object_get(v, "value");
        char qf[700];
        snprintf(qf, sizeof(qf), "%s.value", cf);
        if (q == NULL)
            fe_add(fe, "Required", "Required value", "%s", qf);
        else if (!json_is_string(q) || !is_quantity(json_string_value(q)))
            invalid(fe, q,
                    "quantities must match the regular expression "
                    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                    qf);
    }
    /* As for spec.nodeSelector, the allocator merges single-term selectors
     * only (refused per device since 1.38). */
    json_t *dev_sel = json_object_get(d, "nodeSelector");
    if (json_is_object(dev_sel)) {
        json_t *terms = json_object_get(dev_sel, "nodeSelectorTerms");
        if (json_array_size(terms) != 1) {
            char f[600];
            snprintf(f, sizeof(f), "%s.nodeSelector.nodeSelectorTerms", base);
            invalid(fe, terms, "must have exactly one node selector term", f);
        }
    }
    json_t *taints = json_object_get(d, "taints");
    if (taints && !json_is_null(taints)) {
        if (json_array_size(taints) > DEVICE_MAX_TAINTS) {
            char m[120];
            snprintf(m, sizeof(m), "Too many: %zu: must have at most %d items",
                     json_array_size(taints), DEVICE_MAX_TAINTS);
            fe_add(fe, "TooMany", m, "%s.taints", base);
        }
        size_t t;
        json_t *taint;
        json_array_foreach(taints, t, taint)
        {
            check_taint(fe, base, t, taint);
        }
    }
}

static void check_immutable(struct field_errors *fe, const json_t *now, const json_t *was,
                            const char *field)
{
    if ((now || was) && !(now && was && json_equal(now, was)))
        invalid(fe, now, "field is immutable", field);
}

static void check_slice_driver(const json_t *spec, struct field_errors *fe)
{
    const char *driver = json_string_value(json_object_get(spec, "driver"));
    if (driver == NULL || driver[0] == '\0')
        fe_add(fe, "Required", "Required value", "spec.driver");
    else
        check_subdomain(fe, driver, 63, "spec.driver");
}

static void check_slice_pool(const json_t *spec, struct field_errors *fe)
{
    json_t *pool = json_object_get(spec, "pool");
    const char *pool_name = json_string_value(json_object_get(pool, "name"));
    if (pool_name == NULL || pool_name[0] == '\0') {
        fe_add(fe, "Required", "Required value", "spec.pool.name");
    } else if (strlen(pool_name) > 253) {
        invalid_str(fe, pool_name, "must be no more than 253 characters", "spec.pool.name");
    } else {
        /* One or more DNS subdomains separated by '/'. */
        char buf[256];
        snprintf(buf, sizeof(buf), "%s", pool_name);
        bool ok = true;
        for (char *save, *part = strtok_r(buf, "/", &save); part; part = strtok_r(NULL, "/", &save))
            ok = ok && is_dns_subdomain(part);
        if (!ok || pool_name[0] == '/' || pool_name[strlen(pool_name) - 1] == '/' ||
            strstr(pool_name, "//"))
            invalid_str(fe, pool_name,
                        "must be one or more DNS sub-domains separated by slashes: " SUBDOMAIN_MSG,
                        "spec.pool.name");
    }
    json_t *gen = json_object_get(pool, "generation");
    if (gen && (!json_is_integer(gen) || json_integer_value(gen) < 0))
        invalid(fe, gen, "must be greater than or equal to 0", "spec.pool.generation");
    json_t *count = json_object_get(pool, "resourceSliceCount");
    if (count == NULL)
        fe_add(fe, "Required", "Required value", "spec.pool.resourceSliceCount");
    else if (!json_is_integer(count) || json_integer_value(count) <= 0)
        invalid(fe, count, "must be greater than zero", "spec.pool.resourceSliceCount");
}

/* Exactly one way of saying which nodes the devices are on. */
static void check_node_selection(const json_t *spec, struct field_errors *fe)
{
    const char *node_name = json_string_value(json_object_get(spec, "nodeName"));
    json_t *node_sel = json_object_get(spec, "nodeSelector");
    bool set[4] = {node_name && node_name[0], node_sel && !json_is_null(node_sel),
                   json_is_true(json_object_get(spec, "allNodes")),
                   json_is_true(json_object_get(spec, "perDeviceNodeSelection"))};
    static const char *const names[4] = {"`nodeName`", "`nodeSelector`", "`allNodes`",
                                         "`perDeviceNodeSelection`"};
    int nset = set[0] + set[1] + set[2] + set[3];
    if (nset != 1) {
        char list[200] = "";
        for (int i = 0; i < 4; i++)
            if (set[i])
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
                         list[0] ? ", " : "", names[i]);
        char m[400];
        if (nset == 0)
            snprintf(m, sizeof(m),
                     "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                     "`perDeviceNodeSelection` is required");
        else
            snprintf(m, sizeof(m),
                     "Invalid value: {%s}: exactly one of `nodeName`, `nodeSelector`, "
                     "`allNodes`, `perDeviceNodeSelection` is required, but multiple fields are "
                     "set",
                     list);
        fe_add(fe, nset ? "Invalid" : "Required", m, "spec");
    }
    if (node_name && node_name[0])
        check_subdomain(fe, node_name, 253, "spec.nodeName");
    if (set[1] && json_array_size(json_object_get(node_sel, "nodeSelectorTerms")) != 1)
        invalid(fe, json_object_get(node_sel, "nodeSelectorTerms"),
                "must have exactly one node selector term", "spec.nodeSelector.nodeSelectorTerms");
}

static void check_slice_devices(const json_t *spec, struct field_errors *fe)
{
    json_t *devices = json_object_get(spec, "devices");
    if (devices && !json_is_null(devices) && !json_is_array(devices)) {
        invalid(fe, devices, "must be a list", "spec.devices");
        return;
    }
    size_t n = json_array_size(devices), i;
    bool tainted = false, counted = false;
    json_t *d;
    json_array_foreach(devices, i, d)
    {
        if (json_array_size(json_object_get(d, "taints")) > 0)
            tainted = true;
        if (json_array_size(json_object_get(d, "consumesCounters")) > 0)
            counted = true;
    }
    size_t max = tainted || counted ? SLICE_MAX_DEVICES_WITH_TAINTS : SLICE_MAX_DEVICES;
    if (n > max) {
        char m[200];
        snprintf(m, sizeof(m), "Too many: %zu: must have at most %zu items%s", n, max,
                 tainted   ? " (when any device has taints)"
                 : counted ? " (when any device consumes counters)"
                           : "");
        fe_add(fe, "TooMany", m, "spec.devices");
    }
    json_array_foreach(devices, i, d)
    {
        check_device(fe, i, d);
        const char *name = json_string_value(json_object_get(d, "name"));
        for (size_t j = 0; name && j < i; j++) {
            const char *other =
                json_string_value(json_object_get(json_array_get(devices, j), "name"));
            if (other && !strcmp(other, name)) {
                char m[128];
                snprintf(m, sizeof(m), "Duplicate value: \"%.63s\"", name);
                fe_add(fe, "Duplicate", m, "spec.devices[%zu].name", i);
                break;
            }
        }
    }
}

/* The checks of a slice's spec, in the order their errors are listed. */
static void (*const slice_checks[])(const json_t *spec, struct field_errors *fe) = {
    check_slice_driver,
    check_slice_pool,
    check_node_selection,
    check_slice_devices,
    validate_slice_counters,
    validate_slice_shares,
    validate_slice_partition_type,
};

static void validate_slice(const json_t *obj, const json_t *old, struct field_errors *fe)
{
    json_t *spec = json_object_get(obj, "spec");
    for (size_t i = 0; i < sizeof(slice_checks) / sizeof(slice_checks[0]); i++)
        slice_checks[i](spec, fe);
    if (old) {
        json_t *ospec = json_object_get(old, "spec");
        check_immutable(fe, json_object_get(spec, "driver"), json_object_get(ospec, "driver"),
                        "spec.driver");
        check_immutable(fe, json_object_get(spec, "nodeName"), json_object_get(ospec, "nodeName"),
                        "spec.nodeName");
        check_immutable(fe, json_object_get(json_object_get(spec, "pool"), "name"),
                        json_object_get(json_object_get(ospec, "pool"), "name"), "spec.pool.name");
    }
}

/* ---------- ResourceClaim ---------- */

/* A result with this driver, pool, device and shareID (NULL: none). */
static bool result_has(const json_t *results, const char *driver, const char *pool,
                       const char *device, const char *share)
{
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r)
    {
        const char *d = json_string_value(json_object_get(r, "driver"));
        const char *p = json_string_value(json_object_get(r, "pool"));
        const char *v = json_string_value(json_object_get(r, "device"));
        const char *sh = json_string_value(json_object_get(r, "shareID"));
        if (d && p && v && !strcmp(d, driver) && !strcmp(p, pool) && !strcmp(v, device) &&
            !strcmp(sh ? sh : "", share ? share : ""))
            return true;
    }
    return false;
}

static void validate_claim(const json_t *obj, const json_t *old, struct field_errors *fe)
{
    if (old)
        check_immutable(fe, json_object_get(obj, "spec"), json_object_get(old, "spec"), "spec");
    json_t *status = json_object_get(obj, "status");
    json_t *results = json_object_get(
        json_object_get(json_object_get(status, "allocation"), "devices"), "results");
    size_t i;
    json_t *r;
    if (json_array_size(results) > 32) {
        char m[100];
        snprintf(m, sizeof(m), "Too many: %zu: must have at most 32 items",
                 json_array_size(results));
        fe_add(fe, "TooMany", m, "status.allocation.devices.results");
    }
    static const char *const result_fields[] = {"request", "driver", "pool", "device"};
    json_array_foreach(results, i, r)
    {
        for (size_t f = 0; f < 4; f++) {
            const char *v = json_string_value(json_object_get(r, result_fields[f]));
            if (v == NULL || v[0] == '\0')
                fe_add(fe, "Required", "Required value",
                       "status.allocation.devices.results[%zu].%s", i, result_fields[f]);
        }
    }
    /* Device status entries belong to allocated devices, once each. */
    json_t *devices = json_object_get(status, "devices");
    json_array_foreach(devices, i, r)
    {
        const char *driver = json_string_value(json_object_get(r, "driver"));
        const char *pool = json_string_value(json_object_get(r, "pool"));
        const char *device = json_string_value(json_object_get(r, "device"));
        if (!driver || !pool || !device || !driver[0] || !pool[0] || !device[0]) {
            fe_add(fe, "Required", "Required value: driver, pool and device are required",
                   "status.devices[%zu]", i);
            continue;
        }
        char field[64];
        snprintf(field, sizeof(field), "status.devices[%zu]", i);
        const char *share = json_string_value(json_object_get(r, "shareID"));
        if (!result_has(results, driver, pool, device, share)) {
            char id[700];
            snprintf(id, sizeof(id), "%s/%s/%s%s%s", driver, pool, device, share ? "/" : "",
                     share ? share : "");
            invalid_str(fe, id, "must be an allocated device in the claim", field);
        }
        for (size_t j = 0; j < i; j++) {
            json_t *o = json_array_get(devices, j);
            const char *oshare = json_string_value(json_object_get(o, "shareID"));
            if (json_equal(json_object_get(o, "driver"), json_object_get(r, "driver")) &&
                json_equal(json_object_get(o, "pool"), json_object_get(r, "pool")) &&
                json_equal(json_object_get(o, "device"), json_object_get(r, "device")) &&
                !strcmp(share ? share : "", oshare ? oshare : "")) {
                char m[700];
                snprintf(m, sizeof(m), "Duplicate value: \"%s/%s/%s\"", driver, pool, device);
                fe_add(fe, "Duplicate", m, "%s", field);
                break;
            }
        }
        if (json_array_size(json_object_get(r, "conditions")) > 8) {
            char m[100];
            snprintf(m, sizeof(m), "Too many: %zu: must have at most 8 items",
                     json_array_size(json_object_get(r, "conditions")));
            fe_add(fe, "TooMany", m, "%s.conditions", field);
        }
    }
}

void validate_object(const struct resource *r, const json_t *obj, const json_t *old,
                     struct field_errors *fe)
{
    if (r == &RES_RESOURCESLICES)
        validate_slice(obj, old, fe);
    else if (r == &RES_RESOURCECLAIMS)
        validate_claim(obj, old, fe);
}
