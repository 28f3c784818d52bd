// SPDX-License-Identifier: Apache-2.0
/* The fakehw YAML config (reference: docs/fakehw.md) resolved for one node.
 *
 * Loading parses the whole file with libyaml, checks every section (also the
 * ones for other nodes), picks the section for the node (first `nodes` entry
 * whose name or glob matches, else `defaults`, else no devices), expands
 * counts, applies profile figures and overrides, computes defaults (names,
 * UUIDs, PCI placement, NUMA nodes) and collects the flips that apply.
 *
 * Every error names the file, line, column (1-based) and key path, e.g.
 *   fakehw.yaml:12:9: nodes[0].devices[1].count: -3 is not a valid count (0..4096)
 * and nothing is returned on error. */
#ifndef FAKEHW_CONFIG_H
#define FAKEHW_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "gpu.h"

/* The device field of a flip that means every device. */
#define FLIP_ALL_DEVICES "all"

/* A scheduled health change: `after` the config was loaded, device (or all)
 * goes to the state and reports the XID (either or both); with for_ms > 0 it
 * returns to the other state (reason cleared) and its XID is cleared
 * for_ms later. */
struct flip {
    char device[FAKEHW_NAME_MAX];
    int64_t after_ms;
    bool has_state; /* the flip sets health (healthy) */
    bool healthy;
    long xid;       /* > 0: the flip reports this XID */
    int64_t for_ms; /* 0: the state stays */
    char reason[FAKEHW_REASON_MAX];
};

#define CONFIG_SEED_MAX 256

struct config {
    char section[320];          /* what was used, for logs: "nodes[1] (kind-worker*)" */
    bool matched;               /* a nodes entry or the defaults section applies */
    char seed[CONFIG_SEED_MAX]; /* UUID seed in effect */
    struct gpu_device *devices; /* ndevices, by index */
    size_t ndevices;
    struct flip *flips; /* nflips, in config order */
    size_t nflips;
};

/* Loads path for node.  *out is filled on success and must be config_free'd;
 * untouched on error. */
int config_load_file(const char *path, const char *node, struct config *out, struct error *err);

/* The same for text held in memory; display_name names it in errors. */
int config_load_string(const char *text, size_t len, const char *display_name, const char *node,
                       struct config *out, struct error *err);

void config_free(struct config *c);

#endif
