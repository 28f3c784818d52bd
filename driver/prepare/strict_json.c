// SPDX-License-Identifier: Apache-2.0
#include "strict_json.h"

#include <stdbool.h>
#include <string.h>

const json_t *strict_json_field(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_null(v) ? NULL : v;
}

int strict_json_check_fields(const json_t *obj, const char *path, const char *const *allowed,
                             struct error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        bool known = false;
        for (const char *const *a = allowed; *a && !known; a++)
            known = !strcmp(*a, key);
        if (!known)
            return error_set(err, "unknown field \"%s%s%s\"", path, *path ? "." : "", key);
    }
    return 0;
}

int strict_json_object(const json_t *v, const char *path, struct error *err)
{
    return json_is_object(v) ? 0 : error_set(err, "field \"%s\" must be an object", path);
}

int strict_json_object_of(const json_t *v, const char *path, const char *const *allowed,
                          struct error *err)
{
    if (strict_json_object(v, path, err) < 0)
        return -1;
    return strict_json_check_fields(v, path, allowed, err);
}

int strict_json_string(const json_t *v, const char *path, struct error *err)
{
    if (!json_is_string(v))
        return error_set(err, "field \"%s\" must be a string", path);
    if (strlen(json_string_value(v)) != json_string_length(v))
        return error_set(err, "field \"%s\" holds a NUL character", path);
    return 0;
}
