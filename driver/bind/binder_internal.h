// SPDX-License-Identifier: Apache-2.0
/* Internals of the binder (binder.h) shared by its files: binder.c (the
 * worker: reconcile, the status writes, the lifecycle), binder_attach.c
 * (the devices: the fakehw attach files or binder_options.devices, and what
 * they say per allocated device). */
#ifndef FAKEHW_DRIVER_BINDER_INTERNAL_H
#define FAKEHW_DRIVER_BINDER_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "binder.h"
#include "binding_conditions.h"
#include "driver/claims/claim_queue.h"
#include "thread_end.h"

struct binder {
    struct kube_client *kc;
    struct claim_watch *watch;  /* the claims to reconcile */
    char *driver, *pool, *root; /* pool NULL: every pool dev.serves accepts */
    struct binding_names names;
    bool tree; /* the devices are the fakehw tree at root (dev is then its own) */
    struct binder_devices dev;
    long reconcile_gap_ms;

    pthread_t worker_thread;
    bool worker_started;
    /* The worker reads and writes the fakehw tree, where a hung fakehw can
     * hold it for good: binder_stop_by may leave it behind (thread_end.h). */
    struct thread_end worker_end;

    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t cond;
    bool stopping;
    bool dirty;                  /* claims or devices changed since the last reconcile */
    long long next_reconcile_ms; /* not before (reconcile_gap_ms) */
    struct device_snapshot *snap;
    struct claim_queue queue; /* claims whose binding conditions need a write */
    struct binder_stats stats;

    /* Owned by the worker thread: allocations ("uid/device/allocationTime")
     * it asked fakehw to attach. */
    json_t *requested;
};

/* What the tree says about an allocated device. */
enum outcome_kind { WAIT, ATTACHED, FAILED };

/* "uid/pool/device/allocationTime": one allocation of a device to a claim. */
void binder_request_key(const json_t *claim, const char *pool, const char *device, char *key,
                        size_t size);

/* The outcome for an allocated device; act asks for the attach when nobody
 * has yet (only the reconcile pass acts, the status write only looks).
 * Worker thread only. */
enum outcome_kind binder_device_outcome(struct binder *b, const json_t *claim, const char *pool,
                                        const char *device, bool act);

/* Asks for "attach" or "detach" of a device (dev.write_attach), counted in
 * the stats; -1 logged. */
int binder_write_attach(struct binder *b, const char *pool, const char *device,
                        const char *command);

/* The fakehw tree at b->root as the binder's devices (ctx = b). */
void binder_tree_devices(struct binder *b, struct binder_devices *dev);

#endif
