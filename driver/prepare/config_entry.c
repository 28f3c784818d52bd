// SPDX-License-Identifier: Apache-2.0
#include "config_entry.h"

#include <string.h>

#include "strict_json.h"

int config_entry_read(const char *driver, const json_t *item, size_t i, bool opaque_only,
                      struct config_entry *e, struct error *err)
{
    memset(e, 0, sizeof(*e));
    if (!json_is_object(item))
        return error_set(err, "config[%zu]: not an object", i);
    const json_t *opaque = strict_json_field(item, "opaque");
    if (opaque == NULL && opaque_only)
        return error_set(err, "config[%zu]: only opaque parameters are supported by this driver",
                         i);
    if (opaque == NULL)
        return 0; /* a kind of configuration other than opaque: not ours */
    const json_t *drv = json_object_get(opaque, "driver");
    if (!json_is_string(drv))
        return error_set(err, "config[%zu]: opaque.driver is missing", i);
    if (strcmp(json_string_value(drv), driver) != 0)
        return 0; /* another driver's: skipped, as every driver must */
    const json_t *src = json_object_get(item, "source");
    if (!json_is_string(src) || (strcmp(json_string_value(src), "FromClass") != 0 &&
                                 strcmp(json_string_value(src), "FromClaim") != 0))
        return error_set(err, "config[%zu]: source must be FromClass or FromClaim", i);
    /* Static text: the result outlives the claim JSON. */
    e->source = strcmp(json_string_value(src), "FromClass") ? "FromClaim" : "FromClass";
    const json_t *requests = strict_json_field(item, "requests");
    if (requests != NULL && !json_is_array(requests))
        return error_set(err, "config[%zu] (%s): requests must be a list", i, e->source);
    e->requests = json_array_size(requests) ? requests : NULL;
    e->parameters = json_object_get(opaque, "parameters");
    return 1;
}

bool config_entry_names_request(const json_t *requests, const char *r)
{
    if (requests == NULL)
        return true;
    const char *slash = strchr(r, '/');
    size_t base = slash ? (size_t)(slash - r) : strlen(r);
    size_t i;
    json_t *q;
    json_array_foreach(requests, i, q)
    {
        const char *s = json_string_value(q);
        if (s != NULL && (!strcmp(s, r) || (strlen(s) == base && !strncmp(s, r, base))))
            return true;
    }
    return false;
}
