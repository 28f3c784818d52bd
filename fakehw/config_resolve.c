// SPDX-License-Identifier: Apache-2.0
/* Resolving a parsed config for one node: section choice, count expansion,
 * profile figures and overrides, computed defaults, uniqueness, flips. */
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "config_spec.h"
#include "name_index.h"
#include "xalloc.h"

/* Default PCI placement: two GPUs behind each PCIe root, sixteen roots per
 * PCI domain, so 32 GPUs per domain and 128 domains for 4096 GPUs.  Root r
 * of a domain is bus 0x07 + 0x10*r; its GPUs are on the next two buses. */
#define GPUS_PER_ROOT    2
#define ROOTS_PER_DOMAIN 16

static int spec_fail(const char *file, const struct spec_pos *pos, struct error *err,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int spec_fail(const char *file, const struct spec_pos *pos, struct error *err,
                     const char *fmt, ...)
{
    if (err == NULL)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    error_setv(err, fmt, ap);
    va_end(ap);
    return error_prefix(err, "%s:%zu:%zu: %s", file, pos->line, pos->column, pos->path);
}

static void default_placement(long index, long total, struct gpu_device *d)
{
    long group = index / GPUS_PER_ROOT, slot = index % GPUS_PER_ROOT;
    long domain = group / ROOTS_PER_DOMAIN, root_bus = 0x07 + 0x10 * (group % ROOTS_PER_DOMAIN);
    long roots = (total + GPUS_PER_ROOT - 1) / GPUS_PER_ROOT;
    snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%04lx:%02lx:00.0", domain, root_bus + 1 + slot);
    snprintf(d->pcie_root, sizeof(d->pcie_root), "pci%04lx:%02lx", domain, root_bus);
    /* First half of the roots on NUMA node 0, second half on node 1. */
    d->numa_node = group * 2 / (roots > 0 ? roots : 1);
}

static const char *first_set(const char *a, const char *b, const char *c, const char *fallback)
{
    if (a[0] != '\0')
        return a;
    if (b[0] != '\0')
        return b;
    if (c[0] != '\0')
        return c;
    return fallback;
}

/* A section resolved: devices plus, per device, the entry it came from. */
struct resolved {
    struct gpu_device *devices;
    const struct device_entry **origin;
    size_t *by_name; /* indices sorted by name, for lookups */
    size_t n;
};

static void resolved_free(struct resolved *r)
{
    free(r->devices);
    free(r->origin);
    free(r->by_name);
    memset(r, 0, sizeof(*r));
}

enum key_field { KEY_NAME, KEY_UUID, KEY_PCI };

struct sort_ctx {
    const struct gpu_device *devices;
    enum key_field field;
};

static const char *key_of(const struct gpu_device *d, enum key_field f)
{
    return f == KEY_NAME ? d->name : f == KEY_UUID ? d->uuid : d->pci_bus_id;
}

static int compare_key(const void *a, const void *b, void *ctx)
{
    const struct sort_ctx *c = ctx;
    size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
    int r = strcmp(key_of(&c->devices[ia], c->field), key_of(&c->devices[ib], c->field));
    return r != 0 ? r : (ia > ib) - (ia < ib);
}

/* Sorts idx by the field; two devices with the same value are an error at
 * the later one. */
static int check_unique(const char *file, const struct resolved *r, size_t *idx, enum key_field f,
                        struct error *err)
{
    static const char *const what[] = {"device name", "uuid", "pciBusID"};
    struct sort_ctx c = {r->devices, f};
    for (size_t i = 0; i < r->n; i++)
        idx[i] = i;
    qsort_r(idx, r->n, sizeof(*idx), compare_key, &c);
    for (size_t i = 1; i < r->n; i++) {
        const struct gpu_device *a = &r->devices[idx[i - 1]], *b = &r->devices[idx[i]];
        if (strcmp(key_of(a, f), key_of(b, f)) != 0)
            continue;
        if (f == KEY_PCI && (a->parent[0] != '\0' || b->parent[0] != '\0'))
            continue; /* a MIG partition sits on its parent's PCI function */
        const struct device_entry *ea = r->origin[idx[i - 1]], *eb = r->origin[idx[i]];
        const struct spec_pos *pb = f == KEY_NAME && eb->name[0]        ? &eb->name_pos
                                    : f == KEY_UUID && eb->uuid[0]      ? &eb->uuid_pos
                                    : f == KEY_PCI && eb->pci_bus_id[0] ? &eb->pci_pos
                                                                        : &eb->pos;
        return spec_fail(file, pb, err,
                         "duplicate %s \"%s\": device %ld from %s (line %zu) has it too", what[f],
                         key_of(b, f), a->index, ea->pos.path, ea->pos.line);
    }
    return 0;
}

/* Device idx of total: from its entry e, the entry's profile, section s and
 * the top level of spec, in that order of precedence. */
static void fill_device(const struct config_spec *spec, const struct section *s,
                        const struct device_entry *e, const char *seed, size_t idx, size_t total,
                        struct gpu_device *d)
{
    const struct gpu_profile *p = e->profile;
    d->index = (long)idx;
    d->minor = (long)idx;
    if (e->name[0] != '\0')
        snprintf(d->name, sizeof(d->name), "%s", e->name);
    else
        snprintf(d->name, sizeof(d->name), "gpu-%zu", idx);
    if (e->uuid[0] != '\0')
        snprintf(d->uuid, sizeof(d->uuid), "%s", e->uuid);
    else
        gpu_uuid_derive(seed, d->name, d->uuid);
    snprintf(d->product_name, sizeof(d->product_name), "%s",
             e->product_name[0] ? e->product_name : p->product_name);
    snprintf(d->architecture, sizeof(d->architecture), "%s",
             e->architecture[0] ? e->architecture : p->architecture);
    snprintf(d->brand, sizeof(d->brand), "%s",
             e->brand[0] ? e->brand
             : p != NULL ? p->brand
                         : "NVIDIA");
    d->memory_bytes = e->has_memory ? e->memory_bytes : p->memory_mib * 1024 * 1024;
    snprintf(d->compute_capability, sizeof(d->compute_capability), "%s",
             e->compute_capability[0] ? e->compute_capability : p->compute_capability);
    snprintf(d->driver_version, sizeof(d->driver_version), "%s",
             first_set(e->driver_version, s->driver_version, spec->driver_version,
                       GPU_DEFAULT_DRIVER_VERSION));
    snprintf(d->cuda_driver_version, sizeof(d->cuda_driver_version), "%s",
             first_set(e->cuda_driver_version, s->cuda_driver_version, spec->cuda_driver_version,
                       GPU_DEFAULT_CUDA_DRIVER_VERSION));
    default_placement(d->index, (long)total, d);
    if (e->pci_bus_id[0] != '\0')
        snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%s", e->pci_bus_id);
    if (e->pcie_root[0] != '\0')
        snprintf(d->pcie_root, sizeof(d->pcie_root), "%s", e->pcie_root);
    if (e->has_numa)
        d->numa_node = e->numa_node;
    d->healthy = e->has_health ? e->healthy : true;
    snprintf(d->health_reason, sizeof(d->health_reason), "%s",
             e->has_reason ? e->health_reason : "");
    d->attach = e->attach;
    d->virtual_gpu = e->virtual_gpu;
    d->vfio = e->vfio;
    d->iommu_group = d->index;
    if (p != NULL) {
        snprintf(d->pci_device_id, sizeof(d->pci_device_id), "%s", p->pci_device_id);
        snprintf(d->pci_device_name, sizeof(d->pci_device_name), "%s", p->pci_device_name);
    }
    if (e->has_sharing) {
        d->share_default = e->share_default;
        d->share_min = e->share_min;
        d->share_step = e->share_step;
    }
}

/* Names, UUIDs and PCI functions unique; by_name left sorted by name for
 * lookups.  Names first: a duplicate name also duplicates the derived UUID. */
static int check_keys(const struct config_spec *spec, struct resolved *r, struct error *err)
{
    size_t total = r->n;
    r->by_name = xrealloc(r->by_name, (total ? total : 1) * sizeof(*r->by_name));
    cleanup_free size_t *scratch = xcalloc(total ? total : 1, sizeof(*scratch));
    if (check_unique(spec->file, r, r->by_name, KEY_NAME, err) < 0 ||
        check_unique(spec->file, r, scratch, KEY_UUID, err) < 0 ||
        check_unique(spec->file, r, scratch, KEY_PCI, err) < 0)
        return -1;
    return 0;
}

static int resolve_section(const struct config_spec *spec, const struct section *s,
                           const char *node, struct resolved *r, struct error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < s->nentries; i++)
        total += (size_t)s->entries[i].count;
    memset(r, 0, sizeof(*r));
    r->devices = xcalloc(total ? total : 1, sizeof(*r->devices));
    r->origin = xcalloc(total ? total : 1, sizeof(*r->origin));
    r->by_name = xcalloc(total ? total : 1, sizeof(*r->by_name));
    r->n = total;
    const char *seed = s->has_seed ? s->seed : spec->has_seed ? spec->seed : node;
    size_t idx = 0;
    for (size_t i = 0; i < s->nentries; i++) {
        const struct device_entry *e = &s->entries[i];
        for (long c = 0; c < e->count; c++, idx++) {
            r->origin[idx] = e;
            fill_device(spec, s, e, seed, idx, total, &r->devices[idx]);
        }
    }
    /* MIG partitions come after the GPUs (config_mig.c). */
    if (config_mig_expand(spec->file, s->label, &r->devices, &r->origin, &r->n, err) < 0 ||
        check_keys(spec, r, err) < 0) {
        resolved_free(r);
        return -1;
    }
    return 0;
}

