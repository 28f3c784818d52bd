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
