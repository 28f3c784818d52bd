// SPDX-License-Identifier: Apache-2.0
/* Kubernetes API name and value rules: see api_names.h. */
#include "api_names.h"

#include <string.h>

#include "dns_names.h"

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool api_c_identifier_valid(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > API_C_IDENTIFIER_MAX || !(is_alpha(s[0]) || s[0] == '_'))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!is_alpha(s[i]) && !is_digit(s[i]) && s[i] != '_')
            return false;
    }
    return true;
}

bool api_qualified_name_valid(const char *s)
{
    if (s == NULL)
        return false;
    const char *slash = strchr(s, '/');
    if (slash == NULL)
        return api_c_identifier_valid(s);
    size_t prefix = (size_t)(slash - s);
    return prefix <= API_QUALIFIED_PREFIX_MAX && dns_subdomain_valid_n(s, prefix) &&
           api_c_identifier_valid(slash + 1);
}

/* A numeric identifier: digits, no leading zero unless it is "0", at most
 * API_SEMVER_NUMBER_DIGITS_MAX of them. */
static bool numeric_ok(const char *s, size_t n)
{
    if (n == 0 || n > API_SEMVER_NUMBER_DIGITS_MAX || (n > 1 && s[0] == '0'))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return false;
    }
    return true;
}

/* Dot-separated identifiers of [0-9A-Za-z-]; in a pre-release, all-digit
 * identifiers must not have leading zeros. */
static bool identifiers_ok(const char *s, size_t n, bool prerelease)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.') {
            if (!is_alpha(s[i]) && !is_digit(s[i]) && s[i] != '-')
                return false;
            continue;
        }
        size_t len = i - start;
        if (len == 0)
            return false;
        bool all_digits = true;
        for (size_t j = start; j < i; j++)
            all_digits = all_digits && is_digit(s[j]);
        if (prerelease && all_digits && !numeric_ok(s + start, len))
            return false;
        start = i + 1;
    }
    return true;
}

bool api_semver_valid(const char *s)
{
    if (s == NULL)
        return false;
    size_t n = strlen(s);
    size_t core_end = strcspn(s, "-+");
    /* MAJOR.MINOR.PATCH */
    size_t start = 0, dots = 0;
    for (size_t i = 0; i <= core_end; i++) {
        if (i < core_end && s[i] != '.')
            continue;
        if (!numeric_ok(s + start, i - start))
            return false;
        if (i < core_end)
            dots++;
        start = i + 1;
    }
    if (dots != 2)
        return false;
    const char *rest = s + core_end;
    if (*rest == '-') {
        size_t pre = strcspn(rest + 1, "+");
        if (!identifiers_ok(rest + 1, pre, true))
            return false;
        rest += 1 + pre;
    }
    if (*rest == '+') {
        if (!identifiers_ok(rest + 1, strlen(rest + 1), false))
            return false;
        rest += strlen(rest);
    }
    return rest == s + n;
}

static int check_attribute(const char *dev, const char *key, const json_t *v, struct error *err)
{
    if (!api_qualified_name_valid(key))
        return error_set(err,
                         "device %s: attribute name \"%s\" is not a qualified name (C identifier "
                         "of at most 32, optionally after a DNS subdomain of at most 63 and \"/\")",
                         dev, key);
    if (!json_is_object(v))
        return error_set(err, "device %s: attribute \"%s\": value is not an object", dev, key);
    static const char *const kinds[] = {"int", "bool", "string", "version"};
    const char *kind = NULL;
    int set = 0;
    for (size_t i = 0; i < 4; i++) {
        if (json_object_get(v, kinds[i]) != NULL) {
            kind = kinds[i];
            set++;
        }
    }
    if (set != 1 || json_object_size(v) != 1)
        return error_set(err,
                         "device %s: attribute \"%s\": exactly one of int, bool, string, version "
                         "must be set",
                         dev, key);
    const json_t *x = json_object_get(v, kind);
    if (strcmp(kind, "int") == 0) {
        if (!json_is_integer(x))
            return error_set(err, "device %s: attribute \"%s\": int is not an integer", dev, key);
        return 0;
    }
    if (strcmp(kind, "bool") == 0) {
        if (!json_is_boolean(x))
            return error_set(err, "device %s: attribute \"%s\": bool is not a boolean", dev, key);
        return 0;
    }
    if (!json_is_string(x))
        return error_set(err, "device %s: attribute \"%s\": %s is not a string", dev, key, kind);
    const char *s = json_string_value(x);
    if (strlen(s) > API_ATTR_STRING_MAX)
        return error_set(err, "device %s: attribute \"%s\": %s \"%.64s...\" is longer than %d", dev,
                         key, kind, s, API_ATTR_STRING_MAX);
    if (strcmp(kind, "version") == 0 && !api_semver_valid(s))
        return error_set(err,
                         "device %s: attribute \"%s\": version \"%s\" is not semver 2.0.0 with "
                         "numbers of at most 18 digits",
                         dev, key, s);
    return 0;
}

int api_device_validate(const json_t *device, struct error *err)
{
    const char *name = json_string_value(json_object_get(device, "name"));
    if (name == NULL)
        return error_set(err, "device without a name");
    if (!dns_label_valid(name))
        return error_set(err, "device name \"%s\" is not a DNS label", name);
    const json_t *attrs = json_object_get(device, "attributes");
    const json_t *caps = json_object_get(device, "capacity");
    if (attrs != NULL && !json_is_object(attrs))
        return error_set(err, "device %s: attributes is not a map", name);
    if (caps != NULL && !json_is_object(caps))
        return error_set(err, "device %s: capacity is not a map", name);
    size_t total = json_object_size(attrs) + json_object_size(caps);
    if (total > API_DEVICE_ATTRS_MAX)
        return error_set(err, "device %s: %zu attributes and capacities, at most %d are allowed",
                         name, total, API_DEVICE_ATTRS_MAX);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)attrs, key, v)
    {
        if (check_attribute(name, key, v, err) < 0)
            return -1;
    }
    json_object_foreach((json_t *)caps, key, v)
    {
        if (!api_qualified_name_valid(key))
            return error_set(err, "device %s: capacity name \"%s\" is not a qualified name", name,
                             key);
        const char *q = json_string_value(json_object_get(v, "value"));
        if (q == NULL || q[0] == '\0')
            return error_set(err, "device %s: capacity \"%s\": value is not a quantity", name, key);
    }
    return 0;
}
