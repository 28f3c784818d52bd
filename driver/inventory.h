// SPDX-License-Identifier: Apache-2.0
/* The plugin's view of the node's fake GPUs: struct tree_inventory, the
 * devices as read from the fakehw tree (fakehw's own, the live model it
 * serves, is struct live_inventory).
 *
 * A thread watches the fakehw tree (common/fakehw/fakehw_watch.h), re-reads it after
 * every change, and hands each listener the new snapshot of the devices
 * (driver/device/device_snapshot.h: immutable, reference-counted, shared by
 * everyone instead of copied).  While the tree is gone (fakehw unmounted or
 * killed) for longer than a grace period, the last known devices are
 * reported unhealthy with a reason that says so, in a new snapshot; when the
 * tree returns it is read again.  A tree back within the grace (fakehw
 * handing the mount to its successor) is only read again: with the same
 * devices nothing changes downstream.
 * Listeners run on the inventory thread, one after the other, and must not
 * block for long (the publisher and the health services only queue work).
 *
 * inventory_lookup and inventory_current are safe from any thread (the
 * prepare path uses them). */
#ifndef FAKEHW_DRIVER_INVENTORY_H
#define FAKEHW_DRIVER_INVENTORY_H

#include <stdbool.h>
#include <stddef.h>

#include "driver/device/device_snapshot.h"
#include "driver/device/personality.h"
#include "error.h"
#include "fakehw_tree.h"

/* snap is lent for the call: a listener that keeps it takes a reference
 * (device_snapshot_get) and drops it later (device_snapshot_put).
 * snap->tree_up is false while the fakehw tree is gone (the devices are then
 * the last known ones, marked unhealthy). */
typedef void (*inventory_change_fn)(void *ctx, struct device_snapshot *snap);

struct inventory_listener {
    inventory_change_fn on_change;
    void *ctx;
};

struct inventory_options {
    const char *root; /* the fakehw tree */
    int resync_ms;    /* safety re-read period (0 = 30000) */
    int retry_ms;     /* while the tree is gone, how often to look for it (0 = 1000) */
    /* How long the tree may be gone before its devices turn unhealthy (0 = at
     * once); larger than retry_ms, or a tree back at once still counts. */
    int gone_grace_ms;
    /* Names the devices of every snapshot as the personality publishes them
     * (driver/device/personality.h). */
    enum personality personality;
};

struct tree_inventory;

/* Reads the tree once (a tree that is not there yet is not an error: the
 * inventory starts empty and fills when it appears), calls every listener
 * with that first snapshot, then starts the watch thread.  The listeners
 * array is copied. */
struct tree_inventory *inventory_start(const struct inventory_options *opts,
                                       const struct inventory_listener *listeners,
                                       size_t n_listeners, struct error *err);

/* Stops the thread and frees everything.  NULL is fine. */
void inventory_stop(struct tree_inventory *inv);

/* The same, waiting for the thread only until deadline_ms (monotonic_ms
 * clock; < 0: no deadline).  A thread still blocked in the tree then (a
 * read of a FUSE mount whose fakehw is stopped or hung: no signal ends it)
 * is left behind and frees the inventory itself if it ever comes back; -1
 * then.  Either way no listener is called once this returns, and inv must
 * not be used again. */
int inventory_stop_by(struct tree_inventory *inv, long long deadline_ms);

/* Copies the device called name from the current snapshot.  -1 with err when
 * there is none. */
int inventory_lookup(struct tree_inventory *inv, const char *name, struct fakehw_device *dev,
                     struct error *err);

/* A reference to the current snapshot (drop it with device_snapshot_put),
 * or NULL before the tree was first read. */
struct device_snapshot *inventory_current(struct tree_inventory *inv);

/* True while the tree is readable. */
bool inventory_tree_up(struct tree_inventory *inv);

#endif
