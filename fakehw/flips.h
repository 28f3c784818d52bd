// SPDX-License-Identifier: Apache-2.0
/* Scheduled health flips: the config's `flips` turned into timed events
 * and a thread that applies them to the inventory.
 *
 * A flip {device, after, state, xid, for, reason} is one event at `after`
 * (device -> state, with reason; the XID reported) and, with `for`, a
 * second one at after + for (device -> the other state, reason cleared; the
 * XID cleared).  A flip without a state leaves health alone, one without an
 * XID the XID.  Times count from when the scheduler started or was last
 * given new flips (a reload). */
#ifndef FAKEHW_FLIPS_H
#define FAKEHW_FLIPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "error.h"
#include "inventory.h"

struct flip_event {
    int64_t at_ms;                /* since the schedule started */
    char device[FAKEHW_NAME_MAX]; /* or FLIP_ALL_DEVICES */
    bool has_state;               /* set health to healthy, with reason */
    bool healthy;
    char reason[FAKEHW_REASON_MAX];
    long xid; /* FLIP_XID_KEEP, 0 (clear) or the XID to report */
};

#define FLIP_XID_KEEP (-1)

/* Expands flips into events sorted by time (ties keep config order, a
 * flip's own return after it).  The caller frees *events. */
int flips_plan(const struct flip *flips, size_t n, struct flip_event **events, size_t *nevents,
               struct error *err);

struct flip_scheduler;

/* Starts the scheduler thread on inv (which must outlive it). */
struct flip_scheduler *flip_scheduler_start(struct live_inventory *inv, const struct flip *flips,
                                            size_t n, struct error *err);

/* Drops the pending events and schedules flips from now. */
int flip_scheduler_replace(struct flip_scheduler *s, const struct flip *flips, size_t n,
                           struct error *err);

/* Events applied so far (for tests and logs). */
size_t flip_scheduler_applied(struct flip_scheduler *s);

/* Stops and joins the thread, frees everything.  NULL is fine. */
void flip_scheduler_stop(struct flip_scheduler *s);

#endif
