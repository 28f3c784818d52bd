// SPDX-License-Identifier: Apache-2.0
/* The config as written, before it is resolved for a node: what
 * config_parse.c builds from the YAML (every value already checked on its
 * own) and config_resolve.c turns into a struct config.  Internal to the
 * config module. */
#ifndef FAKEHW_CONFIG_SPEC_H
#define FAKEHW_CONFIG_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalogue.h"
#include "config.h"
#include "config_yaml.h"

/* Where something was written, for errors found after parsing. */
struct spec_pos {
    size_t line, column;
    char path[YPATH_MAX];
};

/* Most devices one `count` may ask for. */
#define SPEC_MAX_COUNT FAKEHW_TREE_MAX_DEVICES

/* One instance of a static `mig` list; start -1 until the check picks the
 * first free placement. */
struct mig_instance_spec {
    struct spec_pos pos;
    char profile[FAKEHW_NAME_MAX];
    long start;
};

/* A device entry's `mig` section (config_mig.c). */
struct mig_spec {
    bool set;
    struct spec_pos pos;
    enum gpu_mig_mode mode;
    struct mig_instance_spec *instances; /* ninstances, malloc'ed */
    size_t ninstances;
};

/* One item of a `devices` list: count devices sharing these settings.
 * Empty strings and has_* false mean "not set". */
struct device_entry {
    struct spec_pos pos;
    long count; /* 1 unless set */
    const struct gpu_profile *profile;
    char name[FAKEHW_NAME_MAX];
    struct spec_pos name_pos;
    char uuid[GPU_UUID_SIZE];
    struct spec_pos uuid_pos;
    char pci_bus_id[FAKEHW_TEXT_MAX];
    struct spec_pos pci_pos;
    char product_name[FAKEHW_TEXT_MAX];
    char architecture[FAKEHW_TEXT_MAX];
    char brand[FAKEHW_TEXT_MAX];
    char compute_capability[FAKEHW_TEXT_MAX];
    char driver_version[FAKEHW_TEXT_MAX];
    char cuda_driver_version[FAKEHW_TEXT_MAX];
    char pcie_root[FAKEHW_TEXT_MAX];
    bool has_memory;
    uint64_t memory_bytes;
    bool has_numa;
    long numa_node;
    bool has_health;
    bool healthy;
    bool has_reason;
    char health_reason[FAKEHW_REASON_MAX];
    struct gpu_attach attach;
    bool virtual_gpu;
    bool vfio;
    struct spec_pos vfio_pos;
    struct mig_spec mig;
    /* `sharing: {memory: {default, min, step}}` (config_sharing.c) */
    bool has_sharing;
    struct spec_pos sharing_pos;
    uint64_t share_default, share_min, share_step;
};

struct flip_entry {
    struct spec_pos pos;
    struct spec_pos device_pos;
    struct flip flip;
};

/* `defaults` or one item of `nodes`. */
struct section {
    struct spec_pos pos;
    char label[320];   /* "defaults" or "nodes[1] (kind-worker*)" */
    char pattern[256]; /* node name or glob; "" for defaults */
    struct spec_pos name_pos;
    bool has_seed;
    char seed[CONFIG_SEED_MAX];
    char driver_version[FAKEHW_TEXT_MAX];
    char cuda_driver_version[FAKEHW_TEXT_MAX];
    struct device_entry *entries;
    size_t nentries;
    struct flip_entry *flips;
    size_t nflips;
};

struct config_spec {
    const char *file;
    bool has_seed;
    char seed[CONFIG_SEED_MAX];
    char driver_version[FAKEHW_TEXT_MAX];
    char cuda_driver_version[FAKEHW_TEXT_MAX];
    bool has_defaults;
    struct section defaults;
    struct section *nodes;
    size_t nnodes;
    struct flip_entry *flips; /* top level: every node that has the device */
    size_t nflips;
    size_t total_entries; /* device entries over all sections */
    long total_devices;   /* devices over all sections */
    size_t total_flips;   /* flips over all lists, each alias counted where used */
};

/* Parses text into *spec (file names it in errors and must outlive spec).
 * On error *spec is left empty. */
int config_parse(const char *text, size_t len, const char *file, struct config_spec *spec,
                 struct error *err);

void config_spec_free(struct config_spec *spec);

/* Checks every section and resolves the one for node into *out. */
int config_resolve(const struct config_spec *spec, const char *node, struct config *out,
                   struct error *err);

/* Lookups of a top-level flip's device name made by the last
 * config_resolve (the tests bound its work with it). */
size_t config_resolve_flip_lookups(void);

/* config_mig.c: the `mig` key of a device entry, its check once every key
 * of the entry is read (the profile must have MIG geometry, the memory
 * room for every slice; static instances must fit), and the partitions a resolved GPU offers,
 * appended after the GPUs (index = *n onwards).  mig_spec_free frees the list. */
struct yctx;
int config_mig_parse(const struct yctx *y, yaml_node_t *node, const char *path,
                     struct device_entry *e);
int config_mig_check(const struct yctx *y, struct device_entry *e, uint64_t memory);
/* The partitions one GPU of a checked entry offers (0 with MIG off). */
size_t config_mig_partitions(const struct device_entry *e);
void mig_spec_free(struct mig_spec *m);

/* config_sharing.c: the `sharing` key of a device entry, and its check once
 * every key is read (within the memory, not with MIG). */
int config_sharing_parse(const struct yctx *y, yaml_node_t *node, const char *path,
                         struct device_entry *e);
int config_sharing_check(const struct yctx *y, const struct device_entry *e, uint64_t memory);
int config_mig_expand(const char *file, const char *label, struct gpu_device **devs,
                      const struct device_entry ***origin, size_t *n, struct error *err);

/* Value checks shared by the parser and its tests. */
bool config_valid_pci_bus_id(const char *s); /* "0000:08:00.0" */
bool config_valid_pcie_root(const char *s);  /* "pci0000:07" */
bool config_valid_version(const char *s);    /* "9.0", "580.95.05" */

#endif
