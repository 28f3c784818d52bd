// SPDX-License-Identifier: Apache-2.0
/* Capacities and counters of the nvidia personality: see nvidia_capacity.h. */
#include "nvidia_capacity.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "quantity.h"

/* One row per engine: its capacity name, its counter name, its tree field. */
static const struct {
    const char *capacity;
    const char *counter;
    size_t offset;
} engines[NVIDIA_ENGINES] = {
    {"multiprocessors", "multiprocessors", offsetof(struct fakehw_device, multiprocessors)},
    {"copyEngines", "copy-engines", offsetof(struct fakehw_device, copy_engines)},
    {"decoders", "decoders", offsetof(struct fakehw_device, decoders)},
    {"encoders", "encoders", offsetof(struct fakehw_device, encoders)},
    {"jpegEngines", "jpeg-engines", offsetof(struct fakehw_device, jpeg_engines)},
    {"ofaEngines", "ofa-engines", offsetof(struct fakehw_device, ofa_engines)},
};

void nvidia_caps_of(const struct fakehw_device *d, struct nvidia_caps *c)
{
    c->memory = d->memory_bytes;
    for (size_t i = 0; i < NVIDIA_ENGINES; i++)
        c->engines[i] = *(const long *)(const void *)((const char *)d + engines[i].offset);
}

void nvidia_caps_max(struct nvidia_caps *acc, const struct nvidia_caps *c)
{
    if (c->memory > acc->memory)
        acc->memory = c->memory;
    for (size_t i = 0; i < NVIDIA_ENGINES; i++)
        if (c->engines[i] > acc->engines[i])
            acc->engines[i] = c->engines[i];
}

static int set_value(json_t *obj, const char *name, const char *value, struct error *err)
{
    if (json_object_set_new(obj, name, json_pack("{s:s}", "value", value)) < 0)
        return error_set(err, "%s: out of memory", name);
    return 0;
}

int nvidia_caps_add(json_t *obj, const struct nvidia_caps *c, bool counters, struct error *err)
{
    char q[QUANTITY_STR_MAX];
    if (quantity_format_bytes(c->memory, q, sizeof(q)) < 0)
        return error_set(err, "memory %" PRIu64 " cannot be formatted as a quantity", c->memory);
    if (set_value(obj, "memory", q, err) < 0)
        return -1;
    if (c->engines[0] <= 0) /* engines not known */
        return 0;
    for (size_t i = 0; i < NVIDIA_ENGINES; i++) {
        snprintf(q, sizeof(q), "%ld", c->engines[i]);
        if (set_value(obj, counters ? engines[i].counter : engines[i].capacity, q, err) < 0)
            return -1;
    }
    return 0;
}

int nvidia_memory_slices_add(json_t *capacity, long start, long size, struct error *err)
{
    for (long s = start; s < start + size; s++) {
        char name[32];
        snprintf(name, sizeof(name), "memorySlice%ld", s);
        if (set_value(capacity, name, "1", err) < 0)
            return -1;
    }
    return 0;
}