static const char *device_name(const void *items, size_t i)
{
    return ((const struct gpu_device *)items)[i].name;
}

static bool has_device(const struct resolved *r, const char *name)
{
    return name_index_find(r->by_name, r->n, device_name, r->devices, name) >= 0;
}

static bool flip_applies(const struct flip *f, const struct resolved *r)
{
    return !strcmp(f->device, FLIP_ALL_DEVICES) || has_device(r, f->device);
}

/* The top-level flips that name a device (not "all"), sorted by that name,
 * so that matching them with the sections costs one lookup per device of
 * each section (O(devices log flips)), not one per flip and section. */
struct top_index {
    const struct config_spec *spec;
    size_t *idx; /* flip indices, by device name, then index */
    bool *found; /* parallel to idx; set on the first of a run of equal names */
    size_t n;
};

static size_t flip_lookups; /* for config_resolve_flip_lookups */

size_t config_resolve_flip_lookups(void)
{
    return flip_lookups;
}

static const char *top_name(const struct top_index *t, size_t pos)
{
    return t->spec->flips[t->idx[pos]].flip.device;
}

static int compare_top(const void *a, const void *b, void *ctx)
{
    const struct config_spec *spec = ctx;
    size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
    int r = strcmp(spec->flips[ia].flip.device, spec->flips[ib].flip.device);
    return r != 0 ? r : (ia > ib) - (ia < ib);
}

