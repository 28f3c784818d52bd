// SPDX-License-Identifier: Apache-2.0
/* Building the ResourceSlices of the node's pool: see slice_builder.h. */
#include "slice_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_names.h"
#include "cleanup.h"
#include "dns_names.h"
#include "driver/bind/binding_conditions.h"
#include "shares.h"
#include "driver/device/device_attributes.h"
#include "driver/device/nvidia_attributes.h"
#include "driver/device/nvidia_vfio.h"
#include "quantity.h"

int slice_index_digits(size_t n_slices)
{
    int digits = 1;
    for (size_t v = n_slices > 0 ? n_slices - 1 : 0; v >= 16; v /= 16)
        digits++;
    return digits < SLICE_INDEX_MIN_DIGITS ? SLICE_INDEX_MIN_DIGITS : digits;
}

void slice_generate_name(size_t index, size_t n_slices, const char *driver, const char *node,
                         char *buf, size_t size)
{
    char full[600];
    snprintf(full, sizeof(full), "%0*zx-%s-%s-", slice_index_digits(n_slices), index, driver, node);
    /* The server keeps the first 58 characters of a generateName base. */
    size_t keep = strlen(full);
    if (keep > SLICE_GENERATE_NAME_MAX)
        keep = SLICE_GENERATE_NAME_MAX;
    if (keep >= size)
        keep = size - 1;
    memcpy(buf, full, keep);
    buf[keep] = '\0';
}

int slice_set_generation(json_t *slice, int64_t generation)
{
    json_t *pool = json_object_get(json_object_get(slice, "spec"), "pool");
    if (!json_is_object(pool))
        return -1;
    return json_object_set_new(pool, "generation", json_integer((json_int_t)generation));
}

json_t *slice_device_json(const struct fakehw_device *d, const char *driver, bool tree_up,
                          enum taint_effect effect, const struct health_policy *health,
                          struct error *err)
{
    enum personality p = health->personality;
    char memory[QUANTITY_STR_MAX];
    if (quantity_format_bytes(d->memory_bytes, memory, sizeof(memory)) < 0) {
        error_set(err, "device %s: memory %llu cannot be formatted as a quantity", d->name,
                  (unsigned long long)d->memory_bytes);
        return NULL;
    }
    json_t *attrs =
        p == PERSONALITY_NVIDIA ? nvidia_attributes_json(d, err) : device_attributes_json(d, err);
    if (attrs == NULL)
        return NULL;
    bool vfio = p == PERSONALITY_NVIDIA && nvidia_is_vfio(d);
    json_t *capacity = vfio ? nvidia_vfio_capacity_json(d, err)
                            : json_pack("{s:{s:s}}", "memory", "value", memory);
    if (capacity == NULL) {
        json_decref(attrs);
        if (!vfio)
            error_set(err, "device %s: out of memory", d->name);
        return NULL;
    }
    json_t *dev =
        json_pack("{s:s, s:o, s:o}", "name", d->name, "attributes", attrs, "capacity", capacity);
    if (dev == NULL) {
        error_set(err, "device %s: out of memory", d->name);
        return NULL;
    }
    /* Attachable devices wait for their attach before a pod binds (KEP-5007). */
    struct binding_names names;
    binding_names_make(driver, &names);
    if (d->attach != FAKEHW_ATTACH_NONE && binding_device_add(dev, &names) < 0) {
        json_decref(dev);
        error_set(err, "device %s: out of memory", d->name);
        return NULL;
    }
    struct device_health h;
    device_health_classify(d, tree_up, health, &h);
    if (device_health_tainted(&h)) {
        json_t *taints = device_health_taints_json(driver, &h, effect);
        if (taints == NULL || json_object_set_new(dev, "taints", taints) < 0) {
            json_decref(dev);
            error_set(err, "device %s: out of memory", d->name);
            return NULL;
        }
    }
    return dev;
}

