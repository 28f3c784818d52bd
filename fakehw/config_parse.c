// SPDX-License-Identifier: Apache-2.0
/* The config schema: YAML document -> struct config_spec, checking every key
 * and value on its own.  Cross-checks (duplicates, flips naming devices) are
 * config_resolve.c's. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "config_spec.h"
#include "dns_names.h"
#include "duration.h"
#include "fakehw_attach.h"
#include "quantity.h"
#include "text_list.h"
#include "xalloc.h"

/* A GPU with more memory than this is a typo ("80Pi"), not a GPU. */
#define MAX_MEMORY_BYTES (1ULL << 50) /* 1Pi */

/* Most entries a `nodes` list may have; a config for more nodes than this
 * would use globs. */
#define MAX_NODE_SECTIONS 10000

/* Bounds over all sections together, so that a config cannot make the
 * parser or the checks of every section use unbounded memory or time.  They
 * are counted as the document is walked, so a list used through several
 * YAML aliases counts once per use (config_yaml.c bounds the YAML itself:
 * nesting, anchors, aliases). */
#define MAX_TOTAL_ENTRIES 16384
#define MAX_TOTAL_DEVICES 65536
#define MAX_TOTAL_FLIPS   16384

/* Most flips one list (top level, defaults or a node section) may have. */
#define MAX_LIST_FLIPS 1024

static const char *const top_keys[] = {
    "seed", "driverVersion", "cudaDriverVersion", "defaults", "nodes", "flips", NULL};
static const char *const defaults_keys[] = {"seed",    "driverVersion", "cudaDriverVersion",
                                            "devices", "flips",         NULL};
static const char *const node_keys[] = {
    "name", "seed", "driverVersion", "cudaDriverVersion", "devices", "flips", NULL};
static const char *const device_keys[] = {
    "count",        "name",     "profile",           "productName",   "architecture",
    "brand",        "memory",   "computeCapability", "driverVersion", "cudaDriverVersion",
    "uuid",         "pciBusID", "pcieRoot",          "numaNode",      "health",
    "healthReason", "attach",   "virtual",           "vfio",          "mig",
    "sharing",      NULL};
static const char *const attach_keys[] = {"delay", "failure", NULL};
static const char *const flip_keys[] = {"device", "after", "state", "xid", "for", "reason", NULL};

/* Matches s against a pattern where 'h' is a hex digit, 'd' a decimal
 * digit and anything else itself. */
static bool shape(const char *s, const char *pattern)
{
    for (; *pattern != '\0'; s++, pattern++) {
        if (*pattern == 'h'   ? !isxdigit((unsigned char)*s)
            : *pattern == 'd' ? !isdigit((unsigned char)*s)
                              : *s != *pattern)
            return false;
    }
    return *s == '\0';
}

bool config_valid_pci_bus_id(const char *s)
{
    /* domain:bus:device.function; device is 5 bits, function 3 bits. */
    return shape(s, "hhhh:hh:hh.d") && strtol(s + 8, NULL, 16) < 32 && s[11] <= '7';
}

bool config_valid_pcie_root(const char *s)
{
    return shape(s, "pcihhhh:hh");
}

bool config_valid_version(const char *s)
{
    /* Digit groups separated by single dots, at least two groups. */
    bool dot = false;
    if (!isdigit((unsigned char)s[0]))
        return false;
    for (size_t i = 1; s[i] != '\0'; i++) {
        if (s[i] == '.') {
            if (s[i - 1] == '.' || s[i + 1] == '\0')
                return false;
            dot = true;
        } else if (!isdigit((unsigned char)s[i])) {
            return false;
        }
    }
    return dot;
}

