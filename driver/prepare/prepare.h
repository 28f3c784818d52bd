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

#include "driver/prepare/prepare_types.h"
#include "error.h"

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
void prepare_for_each_device(struct prepare_state *st, prepared_device_fn fn, void *ctx);

#endif
