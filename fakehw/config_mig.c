// SPDX-License-Identifier: Apache-2.0
/* The `mig` section of a device entry (docs/fakehw.md):
 *
 *   mig:
 *     mode: static            # off | dynamic | static
 *     instances:              # static only
 *       - profile: 3g.40gb
 *         placement: 4        # optional: first free valid start
 *
 * and the partitions a GPU offers once resolved. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_spec.h"
#include "dns_names.h"
#include "mig_profiles.h"
#include "text_list.h"
#include "xalloc.h"

static const char *const mig_keys[] = {"mode", "instances", NULL};
static const char *const instance_keys[] = {"profile", "placement", NULL};

const char *gpu_mig_mode_name(enum gpu_mig_mode m)
{
    switch (m) {
    case GPU_MIG_OFF:
        return FAKEHW_MIG_OFF;
    case GPU_MIG_DYNAMIC:
        return FAKEHW_MIG_DYNAMIC;
    case GPU_MIG_STATIC:
        return FAKEHW_MIG_STATIC;
    case GPU_MIG_NONE:
        break;
    }
    return "";
}

static void pos_of(struct spec_pos *pos, const yaml_node_t *node, const char *path)
{
    pos->line = yline(node);
    pos->column = ycolumn(node);
    snprintf(pos->path, sizeof(pos->path), "%s", path);
}

static int instance_key(const struct yctx *y, const char *key, yaml_node_t *v, const char *path,
                        void *ctx)
{
    struct mig_instance_spec *in = ctx;
    if (!strcmp(key, "profile"))
        return ystring(y, v, path, in->profile, sizeof(in->profile));
    return ylong(y, v, path, 0, MIG_MEMORY_SLICES - 1, "placement", &in->start);
}

static int mig_key(const struct yctx *y, const char *key, yaml_node_t *v, const char *path,
                   void *ctx)
{
    struct mig_spec *m = ctx;
    if (!strcmp(key, "mode")) {
        const char *t;
        if (ytext(y, v, path, &t) < 0)
            return -1;
        if (!strcmp(t, FAKEHW_MIG_OFF))
            m->mode = GPU_MIG_OFF;
        else if (!strcmp(t, FAKEHW_MIG_DYNAMIC))
            m->mode = GPU_MIG_DYNAMIC;
        else if (!strcmp(t, FAKEHW_MIG_STATIC))
            m->mode = GPU_MIG_STATIC;
        else
            return yfail(y, v, path, "\"%.64s\" is not a MIG mode (off, dynamic or static)", t);
        return 0;
    }
    size_t n;
    if (yexpect_list(y, v, path, &n) < 0)
        return -1;
    if (n > MIG_COMPUTE_SLICES)
        return yfail(y, v, path, "%zu instances, more than the %d a GPU can hold", n,
                     MIG_COMPUTE_SLICES);
    if (n == 0)
        return yfail(y, v, path,
                     "an empty list: mode static needs at least one instance (mode off for "
                     "none)");
    m->instances = xcalloc(n ? n : 1, sizeof(*m->instances));
    for (size_t i = 0; i < n; i++) {
        char ipath[YPATH_MAX];
        yaml_node_t *item = ylist_item(y, v, path, i, ipath);
        struct mig_instance_spec *in = &m->instances[i];
        pos_of(&in->pos, item, ipath);
        in->start = -1;
        m->ninstances = i + 1;
        if (ymap_each(y, item, ipath, instance_keys, instance_key, in) < 0)
            return -1;
        if (in->profile[0] == '\0')
            return yfail(y, item, ipath, "an instance needs a profile");
    }
    return 0;
}

int config_mig_parse(const struct yctx *y, yaml_node_t *node, const char *path,
                     struct device_entry *e)
{
    struct mig_spec *m = &e->mig;
    m->set = true;
    m->mode = GPU_MIG_OFF;
    pos_of(&m->pos, node, path);
    if (ymap_each(y, node, path, mig_keys, mig_key, m) < 0)
        return -1;
    bool has_instances = m->instances != NULL;
    if (m->mode == GPU_MIG_STATIC && !has_instances)
        return yfail(y, node, path, "mode static needs an instances list");
    if (m->mode != GPU_MIG_STATIC && has_instances)
        return yfail(y, node, path, "instances are for mode static (mode is %s)",
                     gpu_mig_mode_name(m->mode));
    return 0;
}

/* Memory slices taken by the instances before i, as a bit mask. */
static unsigned taken_before(const struct mig_spec *m, const struct mig_geometry *g, size_t i)
{
    unsigned mask = 0;
    for (size_t j = 0; j < i; j++) {
        const struct mig_profile *p = mig_profile_find(g, m->instances[j].profile);
        for (long s = m->instances[j].start; s < m->instances[j].start + p->memory_slices; s++)
            mask |= 1u << s;
    }
    return mask;
}

