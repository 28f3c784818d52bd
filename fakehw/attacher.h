// SPDX-License-Identifier: Apache-2.0
/* The attach timer: a thread that ends attaches in progress when their
 * delay is over (inventory_attach_tick), waking when a write starts a new
 * one.  It sleeps while no attach is in progress.  One timer serves one
 * inventory (the daemon's) or many (a fleet's nodes, fleet/): it ticks only
 * the inventories with an attach in progress. */
#ifndef FAKEHW_ATTACHER_H
#define FAKEHW_ATTACHER_H

#include <stddef.h>

#include "error.h"
#include "inventory.h"

struct attacher;

/* Starts the thread and registers it as inv's attach waker (so call it
 * before other threads use inv); inv must outlive it. */
struct attacher *attacher_start(struct live_inventory *inv, struct error *err);

/* The same for n inventories (n >= 1; the array is copied, the inventories
 * must outlive the timer). */
struct attacher *attacher_start_many(struct live_inventory *const *invs, size_t n,
                                     struct error *err);

/* Stops and joins the thread.  NULL is fine. */
void attacher_stop(struct attacher *a);

#endif
