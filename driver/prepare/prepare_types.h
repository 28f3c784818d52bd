// SPDX-License-Identifier: Apache-2.0
/* The types of the prepare path (prepare.h is its API): the claim reference
 * every part passes around, the callbacks and configuration a prepare state
 * is opened with, and the prepare answer.  Parts that only carry these (the
 * claim record, the claim queue of driver/claims/, the DRA codec) include
 * this file, not the API. */
#ifndef FAKEHW_DRIVER_PREPARE_TYPES_H
#define FAKEHW_DRIVER_PREPARE_TYPES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "driver/device/personality.h"
#include "error.h"
#include "fakehw_tree.h"

/* A claim as the kubelet names it.  The strings are borrowed: they belong
 * to whoever made the reference (a request, a claim record). */
struct claim_ref {
    const char *ns;
    const char *name;
    const char *uid;
};

/* The callbacks are called from the threads that call prepare_claim, several
 * at once for different claims, so they must be thread-safe.
 *
 * Fetches the claim the kubelet named: returns 0 with *claim (new reference)
 * or -1 with err ("GET .../resourceclaims/NAME: 404 ...").  The caller
 * checks the uid and the allocation of what it gets. */
typedef int (*claim_fetch_fn)(void *ctx, const struct claim_ref *claim_ref, json_t **claim,
                              struct error *err);
/* Fetches a DeviceClass, for its opaque config.  Same contract.  Not called
 * by prepare: the scheduler copies the class's config into the allocation
 * (source FromClass), which is what the claim was allocated with; may be NULL. */
typedef int (*class_fetch_fn)(void *ctx, const char *name, json_t **device_class,
                              struct error *err);
/* Looks up one device of the node by name in the current fakehw inventory.
 * Returns 0 and fills *dev, or -1 with err ("device gpu-9 not found"). */
typedef int (*device_lookup_fn)(void *ctx, const char *device_name, struct fakehw_device *dev,
                                struct error *err);

/* Told about a claim after a successful prepare (also one answered from the
 * checkpoint) or unprepare (also of a claim that was not prepared).  Called
 * while the claim's uid is serialised but no lock of the state is held; it
 * must return quickly and must not prepare or unprepare the same claim. */
typedef void (*prepare_hook_fn)(void *ctx, const struct claim_ref *claim);

struct prepare_config {
    const char *driver_name; /* gpu.fakehw.example.com */
    const char *node_name;   /* pool name */
    const char *plugin_dir;  /* /var/lib/kubelet/plugins/<driver>: checkpoint, metadata */
    const char *cdi_root;    /* /var/run/cdi */
    /* The fakehw tree as the container runtime sees it (the host), where CDI
     * specs mount it from: not necessarily where this process reads it. */
    const char *fakehw_host_root;
    const char *fakegpu_smi;      /* host path of the static fakegpu-smi, "" = do not mount */
    bool device_metadata;         /* write KEP-5304 metadata files (default on) */
    enum personality personality; /* the attributes of the metadata files */
    claim_fetch_fn fetch_claim;
    class_fetch_fn fetch_class; /* unused, may be NULL */
    device_lookup_fn lookup_device;
    void *fetch_ctx;
    prepare_hook_fn on_prepared;   /* NULL = none */
    prepare_hook_fn on_unprepared; /* NULL = none */
    /* Called by prepare_after_answer, once answers are on their way: where
     * the hooks' own threads are woken.  NULL = none. */
    void (*after_answer)(void *hook_ctx);
    void *hook_ctx;
    /* Rolling update: another plugin instance on the node uses the same
     * plugin dir.  Every call then holds <plugin dir>/serialize.lock, loads
     * the checkpoint again when the other instance wrote it, and removes
     * an unprepared claim's files before it answers. */
    bool shared;
    /* Compact the checkpoint (new checkpoint.json, empty journal) once the
     * journal has more lines than this; 0 = 1024.  Tests set it low. */
    size_t journal_max_lines;
};

/* One Device of NodePrepareResourceResponse. */
struct prepared_device {
    char **request_names; /* base names ("req", not "req/sub") */
    size_t n_request_names;
    char *pool_name;
    char *device_name;
    char **cdi_device_ids; /* fully qualified: vendor/class=name */
    size_t n_cdi_device_ids;
    char *share_id; /* NULL unless the allocation result has one (v1 only) */
};

struct prepared_claim {
    struct prepared_device *devices;
    size_t n_devices;
};

/* Calls of prepare_for_each_device (prepare.h): one per (prepared claim,
 * device). */
typedef void (*prepared_device_fn)(void *ctx, const struct claim_ref *claim, const char *pool,
                                   const char *device, const char *share_id);

/* Frees what a prepared claim holds (prepared_claim.c) and leaves it empty;
 * NULL is fine. */
void prepared_claim_free(struct prepared_claim *c);

#endif
