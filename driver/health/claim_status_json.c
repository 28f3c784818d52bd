// SPDX-License-Identifier: Apache-2.0
/* Building a claim's status.devices: see claim_status_json.h. */
#include "claim_status_json.h"

#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "device_health.h"
#include "quantity.h"
#include "utf8.h"

static const char *str_field(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* obj.a.b.c..., NULL when any step is missing. */
static const json_t *path_get(const json_t *obj, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n && obj != NULL; i++)
        obj = json_object_get(obj, keys[i]);
    return obj;
}

static const json_t *allocation_results(const json_t *claim)
{
    static const char *const keys[] = {"status", "allocation", "devices", "results"};
    return path_get(claim, keys, 4);
}

static bool entry_matches(const json_t *entry, const char *driver, const char *pool,
                          const char *device, const char *share_id)
{
    const char *d = str_field(entry, "driver"), *p = str_field(entry, "pool");
    const char *dev = str_field(entry, "device"), *s = str_field(entry, "shareID");
    return d && p && dev && strcmp(d, driver) == 0 && strcmp(p, pool) == 0 &&
           strcmp(dev, device) == 0 && strcmp(s ? s : "", share_id ? share_id : "") == 0;
}

/* The conditions of an entry with Ready set from h: other types kept, Ready
 * in its old position (or appended), lastTransitionTime kept while the
 * status stays the same. */
static json_t *ready_conditions(const json_t *old, const struct device_health *h, const char *now,
                                const json_t *generation)
{
    json_auto_t *out = json_array();
    json_auto_t *ready =
        json_pack("{s:s, s:s, s:s, s:s}", "type", CLAIM_CONDITION_READY, "status",
                  h->healthy ? "True" : "False", "reason", h->reason, "message", h->message);
    if (out == NULL || ready == NULL)
        return NULL;
    const char *since = now;
    bool placed = false;
    size_t i;
    const json_t *c;
    json_array_foreach(old, i, c)
    {
        const char *type = str_field(c, "type");
        if (type == NULL || strcmp(type, CLAIM_CONDITION_READY) != 0) {
            if (json_array_append(out, (json_t *)c) < 0)
                return NULL;
            continue;
        }
        if (placed)
            continue; /* a duplicate Ready would be refused by the server */
        const char *old_status = str_field(c, "status");
        const char *old_since = str_field(c, "lastTransitionTime");
        if (old_status && old_since && strcmp(old_status, h->healthy ? "True" : "False") == 0)
            since = old_since;
        if (json_array_append(out, ready) < 0)
            return NULL;
        placed = true;
    }
    /* Ready is in out (a reference): set its time there. */
    if ((!placed && json_array_append(out, ready) < 0) ||
        json_object_set_new(ready, "lastTransitionTime", json_string(since)) < 0 ||
        (json_is_integer(generation) &&
         json_object_set_new(ready, "observedGeneration", json_deep_copy(generation)) < 0))
        return NULL;
    return steal_pointer(&out);
}

static json_t *device_data(const struct fakehw_device *dev)
{
    char memory[QUANTITY_STR_MAX];
    if (quantity_format_bytes(dev->memory_bytes, memory, sizeof(memory)) < 0)
        return NULL;
    /* Tree text, cleaned like the health message (json_pack refuses bad UTF-8). */
    char uuid[sizeof(dev->uuid)], product[sizeof(dev->product_name)];
    return json_pack("{s:s, s:s, s:s}", "uuid", utf8_copy_clean(uuid, sizeof(uuid), dev->uuid),
                     "productName", utf8_copy_clean(product, sizeof(product), dev->product_name),
                     "memory", memory);
}

/* The entry's data: the device's, and what the opaque config made of it. */
static int set_data(json_t *entry, const struct fakehw_device *dev,
                    const struct claim_status_input *in, const json_t *claim, size_t result)
{
    json_t *data = device_data(dev);
    json_t *config = in->config_data
                         ? in->config_data(in->config_ctx, claim, result, in->find, in->find_ctx)
                         : NULL;
    /* set_new takes config and data, also when it fails (or data is NULL). */
    if (config != NULL && json_object_set_new(data, "config", config) < 0) {
        json_decref(data);
        return -1;
    }
    return json_object_set_new(entry, "data", data);
}

