// SPDX-License-Identifier: Apache-2.0
/* The `sharing` section of a device entry (docs/fakehw.md): the GPU may be
 * shared by several claims, each taking part of its memory (Kubernetes
 * consumable capacity, KEP-5075):
 *
 *   sharing:
 *     memory: {default: 10Gi, min: 1Gi, step: 1Gi}
 *
 * default is what a claim gets when it asks for no memory; a request is
 * rounded up to min + n*step and may take at most the GPU's memory. */
#include <stdio.h>
#include <string.h>

#include "config_spec.h"
#include "quantity.h"

static const char *const sharing_keys[] = {"memory", NULL};
static const char *const memory_keys[] = {"default", "min", "step", NULL};

static int bytes_value(const struct yctx *y, yaml_node_t *v, const char *path, uint64_t *out)
{
    const char *text;
    struct error qerr;
    if (ytext(y, v, path, &text) < 0)
        return -1;
    if (quantity_parse_bytes(text, out, &qerr) < 0)
        return yfail(y, v, path, "%s", qerr.msg);
    if (*out == 0)
        return yfail(y, v, path, "must be more than 0");
    return 0;
}

static int memory_key(const struct yctx *y, const char *key, yaml_node_t *v, const char *path,
                      void *ctx)
{
    struct device_entry *e = ctx;
    return bytes_value(y, v, path,
                       !strcmp(key, "default") ? &e->share_default
                       : !strcmp(key, "min")   ? &e->share_min
                                               : &e->share_step);
}

static int sharing_key(const struct yctx *y, const char *key, yaml_node_t *v, const char *path,
                       void *ctx)
{
    (void)key; /* memory: the only key */
    struct device_entry *e = ctx;
    if (ymap_each(y, v, path, memory_keys, memory_key, e) < 0)
        return -1;
    if (e->share_default == 0)
        return yfail(y, v, path, "default is required (what a claim gets that asks for no memory)");
    if (e->share_min == 0)
        e->share_min = e->share_default < (1ULL << 20) ? e->share_default : (1ULL << 20);
    if (e->share_step == 0)
        e->share_step = 1ULL << 20;
    if (e->share_default < e->share_min)
        return yfail(y, v, path, "default is less than min");
    if ((e->share_default - e->share_min) % e->share_step != 0)
        return yfail(y, v, path, "default is not min plus a multiple of step");
    return 0;
}

int config_sharing_parse(const struct yctx *y, yaml_node_t *node, const char *path,
                         struct device_entry *e)
{
    e->has_sharing = true;
    e->sharing_pos.line = yline(node);
    e->sharing_pos.column = ycolumn(node);
    snprintf(e->sharing_pos.path, sizeof(e->sharing_pos.path), "%s", path);
    if (ymap_each(y, node, path, sharing_keys, sharing_key, e) < 0)
        return -1;
    if (e->share_default == 0)
        return yfail(y, node, path, "needs memory: {default: ...}");
    return 0;
}

int config_sharing_check(const struct yctx *y, const struct device_entry *e, uint64_t memory)
{
    if (!e->has_sharing)
        return 0;
    const struct spec_pos *p = &e->sharing_pos;
    if (e->mig.set && e->mig.mode != GPU_MIG_OFF)
        return error_set(y->err,
                         "%s:%zu:%zu: %s: a GPU is either shared by memory or cut into MIG "
                         "partitions, not both",
                         y->file, p->line, p->column, p->path);
    if (e->share_min + e->share_step > memory)
        return error_set(y->err,
                         "%s:%zu:%zu: %s.memory: min plus one step is more than the GPU's memory "
                         "(%llu bytes)",
                         y->file, p->line, p->column, p->path, (unsigned long long)memory);
    if (e->share_default > memory)
        return error_set(y->err,
                         "%s:%zu:%zu: %s.memory.default: more than the GPU's memory (%llu bytes)",
                         y->file, p->line, p->column, p->path, (unsigned long long)memory);
    return 0;
}