static unsigned span(const struct mig_profile *p, long start)
{
    return ((1u << p->memory_slices) - 1) << start;
}

/* The memory each memory slice gets, cut to whole MiB as the driver
 * reports it: a GPU with less than this per slice would have empty
 * partitions. */
#define MIG_MIN_MEMORY ((uint64_t)MIG_MEMORY_SLICES << 20)

size_t config_mig_partitions(const struct device_entry *e)
{
    if (!e->mig.set || e->mig.mode == GPU_MIG_OFF)
        return 0;
    if (e->mig.mode == GPU_MIG_STATIC)
        return e->mig.ninstances;
    const struct mig_geometry *g = e->profile ? mig_geometry_find(e->profile->name) : NULL;
    return g ? mig_placement_count(g) : 0;
}

int config_mig_check(const struct yctx *y, struct device_entry *e, uint64_t memory)
{
    struct mig_spec *m = &e->mig;
    if (!m->set || m->mode == GPU_MIG_OFF)
        return 0;
    const struct mig_geometry *g = e->profile ? mig_geometry_find(e->profile->name) : NULL;
    if (g == NULL)
        return error_set(y->err,
                         "%s:%zu:%zu: %s: MIG needs a profile of a MIG-capable model "
                         "(A100, H100, H200, B200, GB200)%s%s",
                         y->file, m->pos.line, m->pos.column, m->pos.path,
                         e->profile ? "; not " : "", e->profile ? e->profile->name : "");
    if (memory < MIG_MIN_MEMORY)
        return error_set(y->err,
                         "%s:%zu:%zu: %s: MIG needs at least %llu bytes of memory (1Mi for each "
                         "of the %d memory slices); this GPU has %llu, which leaves its smallest "
                         "partitions empty",
                         y->file, m->pos.line, m->pos.column, m->pos.path,
                         (unsigned long long)MIG_MIN_MEMORY, MIG_MEMORY_SLICES,
                         (unsigned long long)memory);
    for (size_t i = 0; i < m->ninstances; i++) {
        struct mig_instance_spec *in = &m->instances[i];
        const struct mig_profile *p = mig_profile_find(g, in->profile);
        if (p == NULL) {
            char known[256];
            mig_profile_names(g, known, sizeof(known));
            return error_set(y->err,
                             "%s:%zu:%zu: %s.profile: %s has no MIG profile \"%s\" "
                             "(known: %s)",
                             y->file, in->pos.line, in->pos.column, in->pos.path, g->model,
                             in->profile, known);
        }
        snprintf(in->profile, sizeof(in->profile), "%s", p->name); /* NVIDIA's spelling */
        unsigned taken = taken_before(m, g, i);
        if (in->start < 0) {
            for (int k = 0; k < p->nplacements && in->start < 0; k++)
                if ((span(p, p->placements[k]) & taken) == 0)
                    in->start = p->placements[k];
            if (in->start < 0)
                return error_set(y->err,
                                 "%s:%zu:%zu: %s: no free placement left for %s (the instances "
                                 "before it take its memory slices)",
                                 y->file, in->pos.line, in->pos.column, in->pos.path, p->name);
            continue;
        }
        if (!mig_placement_valid(p, (int)in->start)) {
            char valid[64];
            struct text_list l = text_list_start(valid, sizeof(valid));
            for (int k = 0; k < p->nplacements; k++)
                text_list_add(&l, "%d", p->placements[k]);
            return error_set(
                y->err, "%s:%zu:%zu: %s.placement: %ld is not a placement of %s (valid: %s)",
                y->file, in->pos.line, in->pos.column, in->pos.path, in->start, p->name, valid);
        }
        if (span(p, in->start) & taken)
            return error_set(y->err,
                             "%s:%zu:%zu: %s: %s at placement %ld overlaps the memory slices of "
                             "an instance before it",
                             y->file, in->pos.line, in->pos.column, in->pos.path, p->name,
                             in->start);
    }
    return 0;
}

void mig_spec_free(struct mig_spec *m)
{
    free(m->instances);
    m->instances = NULL;
    m->ninstances = 0;
}