/* Our entry for one allocation result, starting from the old one if any. */
static json_t *build_entry(const json_t *old, const char *device, const char *share_id,
                           const struct claim_status_input *in, const json_t *generation,
                           const json_t *claim, size_t result)
{
    json_auto_t *entry = old ? json_deep_copy(old) : json_object();
    if (entry == NULL)
        return NULL;
    if (old == NULL && (json_object_set_new(entry, "driver", json_string(in->driver)) < 0 ||
                        json_object_set_new(entry, "pool", json_string(in->pool)) < 0 ||
                        json_object_set_new(entry, "device", json_string(device)) < 0 ||
                        (share_id && share_id[0] &&
                         json_object_set_new(entry, "shareID", json_string(share_id)) < 0)))
        return NULL;
    const struct fakehw_device *dev = in->find(in->find_ctx, device);
    struct device_health h;
    if (dev != NULL)
        device_health_classify(dev, in->tree_up, &in->health, &h);
    else
        device_health_removed(device, &h);
    json_t *conds = ready_conditions(json_object_get(entry, "conditions"), &h, in->now, generation);
    if (json_object_set_new(entry, "conditions", conds) < 0 ||
        (dev != NULL && set_data(entry, dev, in, claim, result) < 0))
        return NULL;
    return steal_pointer(&entry);
}

/* The first entry of list under the list map's key of one allocation
 * result (driver, pool, device, shareID), or NULL. */
static const json_t *find_entry(const json_t *list, const char *driver, const char *pool,
                                const char *device, const char *share_id)
{
    size_t j;
    const json_t *o;
    json_array_foreach(list, j, o)
    {
        if (entry_matches(o, driver, pool, device, share_id))
            return o;
    }
    return NULL;
}

/* Entries of other drivers or pools, as they are and in their order. */
static int keep_others(json_t *out, const json_t *existing, const struct claim_status_input *in)
{
    size_t i;
    const json_t *e;
    json_array_foreach(existing, i, e)
    {
        const char *d = str_field(e, "driver"), *p = str_field(e, "pool");
        bool ours = d && p && strcmp(d, in->driver) == 0 && strcmp(p, in->pool) == 0;
        if (!ours && json_array_append(out, (json_t *)e) < 0)
            return -1;
    }
    return 0;
}

int claim_status_devices_build(const json_t *claim, const struct claim_status_input *in,
                               json_t **devices, struct error *err)
{
    static const char *const ns_key[] = {"metadata", "namespace"};
    static const char *const name_key[] = {"metadata", "name"};
    static const char *const gen_key[] = {"metadata", "generation"};
    static const char *const devs_key[] = {"status", "devices"};
    const json_t *ns_j = path_get(claim, ns_key, 2), *name_j = path_get(claim, name_key, 2);
    const char *ns = json_is_string(ns_j) ? json_string_value(ns_j) : "?";
    const char *name = json_is_string(name_j) ? json_string_value(name_j) : "?";
    const json_t *results = allocation_results(claim);
    if (results == NULL)
        return error_set(err, "claim %s/%s: not allocated", ns, name);
    if (!json_is_array(results))
        return error_set(err, "claim %s/%s: status.allocation.devices.results is not a list", ns,
                         name);
    const json_t *generation = path_get(claim, gen_key, 2);
    const json_t *existing = path_get(claim, devs_key, 2);
    if (existing != NULL && !json_is_array(existing))
        return error_set(err, "claim %s/%s: status.devices is not a list", ns, name);

    json_auto_t *out = json_array();
    if (out == NULL) {
        error_set(err, "claim %s/%s: out of memory", ns, name);
        return CLAIM_STATUS_BUILD_FAILED;
    }
    if (keep_others(out, existing, in) < 0) {
        error_set(err, "claim %s/%s: cannot copy the other drivers' status.devices entries", ns,
                  name);
        return CLAIM_STATUS_BUILD_FAILED;
    }
    size_t i;
    const json_t *r;
    json_array_foreach(results, i, r)
    {
        const char *d = str_field(r, "driver"), *p = str_field(r, "pool");
        if (!d || !p || strcmp(d, in->driver) != 0 || strcmp(p, in->pool) != 0)
            continue;
        const char *device = str_field(r, "device");
        if (device == NULL || device[0] == '\0')
            return error_set(err, "claim %s/%s: status.allocation.devices.results[%zu]: no device",
                             ns, name, i);
        const char *share_id = str_field(r, "shareID");
        /* One entry per key even when two requests got the same device. */
        if (find_entry(out, d, p, device, share_id) != NULL)
            continue;
        const json_t *old = find_entry(existing, d, p, device, share_id);
        json_t *entry = build_entry(old, device, share_id, in, generation, claim, i);
        if (entry == NULL || json_array_append_new(out, entry) < 0) {
            error_set(err, "claim %s/%s: cannot build the status.devices entry of device %s", ns,
                      name, device);
            return CLAIM_STATUS_BUILD_FAILED;
        }
    }
    *devices = steal_pointer(&out);
    return 0;
}
