// SPDX-License-Identifier: Apache-2.0
/* The binder: acts on device binding conditions (binding_conditions.h) for
 * the attachable devices of this node's pool.
 *
 * A worker thread reconciles the claims of the claim watch
 * (driver/claims/claim_watch.h: those with an allocation result of this
 * driver and pool) with the fakehw tree whenever a claim or the inventory
 * changes:
 *  - a result that carries binding conditions and whose status reports
 *    neither condition yet: the worker asks fakehw to attach the device
 *    (writes "attach" to devices/<name>/attach, once per allocation: claim
 *    uid and allocationTimestamp), then waits for the tree;
 *  - attached (or a device that needs no attach): it sets
 *    "<driver>/attached" True in the claim's status.devices entry; failed
 *    (after its own request): "<driver>/attach-failed" True, and the
 *    scheduler gives the allocation up and schedules the pod again;
 *  - an attachable device that no claim of the pool holds any more (after
 *    the watch's first complete list) and is not detached: it writes
 *    "detach".
 * Status writes are read-modify-write like the claim-status writer's: GET,
 * build, skip when nothing changes, PATCH /status with a merge patch that
 * carries the claim's resourceVersion; 409 re-reads at once (a few times,
 * then with backoff), other failures back off with jitter up to
 * max_attempts; a claim that is gone or replaced is dropped.  Entries and
 * conditions of others are kept.
 *
 * The devices are the fakehw tree's attach files, or (binder_options.devices)
 * whatever stands behind them: the fleet publisher's in-memory inventories,
 * where one binder serves every node's pool from one claim watch of all the
 * driver's pools. */
#ifndef FAKEHW_DRIVER_BINDER_H
#define FAKEHW_DRIVER_BINDER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "driver/claims/claim_watch.h"
#include "driver/device/device_snapshot.h"
#include "driver/kube/kube_client.h"
#include "error.h"
#include "fakehw_tree.h"

/* Where the binder's devices are, when they are not a fakehw tree: the
 * fleet's in-memory inventories (fleet/fleet_bind.h), one pool per node.
 * Every function is called on the worker thread only, with ctx. */
typedef void (*binder_engaged_fn)(void *fctx, const char *pool, const char *device,
                                  enum fakehw_attach state);
struct binder_devices {
    /* Whether the binder acts on the allocation results of this pool. */
    bool (*serves)(void *ctx, const char *pool);
    /* A device's attach state, as its attach file would read; -1 (logged)
     * when it cannot be read. */
    int (*read_attach)(void *ctx, const char *pool, const char *device, enum fakehw_attach *state);
    /* What a write of command ("attach" or "detach") to its attach file
     * would do; -1 logged. */
    int (*write_attach)(void *ctx, const char *pool, const char *device, const char *command);
    /* Calls fn for every attachable device of the served pools that is not
     * detached (fn does not call back into the devices). */
    void (*each_engaged)(void *ctx, binder_engaged_fn fn, void *fctx);
    void *ctx;
};

struct binder_options {
    const char *driver_name;              /* copied */
    const char *pool_name;                /* the node name; copied.  NULL with devices: every
                                           * pool devices->serves accepts */
    const char *fakehw_root;              /* copied; the devices when devices is NULL */
    const struct binder_devices *devices; /* copied; NULL: the fakehw tree */
    long retry_base_ms;                   /* 0 = 500 */
    long retry_max_ms;                    /* 0 = 30000 */
    int max_attempts;                     /* 0 = 12 */
    /* Least time between two reconcile passes (each reads every claim of
     * the watch), while status writes go on; 0: at once (one node's few
     * claims).  A fleet's watch holds every node's claims. */
    long reconcile_gap_ms;
};

struct binder_stats {
    unsigned long attach_requests; /* "attach" written to the tree */
    unsigned long detach_requests;
    unsigned long writes;    /* successful status PATCHes */
    unsigned long conflicts; /* 409 answers */
    unsigned long failures;  /* other failed attempts */
};

struct binder;

/* Starts the worker, which listens to the claim watch.  kc and watch must
 * outlive the binder. */
struct binder *binder_start(struct kube_client *kc, struct claim_watch *watch,
                            const struct binder_options *opts, struct error *err);

/* A new inventory snapshot (an attach may have ended): reconcile soon.  The
 * binder takes its own reference. */
void binder_devices_changed(struct binder *b, struct device_snapshot *snap);

/* With binder_options.devices: they changed (an attach ended), reconcile
 * soon. */
void binder_devices_kick(struct binder *b);

void binder_get_stats(struct binder *b, struct binder_stats *st);

/* Stops listening to the claim watch, stops and joins the worker, frees
 * everything.  NULL is fine. */
void binder_stop(struct binder *b);

/* The same, waiting for the worker (which reads and writes the fakehw
 * tree) only until deadline_ms (monotonic_ms clock; < 0: no deadline).  A
 * worker still blocked in the tree then is left behind and frees the binder
 * itself if it ever comes back; -1 then.  It may still use the kube client
 * then, which must outlive it (the plugin exits instead of freeing it).
 * Either way b must not be used again. */
int binder_stop_by(struct binder *b, long long deadline_ms);

#endif
