// SPDX-License-Identifier: Apache-2.0
/* One immutable, reference-counted list of the node's devices: what the
 * inventory read from the fakehw tree at one moment.  The inventory and its
 * listeners (slice publisher, claim status writer, health stream) share it
 * instead of each keeping a copy: struct fakehw_device is about 2 KB, so one
 * copy of a 4,096-GPU node is 8 MB.
 *
 * Rules:
 *  - whoever makes a snapshot fills the devices first; once it is shared
 *    nobody writes to it (a change makes a new snapshot);
 *  - code that keeps a snapshot beyond the call that lent it takes a
 *    reference (device_snapshot_get) and drops it when done
 *    (device_snapshot_put); the last put frees it;
 *  - the count is atomic: references may be taken and dropped on any
 *    thread, with no lock. */
#ifndef FAKEHW_DRIVER_DEVICE_SNAPSHOT_H
#define FAKEHW_DRIVER_DEVICE_SNAPSHOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "fakehw_tree.h"

struct device_snapshot {
    atomic_size_t refs; /* private: use get and put */
    /* false while the fakehw tree is gone: devs are then the last known
     * devices, marked unhealthy. */
    bool tree_up;
    size_t n;
    const struct fakehw_device *devs; /* n devices (NULL when n is 0), owned */
};

/* Wraps devs, a malloc'ed array of n devices (NULL when n is 0), into a
 * snapshot holding one reference.  The snapshot owns devs from here on, also
 * when this fails (out of memory: NULL with err, devs freed). */
struct device_snapshot *device_snapshot_new(struct fakehw_device *devs, size_t n, bool tree_up,
                                            struct error *err);

/* Takes a reference; returns s.  NULL is fine. */
struct device_snapshot *device_snapshot_get(struct device_snapshot *s);

/* Drops a reference; the last one frees the snapshot.  NULL is fine. */
void device_snapshot_put(struct device_snapshot *s);

/* The device called name, or NULL.  s may be NULL. */
const struct fakehw_device *device_snapshot_find(const struct device_snapshot *s, const char *name);

/* The reference count right now (tests and diagnostics). */
size_t device_snapshot_refs(const struct device_snapshot *s);

#endif
