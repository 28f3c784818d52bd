// SPDX-License-Identifier: Apache-2.0
/* Consumable capacity in the published devices: see shares.h. */
#include "shares.h"

#include "quantity.h"

int shares_decorate(const struct fakehw_device *d, json_t *dev, struct error *err)
{
    const uint64_t *sh = d->memory_sharing;
    if (sh[0] == 0)
        return 0;
    /* The API wants max = min + n*step: the largest such value within the
     * memory (an H200's 143771Mi with 1Gi steps gives 140Gi). */
    if (sh[1] > d->memory_bytes || sh[2] == 0)
        return error_set(err, "device %s: memory sharing min is more than its memory", d->name);
    uint64_t top = sh[1] + (d->memory_bytes - sh[1]) / sh[2] * sh[2];
    char def[QUANTITY_STR_MAX], min[QUANTITY_STR_MAX], max[QUANTITY_STR_MAX],
        step[QUANTITY_STR_MAX];
    if (quantity_format_bytes(sh[0], def, sizeof(def)) < 0 ||
        quantity_format_bytes(sh[1], min, sizeof(min)) < 0 ||
        quantity_format_bytes(top, max, sizeof(max)) < 0 ||
        quantity_format_bytes(sh[2], step, sizeof(step)) < 0)
        return error_set(err, "device %s: memory sharing cannot be written as quantities", d->name);
    json_t *mem = json_object_get(json_object_get(dev, "capacity"), "memory");
    if (!json_is_object(mem) ||
        json_object_set_new(mem, "requestPolicy",
                            json_pack("{s:s, s:{s:s, s:s, s:s}}", "default", def, "validRange",
                                      "min", min, "max", max, "step", step)) < 0 ||
        json_object_set_new(dev, "allowMultipleAllocations", json_true()) < 0)
        return error_set(err, "device %s: out of memory", d->name);
    return 0;
}
