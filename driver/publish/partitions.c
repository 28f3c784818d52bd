// SPDX-License-Identifier: Apache-2.0
/* Partitionable devices: see partitions.h. */
#include "partitions.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_names.h"
#include "cleanup.h"
#include "dns_names.h"
#include "quantity.h"

#define MEMORY_SLICES 8

static bool is_partition(const struct fakehw_device *d)
{
    return d->parent[0] != '\0';
}

static bool mode_is(const struct fakehw_device *d, const char *mode)
{
    return !strcmp(d->mig_mode, mode);
}

static int plan_oom(struct partition_plan *out, size_t n, struct error *err)
{
    partitions_plan_free(out);
    return error_set(err, "out of memory planning the partitions of %zu devices", n);
}

int partitions_plan(const struct fakehw_device *devs, size_t n, bool counters, bool nvidia,
                    struct partition_plan *out, struct error *err)
{
    memset(out, 0, sizeof(*out));
    out->nvidia = nvidia;
    json_auto_t *by_name = json_object(); /* GPU name -> index */
    out->info = calloc(n ? n : 1, sizeof(*out->info));
    out->sets = calloc(n ? n : 1, sizeof(*out->sets));
    out->set_caps = calloc(n ? n : 1, sizeof(*out->set_caps));
    if (by_name == NULL || out->info == NULL || out->sets == NULL || out->set_caps == NULL)
        return plan_oom(out, n, err);
    for (size_t i = 0; i < n; i++) {
        const struct fakehw_device *d = &devs[i];
        if (is_partition(d))
            continue;
        if (json_object_set_new(by_name, d->name, json_integer((json_int_t)i)) < 0)
            return plan_oom(out, n, err);
        out->info[i].role = PARTITION_PLAIN;
        if (mode_is(d, FAKEHW_MIG_STATIC)) {
            out->info[i].role = PARTITION_HIDDEN;
        } else if (counters && mode_is(d, FAKEHW_MIG_DYNAMIC)) {
            out->info[i].role = PARTITION_COUNTED;
            out->info[i].set = out->n_sets;
            out->sets[out->n_sets++] = d;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const struct fakehw_device *d = &devs[i];
        if (!is_partition(d))
            continue;
        json_t *pi = json_object_get(by_name, d->parent);
        const struct fakehw_device *gpu = pi ? &devs[json_integer_value(pi)] : NULL;
        struct partition_info *info = &out->info[i];
        info->parent = gpu;
        if (gpu == NULL || mode_is(gpu, FAKEHW_MIG_STATIC)) {
            info->role = PARTITION_PLAIN; /* an instance that exists: a device of its own */
        } else if (out->info[gpu - devs].role == PARTITION_COUNTED) {
            info->role = PARTITION_COUNTED;
            info->set = out->info[gpu - devs].set;
            struct nvidia_caps c;
            nvidia_caps_of(d, &c);
            nvidia_caps_max(&out->set_caps[info->set], &c);
        } else {
            info->role = PARTITION_HIDDEN; /* a placement, without counters to guard it */
        }
    }
    return 0;
}

void partitions_plan_free(struct partition_plan *p)
{
    free(p->info);
    free(p->sets);
    free(p->set_caps);
    memset(p, 0, sizeof(*p));
}

size_t partitions_counter_slices(const struct partition_plan *p)
{
    return (p->n_sets + PARTITIONS_SETS_PER_SLICE - 1) / PARTITIONS_SETS_PER_SLICE;
}

void partitions_set_name(const struct fakehw_device *gpu, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s" PARTITIONS_COUNTER_SET_SUFFIX, gpu->name);
    if (n < 0 || (size_t)n >= size || !dns_label_valid(buf))
        snprintf(buf, size, "gpu-%ld" PARTITIONS_COUNTER_SET_SUFFIX, gpu->index);
}

/* {"memory": {"value": Q}, "memory-slice-<start>": {"value": "1"}, ...};
 * with caps (the nvidia personality) its memory and engines instead of
 * memory. */
static json_t *counters_json(uint64_t memory, const struct nvidia_caps *caps, long start, long size,
                             struct error *err)
{
    char q[QUANTITY_STR_MAX];
    if (quantity_format_bytes(memory, q, sizeof(q)) < 0) {
        error_set(err, "memory %" PRIu64 " cannot be formatted as a quantity", memory);
        return NULL;
    }
    json_t *c = json_pack("{s:{s:s}}", "memory", "value", q);
    if (c != NULL && caps != NULL && nvidia_caps_add(c, caps, true, err) < 0) {
        json_decref(c);
        return NULL;
    }
    for (long s = start; c != NULL && s < start + size && s < MEMORY_SLICES; s++) {
        char name[32];
        snprintf(name, sizeof(name), "memory-slice-%ld", s);
        if (json_object_set_new(c, name, json_pack("{s:s}", "value", "1")) < 0) {
            json_decref(c);
            c = NULL;
        }
    }
    if (c == NULL)
        error_set(err, "out of memory");
    return c;
}

static json_t *counter_sets_oom(struct error *err)
{
    error_set(err, "out of memory building the counter sets");
    return NULL;
}

json_t *partitions_shared_counters_json(const struct partition_plan *p, size_t k, struct error *err)
{
    json_auto_t *sets = json_array();
    if (sets == NULL)
        return counter_sets_oom(err);
    for (size_t s = k * PARTITIONS_SETS_PER_SLICE;
         s < p->n_sets && s < (k + 1) * PARTITIONS_SETS_PER_SLICE; s++) {
        char name[80];
        partitions_set_name(p->sets[s], name, sizeof(name));
        json_t *c = counters_json(p->sets[s]->memory_bytes, p->nvidia ? &p->set_caps[s] : NULL, 0,
                                  MEMORY_SLICES, err);
        if (c == NULL)
            return NULL;
        if (json_array_append_new(sets, json_pack("{s:s, s:o}", "name", name, "counters", c)) < 0)
            return counter_sets_oom(err);
    }
    return steal_pointer(&sets);
}

static int set_string_attr(json_t *attrs, const char *name, const char *value)
{
    return json_object_set_new(attrs, name, json_pack("{s:s}", "string", value));
}

/* The nvidia personality's capacities of d (nvidia_capacity.h), and no
 * uuid on a placement that is not made yet. */
static int nvidia_decorate(const struct partition_plan *p, const struct fakehw_device *d,
                           const struct partition_info *info, json_t *dev, struct error *err)
{
    struct nvidia_caps caps;
    bool counted = info->role == PARTITION_COUNTED;
    if (is_partition(d))
        nvidia_caps_of(d, &caps);
    else if (counted)
        caps = p->set_caps[info->set];
    else
        return 0; /* a whole GPU without partitions: memory, as published */
    json_t *capacity = json_object();
    if (capacity == NULL || json_object_set_new(dev, "capacity", capacity) < 0)
        return error_set(err, "device %s: out of memory", d->name);
    if (nvidia_caps_add(capacity, &caps, false, err) < 0 ||
        (is_partition(d) && !counted &&
         nvidia_memory_slices_add(capacity, d->mig_placement[0], d->mig_placement[1], err) < 0))
        return error_prefix(err, "device %s: capacity", d->name);
    if (is_partition(d) && counted)
        json_object_del(json_object_get(dev, "attributes"), "uuid");
    return 0;
}

int partitions_decorate(const struct partition_plan *p, const struct fakehw_device *d, size_t i,
                        json_t *dev, struct error *err)
{
    const struct partition_info *info = &p->info[i];
    json_t *attrs = json_object_get(dev, "attributes");
    if (is_partition(d) && json_is_object(attrs) &&
        ((d->mig_profile[0] &&
          set_string_attr(attrs, PARTITIONS_TYPE_ATTRIBUTE, d->mig_profile) < 0) ||
         (info->parent != NULL && set_string_attr(attrs, "parentUUID", info->parent->uuid) < 0)))
        return error_set(err, "device %s: out of memory", d->name);
    if (p->nvidia && nvidia_decorate(p, d, info, dev, err) < 0)
        return -1;
    if (info->role != PARTITION_COUNTED)
        return 0;
    if (!is_partition(d) && json_is_object(attrs) &&
        set_string_attr(attrs, PARTITIONS_TYPE_ATTRIBUTE, PARTITIONS_WHOLE_PROFILE) < 0)
        return error_set(err, "device %s: out of memory", d->name);
    char set[80];
    partitions_set_name(p->sets[info->set], set, sizeof(set));
    /* The whole GPU takes every counter; a partition its memory and slices. */
    struct nvidia_caps own;
    nvidia_caps_of(d, &own);
    const struct nvidia_caps *caps = !p->nvidia        ? NULL
                                     : is_partition(d) ? &own
                                                       : &p->set_caps[info->set];
    json_t *c = is_partition(d) ? counters_json(d->memory_bytes, caps, d->mig_placement[0],
                                                d->mig_placement[1], err)
                                : counters_json(d->memory_bytes, caps, 0, MEMORY_SLICES, err);
    if (c == NULL)
        return error_prefix(err, "device %s", d->name);
    if (json_object_set_new(dev, "consumesCounters",
                            json_pack("[{s:s, s:o}]", "counterSet", set, "counters", c)) < 0)
        return error_set(err, "device %s: out of memory", d->name);
    return 0;
}
