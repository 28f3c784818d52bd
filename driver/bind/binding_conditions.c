// SPDX-License-Identifier: Apache-2.0
/* Binding-condition JSON: see binding_conditions.h. */
#include "binding_conditions.h"

#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "driver/claims/claim_json.h"

void binding_names_make(const char *driver, struct binding_names *names)
{
    snprintf(names->attached, sizeof(names->attached), "%s/%s", driver, BINDING_ATTACHED_SUFFIX);
    snprintf(names->failed, sizeof(names->failed), "%s/%s", driver, BINDING_FAILED_SUFFIX);
}

int binding_device_add(json_t *device, const struct binding_names *names)
{
    if (json_object_set_new(device, "bindsToNode", json_true()) < 0 ||
        json_object_set_new(device, "bindingConditions", json_pack("[s]", names->attached)) < 0 ||
        json_object_set_new(device, "bindingFailureConditions", json_pack("[s]", names->failed)) <
            0)
        return -1;
    return 0;
}

static const char *str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static bool ours(const json_t *entry, const char *driver, const char *pool)
{
    const char *d = str(entry, "driver"), *p = str(entry, "pool");
    return d != NULL && p != NULL && !strcmp(d, driver) && !strcmp(p, pool);
}

void binding_claim_pool_results(const json_t *claim, const char *driver, const char *pool,
                                binding_pool_result_fn fn, void *ctx)
{
    const json_t *results = claim_allocation_results(claim);
    size_t i;
    const json_t *r;
    json_array_foreach(results, i, r)
    {
        const char *device = str(r, "device"), *p = str(r, "pool");
        if (device == NULL || !claim_result_of(r, driver, pool))
            continue;
        fn(ctx, p, device, json_array_size(json_object_get(r, "bindingConditions")) > 0);
    }
}

struct no_pool {
    binding_result_fn fn;
    void *ctx;
};

static void without_pool(void *ctx, const char *pool, const char *device, bool has_conditions)
{
    const struct no_pool *np = ctx;
    (void)pool;
    np->fn(np->ctx, device, has_conditions);
}

void binding_claim_results(const json_t *claim, const char *driver, const char *pool,
                           binding_result_fn fn, void *ctx)
{
    struct no_pool np = {fn, ctx};
    binding_claim_pool_results(claim, driver, pool, without_pool, &np);
}

/* Our status entry of device (no shareID: attachable devices are never
 * shared out), or NULL. */
static json_t *find_entry(const json_t *devices, const char *driver, const char *pool,
                          const char *device)
{
    size_t i;
    json_t *e;
    json_array_foreach(devices, i, e)
    {
        const char *name = str(e, "device");
        if (name != NULL && !strcmp(name, device) && ours(e, driver, pool) &&
            json_object_get(e, "shareID") == NULL)
            return e;
    }
    return NULL;
}

static bool condition_true(const json_t *entry, const char *type)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(entry, "conditions"), i, c)
    {
        const char *t = str(c, "type"), *s = str(c, "status");
        if (t != NULL && s != NULL && !strcmp(t, type))
            return !strcmp(s, "True");
    }
    return false;
}

enum binding_reported binding_claim_reported(const json_t *claim, const char *driver,
                                             const char *pool, const char *device,
                                             const struct binding_names *names)
{
    const json_t *entry = find_entry(json_object_get(json_object_get(claim, "status"), "devices"),
                                     driver, pool, device);
    if (entry == NULL)
        return BINDING_REPORTED_NOTHING;
    if (condition_true(entry, names->failed))
        return BINDING_REPORTED_FAILED;
    if (condition_true(entry, names->attached))
        return BINDING_REPORTED_ATTACHED;
    return BINDING_REPORTED_NOTHING;
}

const char *binding_allocation_time(const json_t *claim)
{
    const char *t =
        str(json_object_get(json_object_get(claim, "status"), "allocation"), "allocationTimestamp");
    return t != NULL ? t : "";
}

json_t *binding_status_set(const json_t *claim, const char *driver, const char *pool,
                           const char *device, const char *type, const char *reason,
                           const char *message, const char *now)
{
    const json_t *old = json_object_get(json_object_get(claim, "status"), "devices");
    json_auto_t *devices = json_is_array(old) ? json_deep_copy(old) : json_array();
    if (devices == NULL)
        return NULL;
    json_t *entry = find_entry(devices, driver, pool, device);
    if (entry == NULL) {
        entry = json_pack("{s:s, s:s, s:s, s:[]}", "driver", driver, "pool", pool, "device", device,
                          "conditions");
        if (json_array_append_new(devices, entry) < 0) /* takes entry; fails on NULL */
            return NULL;
    }
    json_t *conds = json_object_get(entry, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        if (json_object_set_new(entry, "conditions", conds) < 0)
            return NULL;
    }
    json_int_t generation =
        json_integer_value(json_object_get(json_object_get(claim, "metadata"), "generation"));
    json_t *cond = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "type", type, "status", "True",
                             "reason", reason, "message", message, "lastTransitionTime", now,
                             "observedGeneration", generation);
    if (cond == NULL)
        return NULL;
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *t = str(c, "type");
        if (t != NULL && !strcmp(t, type)) {
            /* The time of a condition that was True already stays. */
            if (!strcmp(str(c, "status") ? str(c, "status") : "", "True") &&
                str(c, "lastTransitionTime") != NULL)
                json_object_set(cond, "lastTransitionTime",
                                json_object_get(c, "lastTransitionTime"));
            return json_array_set_new(conds, i, cond) < 0 ? NULL : steal_pointer(&devices);
        }
    }
    return json_array_append_new(conds, cond) < 0 ? NULL : steal_pointer(&devices);
}
