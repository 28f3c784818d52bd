// SPDX-License-Identifier: Apache-2.0
/* Removes unprepared claims' files (the claim CDI spec, the metadata CDI
 * specs, then the metadata directory) after the answer.
 *
 * Each is a directory operation: on a disk each can wait for a journal
 * commit, and in the CDI root each wakes the container runtime, which
 * re-reads the directory (containerd's CDI cache).  Done before the answer,
 * that re-read competes for the CPUs with the kubelet waking up to read the
 * answer, and the kubelet's NodeUnprepareResources lasts longer by as much
 * (docs/benchmarks.md).  Nothing needs the files gone before the answer:
 * the kubelet starts no container with an unprepared claim, and the CDI ids
 * in them name the claim's uid, which no other claim has.  So unprepare
 * queues them here and a thread removes them CLAIM_REAPER_DELAY_MS later.
 *
 * A prepare of the same claim (same uid), or of another claim with the same
 * namespace and name (same metadata directory), writes the same files, so
 * it first takes them back (claim_reaper_reclaim), which removes them at
 * once if they are still queued and waits if the thread is removing them.
 * Files still queued when the plugin dies are files no claim owns: the next
 * start sweeps them. */
#ifndef FAKEHW_PREPARE_CLAIM_REAPER_H
#define FAKEHW_PREPARE_CLAIM_REAPER_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#define CLAIM_REAPER_DELAY_MS 50

struct claim_reaper;

/* root: the metadata root (<plugin dir>/dra-device-metadata); copied. */
struct claim_reaper *claim_reaper_start(const char *root, struct error *err);

/* Queues, for the claim uid, the files (absolute paths, n of them, removed
 * in this order; copied) and then <root>/<dirname> (when not NULL) for
 * removal; returns at once, without waking the thread (claim_reaper_kick
 * does, after the answer). */
void claim_reaper_add(struct claim_reaper *r, const char *uid, const char *dirname,
                      const char *const *files, size_t n);

/* Wakes the thread when something is queued. */
void claim_reaper_kick(struct claim_reaper *r);

/* Makes sure no removal queued for uid or for <root>/<dirname> (when not
 * NULL) is queued or running: a queued one is done now, on this thread (its
 * error in err), a running one is waited for.  0, or -1 with err. */
int claim_reaper_reclaim(struct claim_reaper *r, const char *uid, const char *dirname,
                         struct error *err);

/* Wakes the thread, then waits until the queue is empty and nothing is
 * being removed. */
void claim_reaper_wait_idle(struct claim_reaper *r);

/* Removes what is still queued, stops the thread, frees.  NULL is fine. */
void claim_reaper_stop(struct claim_reaper *r);

#endif