static int by_index_then_name(const void *a, const void *b)
{
    const struct fakehw_device *x = *(const struct fakehw_device *const *)a;
    const struct fakehw_device *y = *(const struct fakehw_device *const *)b;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int reject(json_t *rejected, const char *device, const char *why)
{
    return json_array_append_new(rejected, json_pack("{s:s, s:s}", "device", device, "error", why));
}

/* A device's JSON with what the partition plan adds (input device i). */
static json_t *planned_device_json(const struct slice_build_input *in,
                                   const struct partition_plan *plan, const struct fakehw_device *d,
                                   struct error *err)
{
    const struct health_policy health = {in->personality, in->xids};
    json_t *dev = slice_device_json(d, in->driver, in->tree_up, in->effect, &health, err);
    if (dev != NULL && (partitions_decorate(plan, d, (size_t)(d - in->devs), dev, err) < 0 ||
                        shares_decorate(d, dev, err) < 0)) {
        json_decref(dev);
        return NULL;
    }
    return dev;
}

/* key is "devices" or "sharedCounters". */
static json_t *slice_json(const struct slice_build_input *in, size_t index, size_t n_slices,
                          const char *key, json_t *items)
{
    char gen_name[SLICE_GENERATE_NAME_BUF];
    slice_generate_name(index, n_slices, in->driver, in->node, gen_name, sizeof(gen_name));
    return json_pack("{s:s, s:s, s:{s:s, s:[{s:s, s:s, s:s, s:s, s:b}]},"
                     " s:{s:s, s:s, s:{s:s, s:I, s:I}, s:o}}",
                     "apiVersion", "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata",
                     "generateName", gen_name, "ownerReferences", "apiVersion", "v1", "kind",
                     "Node", "name", in->node, "uid", in->node_uid, "controller", 1, "spec",
                     "driver", in->driver, "nodeName", in->node, "pool", "name", in->node,
                     "generation", (json_int_t)in->generation, "resourceSliceCount",
                     (json_int_t)n_slices, key, items);
}

static int check_input(const struct slice_build_input *in, struct error *err)
{
    if (!dns_subdomain_valid(in->driver) || strlen(in->driver) > 63)
        return error_set(err, "driver name \"%s\" is not a DNS subdomain of at most 63 characters",
                         in->driver ? in->driver : "");
    if (!dns_subdomain_valid(in->node))
        return error_set(err, "node name \"%s\" is not a DNS subdomain", in->node ? in->node : "");
    if (in->node_uid == NULL || in->node_uid[0] == '\0')
        return error_set(err, "node %s: no uid for the owner reference", in->node);
    return 0;
}

static int layout_oom(const struct slice_build_input *in, struct slice_layout *out,
                      struct error *err)
{
    slice_layout_free(out);
    return error_set(err, "out of memory building the ResourceSlices of node %s", in->node);
}

/* Device d's place in the layout: published (appended to out->order),
 * rejected (with the reason), removed (unhealthy, by the policy) or hidden
 * (a partition not published).  -1 only when out of memory. */
static int place_device(const struct slice_build_input *in, struct slice_layout *out, json_t *names,
                        const struct fakehw_device *d, bool *any_taint)
{
    const struct partition_info *pi = &out->plan.info[d - in->devs];
    if (pi->role == PARTITION_HIDDEN)
        return 0;
    const struct health_policy health = {in->personality, in->xids};
    struct device_health h;
    device_health_classify(d, in->tree_up, &health, &h);
    if (!h.healthy && in->remove_unhealthy) {
        out->removed++;
        return 0;
    }
    if (json_object_get(names, d->name) != NULL)
        return reject(out->rejected, d->name, "another device of the pool has the same name");
    /* The JSON only serves the check here; slice_layout_slice builds it
     * again, one slice at a time. */
    struct error derr;
    json_t *dev = planned_device_json(in, &out->plan, d, &derr);
    int bad = dev == NULL || api_device_validate(dev, &derr) < 0;
    json_decref(dev);
    if (bad)
        return reject(out->rejected, d->name, derr.msg);
    if (json_object_set_new(names, d->name, json_true()) < 0)
        return -1;
    out->order[out->published++] = d;
    *any_taint = *any_taint || device_health_tainted(&h);
    out->tainted += !h.healthy; /* unhealthy: not an ignored XID's None taint */
    out->counted += pi->role == PARTITION_COUNTED;
    return 0;
}

/* Virtual GPUs last, in index order (scratch: room for every published
 * device), then the slice counts. */
static void order_and_count(struct slice_layout *out, const struct fakehw_device **scratch,
                            bool any_taint)
{
    out->per_slice = any_taint || out->counted > 0 ? SLICE_MAX_DEVICES_TAINTED : SLICE_MAX_DEVICES;
    out->n_plain = 0;
    for (size_t i = 0; i < out->published; i++)
        if (!out->order[i]->virtual_gpu)
            scratch[out->n_plain++] = out->order[i];
    for (size_t i = 0, k = out->n_plain; i < out->published; i++)
        if (out->order[i]->virtual_gpu)
            scratch[k++] = out->order[i];
    if (out->published > 0)
        memcpy(out->order, scratch, out->published * sizeof(*scratch));
    size_t per = out->per_slice, n_virtual = out->published - out->n_plain;
    out->counter_slices = partitions_counter_slices(&out->plan);
    out->plain_slices = (out->n_plain + per - 1) / per;
    out->n_slices = out->counter_slices + out->plain_slices + (n_virtual + per - 1) / per;
    if (out->n_slices == 0)
        out->n_slices = 1;
}

int slice_layout_make(const struct slice_build_input *in, struct slice_layout *out,
                      struct error *err)
{
    memset(out, 0, sizeof(*out));
    if (check_input(in, err) < 0)
        return -1;
    cleanup_free const struct fakehw_device **sorted = NULL;
    json_auto_t *names = json_object(); /* the set of the published names */
    out->rejected = json_array();
    if (in->n_devs > 0) {
        sorted = malloc(in->n_devs * sizeof(*sorted));
        out->order = malloc(in->n_devs * sizeof(*out->order));
    }
    if (!names || !out->rejected || (in->n_devs > 0 && (!sorted || !out->order)))
        return layout_oom(in, out, err);
    if (partitions_plan(in->devs, in->n_devs, in->partitions, in->personality == PERSONALITY_NVIDIA,
                        &out->plan, err) < 0) {
        slice_layout_free(out);
        return -1;
    }
    for (size_t i = 0; i < in->n_devs; i++)
        sorted[i] = &in->devs[i];
    if (in->n_devs > 1)
        qsort(sorted, in->n_devs, sizeof(*sorted), by_index_then_name);
    bool any_taint = false;
    for (size_t i = 0; i < in->n_devs; i++)
        if (place_device(in, out, names, sorted[i], &any_taint) < 0)
            return layout_oom(in, out, err);
    order_and_count(out, sorted, any_taint);
    return 0;
}

void slice_layout_free(struct slice_layout *l)
{
    free(l->order);
    json_decref(l->rejected);
    partitions_plan_free(&l->plan);
    memset(l, 0, sizeof(*l));
}

static json_t *slice_oom(const struct slice_build_input *in, struct error *err)
{
    error_set(err, "out of memory building the ResourceSlices of node %s", in->node);
    return NULL;
}

/* The devices order[first..end) of the layout, at most per_slice of them;
 * *counted when one is a counted partition. */
static json_t *slice_devices(const struct slice_build_input *in, const struct slice_layout *l,
                             size_t first, size_t end, bool *counted, struct error *err)
{
    json_auto_t *devices = json_array();
    if (devices == NULL)
        return slice_oom(in, err);
    for (size_t k = first; k < end && k < first + l->per_slice; k++) {
        *counted = *counted || l->plan.info[l->order[k] - in->devs].role == PARTITION_COUNTED;
        json_t *dev = planned_device_json(in, &l->plan, l->order[k], err);
        if (dev == NULL)
            return NULL;
        if (json_array_append_new(devices, dev) < 0)
            return slice_oom(in, err);
    }
    return steal_pointer(&devices);
}

json_t *slice_layout_slice(const struct slice_build_input *in, const struct slice_layout *l,
                           size_t index, struct error *err)
{
    if (index < l->counter_slices) {
        json_t *sets = partitions_shared_counters_json(&l->plan, index, err);
        if (sets == NULL)
            return NULL;
        json_t *slice = slice_json(in, index, l->n_slices, "sharedCounters", sets);
        return slice != NULL ? slice : slice_oom(in, err);
    }
    index -= l->counter_slices;
    /* Plain slices cover order[0..n_plain), virtual ones the rest. */
    bool virtual_slice = index >= l->plain_slices && l->published > l->n_plain;
    size_t first = virtual_slice ? l->n_plain + (index - l->plain_slices) * l->per_slice
                                 : index * l->per_slice;
    size_t end = virtual_slice ? l->published : l->n_plain;
    bool counted = false;
    json_t *devices = slice_devices(in, l, first, end, &counted, err);
    if (devices == NULL)
        return NULL;
    json_auto_t *slice = slice_json(in, index + l->counter_slices, l->n_slices, "devices",
                                    devices); /* steals devices */
    if (slice == NULL)
        return slice_oom(in, err);
    json_t *spec = json_object_get(slice, "spec");
    if (virtual_slice && json_object_set_new(spec, "skipNodeOperations", json_pack("[s]", "*")) < 0)
        return slice_oom(in, err);
    if (counted && in->partitions && in->partition_type) {
        char attr[SLICE_GENERATE_NAME_BUF + sizeof(PARTITIONS_TYPE_ATTRIBUTE) + 1];
        snprintf(attr, sizeof(attr), "%s/%s", in->driver, PARTITIONS_TYPE_ATTRIBUTE);
        if (json_object_set_new(spec, "partitionTypeAttribute", json_string(attr)) < 0)
            return slice_oom(in, err);
    }
    return steal_pointer(&slice);
}

int slice_build(const struct slice_build_input *in, struct slice_build_result *out,
                struct error *err)
{
    memset(out, 0, sizeof(*out));
    struct slice_layout l;
    if (slice_layout_make(in, &l, err) < 0)
        return -1;
    out->slices = json_array();
    if (out->slices == NULL) {
        slice_layout_free(&l);
        return error_set(err, "out of memory building the ResourceSlices of node %s", in->node);
    }
    for (size_t s = 0; s < l.n_slices; s++) {
        json_t *slice = slice_layout_slice(in, &l, s, err);
        if (slice == NULL || json_array_append_new(out->slices, slice) < 0) {
            slice_layout_free(&l);
            slice_build_result_free(out);
            return slice ? error_set(err, "out of memory building the ResourceSlices of node %s",
                                     in->node)
                         : -1;
        }
    }
    out->rejected = json_incref(l.rejected);
    out->published = l.published;
    out->tainted = l.tainted;
    out->removed = l.removed;
    slice_layout_free(&l);
    return 0;
}

void slice_build_result_free(struct slice_build_result *r)
{
    json_decref(r->slices);
    json_decref(r->rejected);
    memset(r, 0, sizeof(*r));
}
