// SPDX-License-Identifier: Apache-2.0
/* The prepare path: what NodePrepareResources and NodeUnprepareResources do
 * for one claim, independent of gRPC.  The gRPC handlers (driver/grpc/) decode
 * the request, call these once per claim, and encode the answers.
 * docs/prepare.md describes every file written and the env a container gets.
 *
 * Prepare: fetch the ResourceClaim (through claim_fetch_fn), check uid and
 * allocation, select this driver's results, apply opaque config (class first,
 * then claim), write the device metadata and CDI specs (atomically, without
 * fsync: they are derived data), append the claim to the checkpoint journal
 * (one write and one fdatasync), and only then answer.  Idempotent: a claim
 * already prepared with the same uid answers from the checkpoint without
 * fetching or rewriting anything, once a stat per file shows its files are
 * all there; when one is missing (a reboot empties /var/run/cdi), the claim
 * is dropped and prepared afresh.  Serialised per claim uid; different
 * claims prepare in parallel.
 *
 * Unprepare: remove the claim's CDI specs and metadata, then append its
 * removal to the checkpoint journal.  An unknown claim succeeds.
 *
 * Namespaces, names and uids are checked (DNS label, DNS subdomain, UID)
 * before they reach any path. */
#ifndef FAKEHW_DRIVER_PREPARE_H
#define FAKEHW_DRIVER_PREPARE_H

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

struct prepare_state;

/* Loads (or creates) the checkpoint in cfg->plugin_dir and reconciles it with
 * the CDI specs on disk by the documented recovery rule (docs/prepare.md): a
 * corrupt or missing checkpoint is logged, moved aside and rebuilt from the
 * claim CDI specs; a torn last journal line is dropped; claims left
 * PrepareStarted (old checkpoints) or with a missing file are dropped; files
 * of this driver no claim owns are removed; the result is written as a new
 * snapshot with an empty journal.  Creates plugin_dir and cdi_root.  NULL
 * with err on a bad config or an I/O error.  cfg's strings must outlive the
 * state; no call may be in flight at prepare_state_close, which compacts the
 * checkpoint once more. */
struct prepare_state *prepare_state_open(const struct prepare_config *cfg, struct error *err);
void prepare_state_close(struct prepare_state *st);

/* Prepares one claim.  ns, name and uid come from the kubelet's request and
 * are checked (DNS label, DNS subdomain, UID) before anything else; past
 * this point the claim travels as a struct claim_ref.  Returns 0 and fills *out (free with
 * prepared_claim_free), or -1 with err naming the claim ("claim default/c1
 * (uid ...): not allocated"); *out is then empty.  The kubelet gets err as
 * that claim's error.  A claim without results of this driver prepares to
 * zero devices and writes no file. */
int prepare_claim(struct prepare_state *st, const char *ns, const char *name, const char *uid,
                  struct prepared_claim *out, struct error *err);

/* Unprepares one claim; unknown claims succeed.  -1 with err on I/O failure.
 * Answers once the checkpoint says so (its journal line written; synced
 * right after the answer); its CDI specs and metadata directory are removed
 * right after the answer too, by a thread of their own (see claim_reaper.h):
 * removed before it, they made the kubelet wait longer. */
int unprepare_claim(struct prepare_state *st, const char *ns, const char *name, const char *uid,
                    struct error *err);

/* Starts what prepares and unprepares left for after their answers (the
 * claim reaper, the journal's sync thread, cfg.after_answer); the gRPC
 * layer calls it once the reply is on its way.  Without it that work waits
 * for the next call, the next append, prepare_wait_settled or the close. */
void prepare_after_answer(struct prepare_state *st);

/* Waits until what unprepares left for after their answers is done: the
 * claims' files removed, the journal lines durable (and compacted when
 * past the bound). */
void prepare_wait_settled(struct prepare_state *st);

/* Claims currently prepared (for health: which claims hold which device).
 * Calls fn once per (claim, device) under the state lock; fn must not call
 * back into the state. */
typedef void (*prepared_device_fn)(void *ctx, const struct claim_ref *claim, const char *pool,
                                   const char *device, const char *share_id);
void prepare_for_each_device(struct prepare_state *st, prepared_device_fn fn, void *ctx);

void prepared_claim_free(struct prepared_claim *c);

#endif
