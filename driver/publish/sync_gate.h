// SPDX-License-Identifier: Apache-2.0
/* The sync gate: a counting semaphore that many slice publishers share
 * (slice_publisher_options.gate), so that at most `slots` of their pools
 * talk to the API server at once.  The fleet runs thousands of publishers
 * from one process; unbounded, each sync is a connection of its own and
 * the API server sees them all at once.
 *
 * Slots are handed out in the order they were asked for (a queue, each
 * waiter woken alone): a pool that syncs often does not overtake one that
 * waits, and a freed slot wakes one thread, not every waiter.  A waiter
 * gives up when the flag it waits with is set and sync_gate_wake names it
 * (a publisher that is stopping). */
#ifndef FAKEHW_DRIVER_SYNC_GATE_H
#define FAKEHW_DRIVER_SYNC_GATE_H

#include <stdatomic.h>
#include <stdbool.h>

struct sync_gate;

/* A gate of slots slots (at least 1); NULL when out of memory or slots 0. */
struct sync_gate *sync_gate_new(unsigned slots);

/* Waits for a slot (true: held, give it back with sync_gate_leave), or
 * until *abort is set and sync_gate_wake(g, abort) called (false: none
 * held).  A NULL g is no limit: true at once. */
bool sync_gate_enter(struct sync_gate *g, const atomic_bool *abort);

/* Gives a slot back.  NULL g is fine. */
void sync_gate_leave(struct sync_gate *g);

/* After setting *abort: wakes the waiter that waits with it, if any.  NULL
 * g is fine. */
void sync_gate_wake(struct sync_gate *g, const atomic_bool *abort);

/* The most slots that were held at once so far. */
unsigned sync_gate_peak(struct sync_gate *g);

/* How many threads wait for a slot now. */
unsigned sync_gate_waiting(struct sync_gate *g);

/* Frees a gate no one waits on or holds.  NULL is fine. */
void sync_gate_free(struct sync_gate *g);

#endif