/* "gpu-0-mig-3g40gb-4": the profile without dots and pluses. */
static int partition_name(const char *file, const char *label, const struct gpu_device *gpu,
                          const char *profile, long start, char *out, size_t size,
                          struct error *err)
{
    char compact[FAKEHW_NAME_MAX];
    size_t k = 0;
    for (const char *p = profile; *p && k + 1 < sizeof(compact); p++)
        if (*p != '.' && *p != '+')
            compact[k++] = *p;
    compact[k] = '\0';
    int n = snprintf(out, size, "%s-mig-%s-%ld", gpu->name, compact, start);
    if (n < 0 || (size_t)n >= size || !dns_label_valid(out))
        return error_set(err,
                         "%s: %s: device %s: the name of its MIG partition %s at %ld would be "
                         "longer than 63 characters (shorten the device name)",
                         file, label, gpu->name, profile, start);
    return 0;
}

static void fill_partition(const struct gpu_device *gpu, const struct mig_profile *p, long start,
                           long index, const char *name, struct gpu_device *d)
{
    *d = *gpu;
    snprintf(d->name, sizeof(d->name), "%s", name);
    d->index = index;
    d->mig_mode = GPU_MIG_NONE;
    d->parent_index = gpu->index;
    snprintf(d->parent, sizeof(d->parent), "%s", gpu->name);
    snprintf(d->mig_profile, sizeof(d->mig_profile), "%s", p->name);
    d->mig_start = start;
    d->mig_size = p->memory_slices;
    d->mig_profile_id = p->id;
    d->mig_engines = p->engines;
    d->memory_bytes = mig_instance_memory(p, gpu->memory_bytes);
    d->healthy = true;
    d->health_reason[0] = '\0';
    d->share_default = d->share_min = d->share_step = 0;
    /* MIG-<uuid>: derived from the parent's UUID and the placement. */
    gpu_uuid_derive(gpu->uuid, d->name, d->uuid);
    memcpy(d->uuid, "MIG", 3);
}

int config_mig_expand(const char *file, const char *label, struct gpu_device **devs,
                      const struct device_entry ***origin, size_t *n, struct error *err)
{
    size_t ngpus = *n, extra = 0;
    for (size_t i = 0; i < ngpus; i++) {
        const struct device_entry *e = (*origin)[i];
        (*devs)[i].mig_mode = e->mig.set ? e->mig.mode : GPU_MIG_OFF;
        (*devs)[i].parent_index = -1;
        if (!e->mig.set || e->mig.mode == GPU_MIG_OFF)
            continue;
        const struct mig_geometry *g = mig_geometry_find(e->profile->name);
        extra += e->mig.mode == GPU_MIG_DYNAMIC ? mig_placement_count(g) : e->mig.ninstances;
    }
    if (extra == 0)
        return 0;
    /* The parser counted them already; this keeps the allocation bounded
     * whatever calls it. */
    if (ngpus + extra > FAKEHW_TREE_MAX_DEVICES)
        return error_set(err,
                         "%s: %s: %zu GPUs and %zu MIG partitions make %zu devices, more than %d",
                         file, label, ngpus, extra, ngpus + extra, FAKEHW_TREE_MAX_DEVICES);
    struct gpu_device *nd = realloc(*devs, (ngpus + extra) * sizeof(*nd));
    if (nd == NULL)
        return error_set(err, "%s: out of memory for %zu MIG partitions", file, extra);
    *devs = nd;
    const struct device_entry **no = realloc(*origin, (ngpus + extra) * sizeof(*no));
    if (no == NULL)
        return error_set(err, "%s: out of memory for %zu MIG partitions", file, extra);
    *origin = no;
    size_t at = ngpus;
    for (size_t i = 0; i < ngpus; i++) {
        const struct device_entry *e = no[i];
        if (!e->mig.set || e->mig.mode == GPU_MIG_OFF)
            continue;
        const struct mig_geometry *g = mig_geometry_find(e->profile->name);
        if (e->mig.mode == GPU_MIG_DYNAMIC) {
            for (size_t k = 0; k < g->nprofiles; k++) {
                const struct mig_profile *p = &g->profiles[k];
                for (int s = 0; s < p->nplacements; s++, at++) {
                    char name[FAKEHW_NAME_MAX];
                    no[at] = e;
                    if (partition_name(file, label, &nd[i], p->name, p->placements[s], name,
                                       sizeof(name), err) < 0)
                        return -1;
                    fill_partition(&nd[i], p, p->placements[s], (long)at, name, &nd[at]);
                }
            }
            continue;
        }
        for (size_t k = 0; k < e->mig.ninstances; k++, at++) {
            const struct mig_instance_spec *in = &e->mig.instances[k];
            const struct mig_profile *p = mig_profile_find(g, in->profile);
            no[at] = e;
            char name[FAKEHW_NAME_MAX];
            if (partition_name(file, label, &nd[i], p->name, in->start, name, sizeof(name), err) <
                0)
                return -1;
            fill_partition(&nd[i], p, in->start, (long)at, name, &nd[at]);
        }
    }
    *n = at;
    return 0;
}