static int top_index_build(const struct config_spec *spec, struct top_index *t)
{
    memset(t, 0, sizeof(*t));
    t->spec = spec;
    t->idx = calloc(spec->nflips ? spec->nflips : 1, sizeof(*t->idx));
    t->found = calloc(spec->nflips + 1, sizeof(*t->found));
    if (t->idx == NULL || t->found == NULL)
        return -1;
    for (size_t i = 0; i < spec->nflips; i++)
        if (strcmp(spec->flips[i].flip.device, FLIP_ALL_DEVICES) != 0)
            t->idx[t->n++] = i;
    qsort_r(t->idx, t->n, sizeof(*t->idx), compare_top, (void *)spec);
    return 0;
}

static void top_index_free(struct top_index *t)
{
    free(t->idx);
    free(t->found);
}

/* Position of the first flip naming device, or t->n when none does. */
static size_t top_find(const struct top_index *t, const char *device)
{
    size_t lo = 0, hi = t->n;
    flip_lookups++;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(top_name(t, mid), device) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n && !strcmp(top_name(t, lo), device) ? lo : t->n;
}

/* Resolves section s, checks its flips, marks the top-level flips naming
 * one of its devices; keeps the result in *keep when keep is not NULL. */
static int check_section(const struct config_spec *spec, const struct section *s, const char *node,
                         struct top_index *top, struct resolved *keep, struct error *err)
{
    struct resolved r;
    if (resolve_section(spec, s, node, &r, err) < 0)
        return -1;
    for (size_t i = 0; i < s->nflips; i++) {
        const struct flip_entry *f = &s->flips[i];
        if (!flip_applies(&f->flip, &r)) {
            spec_fail(spec->file, &f->device_pos, err, "no device \"%s\" in %s (%zu devices)",
                      f->flip.device, s->label, r.n);
            resolved_free(&r);
            return -1;
        }
    }
    for (size_t i = 0; top->n > 0 && i < r.n; i++) {
        size_t pos = top_find(top, r.devices[i].name);
        if (pos < top->n)
            top->found[pos] = true;
    }
    if (keep != NULL)
        *keep = r;
    else
        resolved_free(&r);
    return 0;
}

/* For finding node sections with the same name: sorted by name, then index. */
static int compare_sections(const void *a, const void *b, void *ctx)
{
    const struct config_spec *spec = ctx;
    size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
    int r = strcmp(spec->nodes[ia].pattern, spec->nodes[ib].pattern);
    return r != 0 ? r : (ia > ib) - (ia < ib);
}

/* Two node sections with the same name (or glob): the later one could never
 * be chosen.  Reports the pair whose second section comes first in the file. */
