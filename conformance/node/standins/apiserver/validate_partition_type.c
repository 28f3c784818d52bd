// SPDX-License-Identifier: Apache-2.0
/* spec.partitionTypeAttribute of ResourceSlices: see validate.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"

#define FIELD "spec.partitionTypeAttribute"

static bool consumes_counters(const json_t *device)
{
    const json_t *cc = json_object_get(device, "consumesCounters");
    return cc != NULL && !json_is_null(cc) && json_array_size(cc) > 0;
}

/* The real server's message quotes the value as Go does: a JSON string. */
static void invalid_value(struct field_errors *fe, const char *name, const char *detail)
{
    json_t *v = json_string(name);
    char *q = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    char msg[512];
    snprintf(msg, sizeof(msg), "Invalid value: %.200s: %s", q ? q : "\"\"", detail);
    free(q);
    json_decref(v);
    fe_add(fe, "Invalid", msg, "%s", FIELD);
}

void validate_slice_partition_type(const json_t *spec, struct field_errors *fe)
{
    const json_t *attr = json_object_get(spec, "partitionTypeAttribute");
    if (attr == NULL || json_is_null(attr))
        return;
    const char *name = json_string_value(attr);
    if (name == NULL) {
        fe_add(fe, "Invalid", "Invalid value: must be a string", "%s", FIELD);
        return;
    }
    /* The format (declarative in 1.37): a qualified name that has a domain. */
    int before = fe->count;
    check_qualified_name(fe, name, FIELD);
    if (strchr(name, '/') == NULL)
        invalid_value(fe, name,
                      "a fully qualified name must be a domain and a name separated by a slash");
    bool malformed = fe->count > before;
    const json_t *devices = json_object_get(spec, "devices");
    bool any = false;
    size_t i;
    const json_t *d;
    json_array_foreach(devices, i, d) any = any || consumes_counters(d);
    if (!any) {
        invalid_value(fe, name,
                      "may only be set on a slice which declares devices that consume "
                      "counters");
        return;
    }
    if (malformed)
        return; /* no device can carry a malformed name */
    const char *driver = json_string_value(json_object_get(spec, "driver"));
    const char *bare = NULL;
    size_t dl = driver ? strlen(driver) : 0;
    if (dl > 0 && !strncmp(name, driver, dl) && name[dl] == '/')
        bare = name + dl + 1;
    json_array_foreach(devices, i, d)
    {
        if (!consumes_counters(d))
            continue;
        const json_t *attrs = json_object_get(d, "attributes");
        const json_t *a = json_object_get(attrs, name);
        if (a == NULL && bare != NULL)
            a = json_object_get(attrs, bare);
        if (a == NULL) {
            fe_add(fe, "Required",
                   "Required value: device consumes counters and `partitionTypeAttribute` names "
                   "this attribute, so it must be set",
                   "spec.devices[%zu].attributes[%s]", i, name);
        } else if (!json_is_string(json_object_get(a, "string"))) {
            char *v = json_dumps(a, JSON_COMPACT);
            char msg[512];
            snprintf(msg, sizeof(msg),
                     "Invalid value: %.200s: must be a string value because "
                     "`partitionTypeAttribute` names this attribute",
                     v ? v : "{}");
            free(v);
            fe_add(fe, "Invalid", msg, "spec.devices[%zu].attributes[%s]", i, name);
        }
    }
}

void slice_drop_partition_type(json_t *obj)
{
    json_object_del(json_object_get(obj, "spec"), "partitionTypeAttribute");
}
