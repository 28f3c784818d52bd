// SPDX-License-Identifier: Apache-2.0
/* Reading a claim's JSON: see claim_json.h. */
#include "claim_json.h"

#include <string.h>
#include <time.h>

static const char *str_field(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

const char *claim_meta(const json_t *claim, const char *key)
{
    return str_field(json_object_get(claim, "metadata"), key);
}

bool claim_has_results(const json_t *claim, const char *driver, const char *pool)
{
    const json_t *results = claim_allocation_results(claim);
    size_t i;
    const json_t *r;
    json_array_foreach(results, i, r)
    {
        if (claim_result_of(r, driver, pool))
            return true;
    }
    return false;
}

json_t *claim_devices_patch(const json_t *claim, const json_t *devices)
{
    const char *rv = claim_meta(claim, "resourceVersion");
    json_t *meta = rv ? json_pack("{s:s}", "resourceVersion", rv) : json_object();
    json_t *status = json_pack("{s:O}", "devices", devices);
    if (meta == NULL || status == NULL) {
        json_decref(meta);
        json_decref(status);
        return NULL;
    }
    return json_pack("{s:o, s:o}", "metadata", meta, "status", status);
}

void claim_format_time(long long t, char *buf, size_t size)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (size == 0)
        return;
    if (gmtime_r(&tt, &tm) == NULL || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        buf[0] = '\0';
}