static int check_sections_unique(const struct config_spec *spec, struct error *err)
{
    if (spec->nnodes < 2)
        return 0;
    size_t *idx = calloc(spec->nnodes, sizeof(*idx));
    if (idx == NULL)
        return error_set(err, "%s: out of memory", spec->file);
    for (size_t i = 0; i < spec->nnodes; i++)
        idx[i] = i;
    qsort_r(idx, spec->nnodes, sizeof(*idx), compare_sections, (void *)spec);
    size_t first = 0, second = SIZE_MAX;
    for (size_t i = 1, group = 0; i < spec->nnodes; i++) {
        if (strcmp(spec->nodes[idx[group]].pattern, spec->nodes[idx[i]].pattern) != 0) {
            group = i;
            continue;
        }
        if (i == group + 1 && idx[i] < second) {
            first = idx[group];
            second = idx[i];
        }
    }
    free(idx);
    if (second == SIZE_MAX)
        return 0;
    const struct section *a = &spec->nodes[first], *b = &spec->nodes[second];
    return spec_fail(spec->file, &b->name_pos, err,
                     "\"%s\" is also the name of nodes[%zu] (line %zu); each node section needs "
                     "its own name or glob",
                     b->pattern, first, a->name_pos.line);
}

/* Checks every section, resolving the chosen one into mine (a mistake for
 * another node fails here too), and that each top-level flip names a device
 * of some section. */
static int check_spec(const struct config_spec *spec, const struct section *chosen,
                      const char *node, struct top_index *top, struct resolved *mine,
                      struct error *err)
{
    if (check_sections_unique(spec, err) < 0)
        return -1;
    if (spec->has_defaults && check_section(spec, &spec->defaults, node, top,
                                            chosen == &spec->defaults ? mine : NULL, err) < 0)
        return -1;
    for (size_t i = 0; i < spec->nnodes; i++) {
        const struct section *s = &spec->nodes[i];
        if (check_section(spec, s, s == chosen ? node : s->pattern, top, s == chosen ? mine : NULL,
                          err) < 0)
            return -1;
    }
    /* In file order, so the first flip without a device is the one named. */
    for (size_t i = 0; i < spec->nflips; i++) {
        const struct flip_entry *f = &spec->flips[i];
        if (strcmp(f->flip.device, FLIP_ALL_DEVICES) != 0 &&
            !top->found[top_find(top, f->flip.device)])
            return spec_fail(spec->file, &f->device_pos, err,
                             "no device \"%s\" in any section of the config", f->flip.device);
    }
    return 0;
}

/* The node's flips: the top-level ones that apply to its devices, then its
 * section's own. */
static struct flip *node_flips(const struct config_spec *spec, const struct section *chosen,
                               const struct resolved *mine, size_t *n)
{
    size_t cap = spec->nflips + (chosen ? chosen->nflips : 0);
    struct flip *flips = xcalloc(cap ? cap : 1, sizeof(*flips));
    *n = 0;
    for (size_t i = 0; i < spec->nflips; i++)
        if (flip_applies(&spec->flips[i].flip, mine))
            flips[(*n)++] = spec->flips[i].flip;
    for (size_t i = 0; chosen != NULL && i < chosen->nflips; i++)
        flips[(*n)++] = chosen->flips[i].flip;
    return flips;
}

int config_resolve(const struct config_spec *spec, const char *node, struct config *out,
                   struct error *err)
{
    const struct section *chosen = NULL;
    flip_lookups = 0;
    for (size_t i = 0; i < spec->nnodes && chosen == NULL; i++)
        if (fnmatch(spec->nodes[i].pattern, node, 0) == 0)
            chosen = &spec->nodes[i];
    if (chosen == NULL && spec->has_defaults)
        chosen = &spec->defaults;

    __attribute__((cleanup(resolved_free))) struct resolved mine = {0};
    __attribute__((cleanup(top_index_free))) struct top_index top = {0};
    if (top_index_build(spec, &top) < 0)
        return error_set(err, "%s: out of memory", spec->file);
    if (check_spec(spec, chosen, node, &top, &mine, err) < 0)
        return -1;

    memset(out, 0, sizeof(*out));
    out->flips = node_flips(spec, chosen, &mine, &out->nflips);
    out->matched = chosen != NULL;
    if (chosen != NULL)
        snprintf(out->section, sizeof(out->section), "%s", chosen->label);
    else
        snprintf(out->section, sizeof(out->section),
                 "none (no nodes entry matches and there is no defaults section)");
    snprintf(out->seed, sizeof(out->seed), "%s",
             chosen && chosen->has_seed ? chosen->seed
             : spec->has_seed           ? spec->seed
                                        : node);
    out->devices = steal_pointer(&mine.devices);
    out->ndevices = mine.n;
    return 0;
}
