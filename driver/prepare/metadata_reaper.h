// SPDX-License-Identifier: Apache-2.0
/* Removes unprepared claims' device metadata (metadata CDI specs, then the
 * metadata directory) after the answer.
 *
 * Each is a directory operation: on a disk each can wait for a journal
 * commit, and in the CDI root each wakes the container runtime, which
 * re-reads the directory while the next operation waits for it.  The
 * kubelet's NodeUnprepareResources would wait with them.  Nothing needs
 * them gone before the answer: the claim spec, removed before it, is what
 * gave a container the metadata spec's CDI ID, and that spec the only way
 * into the directory.  So unprepare queues them here and a thread removes
 * them METADATA_REAPER_DELAY_MS later.
 *
 * A prepare of another claim with the same namespace and name writes to the
 * same directory, so it first takes the directory back
 * (metadata_reaper_reclaim), which removes it at once if it is still queued
 * and waits if the thread is removing it.  A directory still queued when the
 * plugin dies is one no claim owns: the next start sweeps it. */
#ifndef FAKEHW_PREPARE_METADATA_REAPER_H
#define FAKEHW_PREPARE_METADATA_REAPER_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#define METADATA_REAPER_DELAY_MS 50

struct metadata_reaper;

/* root: the metadata root (<plugin dir>/dra-device-metadata); copied. */
struct metadata_reaper *metadata_reaper_start(const char *root, struct error *err);

/* Queues the files (absolute paths, n of them; copied) and then
 * <root>/<dirname> (when not NULL) for removal; returns at once, without
 * waking the thread (metadata_reaper_kick does, after the answer). */
void metadata_reaper_add(struct metadata_reaper *r, const char *dirname, const char *const *files,
                         size_t n);

/* Wakes the thread when something is queued. */
void metadata_reaper_kick(struct metadata_reaper *r);

/* Makes sure no removal of <root>/<dirname> is queued or running: a queued
 * one is done now, on this thread (its error in err), a running one is
 * waited for.  0, or -1 with err. */
int metadata_reaper_reclaim(struct metadata_reaper *r, const char *dirname, struct error *err);

/* Wakes the thread, then waits until the queue is empty and nothing is
 * being removed. */
void metadata_reaper_wait_idle(struct metadata_reaper *r);

/* Removes what is still queued, stops the thread, frees.  NULL is fine. */
void metadata_reaper_stop(struct metadata_reaper *r);

#endif