static void lowercase(char *s)
{
    for (; *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

static void set_pos(struct spec_pos *pos, const yaml_node_t *node, const char *path)
{
    pos->line = yline(node);
    pos->column = ycolumn(node);
    snprintf(pos->path, sizeof(pos->path), "%s", path);
}

/* A one-line human text: no control characters. */
static int text_value(const struct yctx *y, const yaml_node_t *node, const char *path, char *buf,
                      size_t size)
{
    if (ystring(y, node, path, buf, size) < 0)
        return -1;
    for (const char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return yfail(y, node, path, "must be one line of text without control characters");
    return 0;
}

static int version_value(const struct yctx *y, const yaml_node_t *node, const char *path, char *buf,
                         size_t size)
{
    if (ystring(y, node, path, buf, size) < 0)
        return -1;
    if (!config_valid_version(buf))
        return yfail(y, node, path, "\"%s\" is not a version (digits and dots, like 580.95.05)",
                     buf);
    return 0;
}

static int health_value(const struct yctx *y, const yaml_node_t *node, const char *path,
                        bool *healthy)
{
    const char *v;
    if (ytext(y, node, path, &v) < 0)
        return -1;
    if (!strcmp(v, FAKEHW_HEALTHY))
        *healthy = true;
    else if (!strcmp(v, FAKEHW_UNHEALTHY))
        *healthy = false;
    else
        return yfail(y, node, path, "\"%.64s\" is not a health state (healthy or unhealthy)", v);
    return 0;
}

static int duration_value(const struct yctx *y, const yaml_node_t *node, const char *path,
                          int64_t *ms)
{
    const char *v;
    struct error derr;
    if (ytext(y, node, path, &v) < 0)
        return -1;
    if (duration_parse_ms(v, ms, &derr) < 0)
        return yfail(y, node, path, "%s", derr.msg);
    return 0;
}

/* ---- devices ---- */

/* `attach: {delay: DURATION, failure: never|next|always}`: an attachable
 * device (fakehw/attach.h). */
static int attach_key(const struct yctx *y, const char *key, yaml_node_t *v, const char *path,
                      void *ctx)
{
    struct gpu_attach *a = ctx;
    if (!strcmp(key, "delay"))
        return duration_value(y, v, path, &a->delay_ms);
    const char *text;
    if (ytext(y, v, path, &text) < 0)
        return -1;
    if (!fakehw_attach_failure_parse(text, &a->failure))
        return yfail(y, v, path, "\"%.64s\" is not an attach failure (never, next or always)",
                     text);
    return 0;
}

/* ---- the keys of a device entry: one parser each ---- */

typedef int device_key_fn(const struct yctx *y, yaml_node_t *v, const char *path,
                          struct device_entry *e);

static int key_count(const struct yctx *y, yaml_node_t *v, const char *path, struct device_entry *e)
{
    return ylong(y, v, path, 0, SPEC_MAX_COUNT, "count", &e->count);
}

static int key_name(const struct yctx *y, yaml_node_t *v, const char *path, struct device_entry *e)
{
    set_pos(&e->name_pos, v, path);
    if (ystring(y, v, path, e->name, sizeof(e->name)) < 0)
        return -1;
    if (!dns_label_valid(e->name))
        return yfail(y, v, path,
                     "\"%s\" is not a valid device name (a DNS label: lowercase letters, "
                     "digits and '-', at most 63)",
                     e->name);
    if (!strcmp(e->name, FLIP_ALL_DEVICES))
        return yfail(y, v, path, "\"%s\" is reserved (flips use it for every device)", e->name);
    return 0;
}

static int key_profile(const struct yctx *y, yaml_node_t *v, const char *path,
                       struct device_entry *e)
{
    const char *name;
    if (ytext(y, v, path, &name) < 0)
        return -1;
    e->profile = catalogue_find(name);
    if (e->profile == NULL) {
        char known[512];
        catalogue_names(known, sizeof(known));
        return yfail(y, v, path, "unknown profile \"%.64s\" (known: %s)", name, known);
    }
    return 0;
}

static int key_product_name(const struct yctx *y, yaml_node_t *v, const char *path,
                            struct device_entry *e)
{
    return text_value(y, v, path, e->product_name, sizeof(e->product_name));
}

static int key_architecture(const struct yctx *y, yaml_node_t *v, const char *path,
                            struct device_entry *e)
{
    return text_value(y, v, path, e->architecture, sizeof(e->architecture));
}

static int key_brand(const struct yctx *y, yaml_node_t *v, const char *path, struct device_entry *e)
{
    return text_value(y, v, path, e->brand, sizeof(e->brand));
}

static int key_memory(const struct yctx *y, yaml_node_t *v, const char *path,
                      struct device_entry *e)
{
    const char *text;
    struct error qerr;
    if (ytext(y, v, path, &text) < 0)
        return -1;
    if (quantity_parse_bytes(text, &e->memory_bytes, &qerr) < 0)
        return yfail(y, v, path, "%s", qerr.msg);
    if (e->memory_bytes == 0 || e->memory_bytes > MAX_MEMORY_BYTES)
        return yfail(y, v, path, "%s is not a valid GPU memory size (more than 0, at most 1Pi)",
                     text);
    e->has_memory = true;
    return 0;
}

static int key_compute_capability(const struct yctx *y, yaml_node_t *v, const char *path,
                                  struct device_entry *e)
{
    if (ystring(y, v, path, e->compute_capability, sizeof(e->compute_capability)) < 0)
        return -1;
    if (!shape(e->compute_capability, "d.d") && !shape(e->compute_capability, "dd.d"))
        return yfail(y, v, path, "\"%s\" is not a compute capability (like 9.0)",
                     e->compute_capability);
    return 0;
}

static int key_driver_version(const struct yctx *y, yaml_node_t *v, const char *path,
                              struct device_entry *e)
{
    return version_value(y, v, path, e->driver_version, sizeof(e->driver_version));
}

static int key_cuda_driver_version(const struct yctx *y, yaml_node_t *v, const char *path,
                                   struct device_entry *e)
{
    return version_value(y, v, path, e->cuda_driver_version, sizeof(e->cuda_driver_version));
}

static int key_uuid(const struct yctx *y, yaml_node_t *v, const char *path, struct device_entry *e)
{
    const char *text;
    set_pos(&e->uuid_pos, v, path);
    if (ytext(y, v, path, &text) < 0)
        return -1;
    if (!gpu_uuid_valid(text))
        return yfail(y, v, path,
                     "\"%.64s\" is not a GPU UUID (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
                     text);
    snprintf(e->uuid, sizeof(e->uuid), "%s", text);
    lowercase(e->uuid + 4);
    return 0;
}

static int key_pci_bus_id(const struct yctx *y, yaml_node_t *v, const char *path,
                          struct device_entry *e)
{
    set_pos(&e->pci_pos, v, path);
    if (ystring(y, v, path, e->pci_bus_id, sizeof(e->pci_bus_id)) < 0)
        return -1;
    if (!config_valid_pci_bus_id(e->pci_bus_id))
        return yfail(y, v, path,
                     "\"%s\" is not a PCI bus id (domain:bus:device.function, like "
                     "0000:08:00.0)",
                     e->pci_bus_id);
    lowercase(e->pci_bus_id);
    return 0;
}

static int key_pcie_root(const struct yctx *y, yaml_node_t *v, const char *path,
                         struct device_entry *e)
{
    if (ystring(y, v, path, e->pcie_root, sizeof(e->pcie_root)) < 0)
        return -1;
    if (!config_valid_pcie_root(e->pcie_root))
        return yfail(y, v, path, "\"%s\" is not a PCIe root (like pci0000:07)", e->pcie_root);
    lowercase(e->pcie_root);
    return 0;
}

static int key_numa_node(const struct yctx *y, yaml_node_t *v, const char *path,
                         struct device_entry *e)
{
    e->has_numa = true;
    return ylong(y, v, path, -1, 1023, "NUMA node", &e->numa_node);
}

static int key_health(const struct yctx *y, yaml_node_t *v, const char *path,
                      struct device_entry *e)
{
    e->has_health = true;
    return health_value(y, v, path, &e->healthy);
}

static int key_health_reason(const struct yctx *y, yaml_node_t *v, const char *path,
                             struct device_entry *e)
{
    e->has_reason = true;
    return text_value(y, v, path, e->health_reason, sizeof(e->health_reason));
}

static int key_attach(const struct yctx *y, yaml_node_t *v, const char *path,
                      struct device_entry *e)
{
    e->attach.attachable = true;
    return ymap_each(y, v, path, attach_keys, attach_key, &e->attach);
}

static int key_virtual(const struct yctx *y, yaml_node_t *v, const char *path,
                       struct device_entry *e)
{
    return ybool(y, v, path, &e->virtual_gpu);
}

static int key_vfio(const struct yctx *y, yaml_node_t *v, const char *path, struct device_entry *e)
{
    set_pos(&e->vfio_pos, v, path);
    return ybool(y, v, path, &e->vfio);
}

/* The parser of each key of device_keys, in the same order. */
static device_key_fn *const device_key_parsers[] = {
    key_count,
    key_name,
    key_profile,
    key_product_name,
    key_architecture,
    key_brand,
    key_memory,
    key_compute_capability,
    key_driver_version,
    key_cuda_driver_version,
    key_uuid,
    key_pci_bus_id,
    key_pcie_root,
    key_numa_node,
    key_health,
    key_health_reason,
    key_attach,
    key_virtual,
    key_vfio,
    config_mig_parse,
    config_sharing_parse,
};
_Static_assert(sizeof(device_key_parsers) / sizeof(device_key_parsers[0]) ==
                   sizeof(device_keys) / sizeof(device_keys[0]) - 1,
               "a parser for every key of device_keys");

/* ymap_each has checked that key is one of device_keys. */
static int device_key(const struct yctx *y, const char *key, yaml_node_t *v, const char *path,
                      void *ctx)
{
    size_t i = 0;
    while (device_keys[i + 1] != NULL && strcmp(device_keys[i], key) != 0)
        i++;
    return device_key_parsers[i](y, v, path, ctx);
}

/* A GPU bound to vfio-pci is passed through whole: its driver's features
 * (MIG, sharing by memory, attach, virtual GPUs) are not there. */
static int vfio_check(const struct yctx *y, const struct device_entry *e)
{
    if (!e->vfio)
        return 0;
    const char *other = e->mig.set && e->mig.mode != GPU_MIG_OFF ? "mig"
                        : e->has_sharing                         ? "sharing"
                        : e->attach.attachable                   ? "attach"
                        : e->virtual_gpu                         ? "virtual"
                                                                 : NULL;
    if (other == NULL)
        return 0;
    return error_set(y->err,
                     "%s:%zu:%zu: %s: a GPU bound to vfio-pci is passed through whole; it cannot "
                     "have %s too",
                     y->file, e->vfio_pos.line, e->vfio_pos.column, e->vfio_pos.path, other);
}

/* Checks that mix several keys of one entry. */
static int device_entry_check(const struct yctx *y, const yaml_node_t *node, const char *path,
                              struct device_entry *e)
{
    /* Keys that name one device cannot be shared by several. */
    const struct {
        const char *key;
        bool set;
        const struct spec_pos *pos;
    } single[] = {
        {"name", e->name[0] != '\0', &e->name_pos},
        {"uuid", e->uuid[0] != '\0', &e->uuid_pos},
        {"pciBusID", e->pci_bus_id[0] != '\0', &e->pci_pos},
    };
    for (size_t i = 0; e->count != 1 && i < sizeof(single) / sizeof(single[0]); i++) {
        if (single[i].set)
            return error_set(y->err,
                             "%s:%zu:%zu: %s: %s is for a single device, but count is %ld "
                             "(split the entry, or drop %s)",
                             y->file, single[i].pos->line, single[i].pos->column,
                             single[i].pos->path, single[i].key, e->count, single[i].key);
    }
    if (e->profile == NULL) {
        char missing[128];
        struct text_list l = text_list_start(missing, sizeof(missing));
        const char *keys[] = {"productName", "architecture", "memory", "computeCapability"};
        bool set[] = {e->product_name[0] != '\0', e->architecture[0] != '\0', e->has_memory,
                      e->compute_capability[0] != '\0'};
        for (size_t i = 0; i < 4; i++)
            if (!set[i])
                text_list_add(&l, "%s", keys[i]);
        if (missing[0] != '\0')
            return yfail(y, node, path,
                         "without a profile, productName, architecture, memory and "
                         "computeCapability must be set (missing: %s)",
                         missing);
    }
    uint64_t memory = e->has_memory ? e->memory_bytes
                      : e->profile  ? e->profile->memory_mib * 1024 * 1024
                                    : 0;
    if (config_sharing_check(y, e, memory) < 0 || vfio_check(y, e) < 0)
        return -1;
    return config_mig_check(y, e, memory);
}

static int parse_devices(const struct yctx *y, yaml_node_t *node, const char *path,
                         struct section *s, struct config_spec *spec)
{
    size_t n;
    if (yexpect_list(y, node, path, &n) < 0)
        return -1;
    if (n > FAKEHW_TREE_MAX_DEVICES)
        return yfail(y, node, path, "%zu entries, more than the %d devices a node may have", n,
                     FAKEHW_TREE_MAX_DEVICES);
    spec->total_entries += n;
    if (spec->total_entries > MAX_TOTAL_ENTRIES)
        return yfail(y, node, path,
                     "the config has more than %d device entries over all sections; use counts "
                     "and globs",
                     MAX_TOTAL_ENTRIES);
    s->entries = xcalloc(n ? n : 1, sizeof(*s->entries));
    /* MIG partitions are devices of the tree like GPUs: every limit counts
     * them, so what passes here is what readers of the tree take. */
    long gpus = 0, partitions = 0;
    for (size_t i = 0; i < n; i++) {
        char ipath[YPATH_MAX];
        yaml_node_t *item = ylist_item(y, node, path, i, ipath);
        struct device_entry *e = &s->entries[i];
        e->count = 1;
        set_pos(&e->pos, item, ipath);
        s->nentries = i + 1;
        if (ymap_each(y, item, ipath, device_keys, device_key, e) < 0)
            return -1;
        if (device_entry_check(y, item, ipath, e) < 0)
            return -1;
        long mine = e->count * (long)config_mig_partitions(e);
        gpus += e->count;
        partitions += mine;
        if (gpus + partitions > FAKEHW_TREE_MAX_DEVICES) {
            if (partitions == 0)
                return yfail(y, item, ipath, "this brings the node to %ld devices, more than %d",
                             gpus, FAKEHW_TREE_MAX_DEVICES);
            return yfail(y, item, ipath,
                         "this brings the node to %ld devices (%ld GPUs and %ld MIG partitions), "
                         "more than %d",
                         gpus + partitions, gpus, partitions, FAKEHW_TREE_MAX_DEVICES);
        }
        spec->total_devices += e->count + mine;
        if (spec->total_devices > MAX_TOTAL_DEVICES)
            return yfail(y, item, ipath,
                         "the config has more than %d devices (GPUs and MIG partitions) over all "
                         "sections; use globs",
                         MAX_TOTAL_DEVICES);
    }
    return 0;
}

/* ---- flips ---- */

struct flip_ctx {
    struct flip_entry *f;
    bool has_device, has_reason;
};

static int flip_key(const struct yctx *y, const char *key, yaml_node_t *v, const char *path,
                    void *ctx)
{
    struct flip_ctx *c = ctx;
    struct flip *f = &c->f->flip;
    if (!strcmp(key, "device")) {
        set_pos(&c->f->device_pos, v, path);
        c->has_device = true;
        if (ystring(y, v, path, f->device, sizeof(f->device)) < 0)
            return -1;
        if (!dns_label_valid(f->device))
            return yfail(y, v, path, "\"%s\" is not a device name or \"all\"", f->device);
        return 0;
    }
    if (!strcmp(key, "after"))
        return duration_value(y, v, path, &f->after_ms);
    if (!strcmp(key, "state")) {
        f->has_state = true;
        return health_value(y, v, path, &f->healthy);
    }
    if (!strcmp(key, "xid"))
        return ylong(y, v, path, 1, FAKEHW_XID_MAX, "XID", &f->xid);
    if (!strcmp(key, "for")) {
        if (duration_value(y, v, path, &f->for_ms) < 0)
            return -1;
        if (f->for_ms == 0)
            return yfail(y, v, path, "must be longer than 0 (leave it out for a lasting flip)");
        return 0;
    }
    /* reason */
    c->has_reason = true;
    return text_value(y, v, path, f->reason, sizeof(f->reason));
}

static int parse_flips(const struct yctx *y, yaml_node_t *node, const char *path,
                       struct config_spec *spec, struct flip_entry **out, size_t *nout)
{
    size_t n;
    if (yexpect_list(y, node, path, &n) < 0)
        return -1;
    if (n > MAX_LIST_FLIPS)
        return yfail(y, node, path, "%zu flips, more than the %d one flips list may have", n,
                     MAX_LIST_FLIPS);
    /* Counted before anything is allocated for them. */
    spec->total_flips += n;
    if (spec->total_flips > MAX_TOTAL_FLIPS)
        return yfail(y, node, path,
                     "the config has more than %d flips over all sections (an alias counts each "
                     "time it is used)",
                     MAX_TOTAL_FLIPS);
    *out = xcalloc(n ? n : 1, sizeof(**out));
    for (size_t i = 0; i < n; i++) {
        char ipath[YPATH_MAX];
        yaml_node_t *item = ylist_item(y, node, path, i, ipath);
        struct flip_ctx c = {.f = &(*out)[i]};
        set_pos(&c.f->pos, item, ipath);
        *nout = i + 1;
        if (ymap_each(y, item, ipath, flip_keys, flip_key, &c) < 0)
            return -1;
        if (!c.has_device)
            return yfail(y, item, ipath, "device is required (a device name or \"all\")");
        if (!c.f->flip.has_state && c.f->flip.xid == 0)
            return yfail(y, item, ipath,
                         "state (healthy or unhealthy) or xid is required: what the flip changes");
        if (c.has_reason && !c.f->flip.has_state)
            return yfail(y, item, ipath,
                         "reason needs a state (it is the healthReason set with it)");
    }
    return 0;
}

/* ---- sections ---- */

struct section_ctx {
    struct config_spec *spec;
    struct section *s;
    bool has_name;
};

static int section_key(const struct yctx *y, const char *key, yaml_node_t *v, const char *path,
                       void *ctx)
{
    struct section_ctx *c = ctx;
    struct section *s = c->s;
    if (!strcmp(key, "name")) {
        c->has_name = true;
        set_pos(&s->name_pos, v, path);
        return ystring(y, v, path, s->pattern, sizeof(s->pattern));
    }
    if (!strcmp(key, "seed")) {
        /* "" means the default: the node name. */
        if (ystring(y, v, path, s->seed, sizeof(s->seed)) < 0)
            return -1;
        s->has_seed = s->seed[0] != '\0';
        return 0;
    }
    if (!strcmp(key, "driverVersion"))
        return version_value(y, v, path, s->driver_version, sizeof(s->driver_version));
    if (!strcmp(key, "cudaDriverVersion"))
        return version_value(y, v, path, s->cuda_driver_version, sizeof(s->cuda_driver_version));
    if (!strcmp(key, "devices"))
        return parse_devices(y, v, path, s, c->spec);
    return parse_flips(y, v, path, c->spec, &s->flips, &s->nflips);
}

static int parse_nodes(const struct yctx *y, yaml_node_t *node, const char *path,
                       struct config_spec *spec)
{
    size_t n;
    if (yexpect_list(y, node, path, &n) < 0)
        return -1;
    if (n > MAX_NODE_SECTIONS)
        return yfail(y, node, path, "%zu node sections, more than %d (use globs)", n,
                     MAX_NODE_SECTIONS);
    spec->nodes = xcalloc(n ? n : 1, sizeof(*spec->nodes));
    for (size_t i = 0; i < n; i++) {
        char ipath[YPATH_MAX];
        yaml_node_t *item = ylist_item(y, node, path, i, ipath);
        struct section_ctx c = {.spec = spec, .s = &spec->nodes[i]};
        set_pos(&c.s->pos, item, ipath);
        spec->nnodes = i + 1;
        if (ymap_each(y, item, ipath, node_keys, section_key, &c) < 0)
            return -1;
        if (!c.has_name)
            return yfail(y, item, ipath, "name is required (a node name or a glob like gpu-*)");
        snprintf(c.s->label, sizeof(c.s->label), "%s (%s)", ipath, c.s->pattern);
    }
    return 0;
}

static int top_key(const struct yctx *y, const char *key, yaml_node_t *v, const char *path,
                   void *ctx)
{
    struct config_spec *spec = ctx;
    if (!strcmp(key, "seed")) {
        if (ystring(y, v, path, spec->seed, sizeof(spec->seed)) < 0)
            return -1;
        spec->has_seed = spec->seed[0] != '\0';
        return 0;
    }
    if (!strcmp(key, "driverVersion"))
        return version_value(y, v, path, spec->driver_version, sizeof(spec->driver_version));
    if (!strcmp(key, "cudaDriverVersion"))
        return version_value(y, v, path, spec->cuda_driver_version,
                             sizeof(spec->cuda_driver_version));
    if (!strcmp(key, "defaults")) {
        struct section_ctx c = {.spec = spec, .s = &spec->defaults};
        spec->has_defaults = true;
        set_pos(&c.s->pos, v, path);
        snprintf(c.s->label, sizeof(c.s->label), "defaults");
        return ymap_each(y, v, path, defaults_keys, section_key, &c);
    }
    if (!strcmp(key, "nodes"))
        return parse_nodes(y, v, path, spec);
    return parse_flips(y, v, path, spec, &spec->flips, &spec->nflips);
}

static void section_free(struct section *s)
{
    for (size_t i = 0; i < s->nentries; i++)
        mig_spec_free(&s->entries[i].mig);
    free(s->entries);
    free(s->flips);
}

void config_spec_free(struct config_spec *spec)
{
    section_free(&spec->defaults);
    for (size_t i = 0; i < spec->nnodes; i++)
        section_free(&spec->nodes[i]);
    free(spec->nodes);
    free(spec->flips);
    memset(spec, 0, sizeof(*spec));
}

int config_parse(const char *text, size_t len, const char *file, struct config_spec *spec,
                 struct error *err)
{
    yaml_document_t doc;
    memset(spec, 0, sizeof(*spec));
    spec->file = file;
    if (yload(text, len, file, &doc, err) < 0)
        return -1;
    struct yctx y = {.doc = &doc, .file = file, .err = err};
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    int rc = 0;
    if (root->type != YAML_MAPPING_NODE)
        rc = yfail(&y, root, "",
                   "the config must be a mapping with the keys seed, driverVersion, "
                   "cudaDriverVersion, defaults, nodes and flips, got %s",
                   ykind(root));
    else
        rc = ymap_each(&y, root, "", top_keys, top_key, spec);
    yaml_document_delete(&doc);
    if (rc < 0) {
        config_spec_free(spec);
        spec->file = file;
    }
    return rc;
}
