// SPDX-License-Identifier: Apache-2.0
/* The pool sync decision: given the ResourceSlices the API server has for
 * this driver and node and the slices the pool should have (slice_builder),
 * which to update, create and delete, and at which pool generation.  Pure:
 * the publisher thread (slice_publisher.h) does the API calls.
 *
 * Rules (those of the Go helper's resourceslice controller, v0.36, with the
 * differences marked):
 *  - Only slices with spec.driver == driver and spec.nodeName == node are
 *    looked at.  Those of another pool are stale: deleted.
 *  - G = the highest pool.generation among the pool's slices; slices below G
 *    are obsolete.
 *  - A slice matches desired slice i when its name starts with i's exact
 *    generateName (index prefix of the expected width, driver, node; the Go
 *    helper checks only the index).  Unmatched slices and second matches of
 *    one index are obsolete.
 *  - A matched slice is unchanged when its spec equals the desired one
 *    (taint timeAdded ignored; empty lists and maps equal missing ones;
 *    taints ignored altogether with ignore_taints) and its owner reference
 *    is ours.  When the desired spec has members the stored one lacks and
 *    nothing else differs, it is also unchanged if a dry-run update says
 *    the server would store what it has (would_store).
 *  - The generation stays G when there is nothing to create, at most one
 *    slice to update and (stricter than the Go helper) no obsolete slice at
 *    G, so a consumer never sees two slices of one generation that disagree;
 *    otherwise it becomes G + 1 and every matched slice is updated.
 *  - Updates keep the timeAdded of a taint that is still there (same key,
 *    value and effect), so a taint's age survives other changes.
 * Order of the API calls (different from the Go helper, which deletes first):
 * updates, then creates, then deletes.  Existing slices take the new
 * generation first so the devices they hold stay visible; new slices follow;
 * obsolete slices go last, when they are already below the pool's
 * generation (consumers ignore them), so the pool never looks empty and no
 * device disappears in between.
 *
 * Memory: slice_sync_run takes the desired slices one at a time from a
 * builder and hands each API call's object to a writer as soon as it is
 * decided, so a sync holds the LIST answer plus about one desired slice, not
 * the whole pool several times over.  Comparisons normalise on the fly (no
 * copies), and an update object shares the existing object's metadata
 * values and the desired spec instead of copying them.  slice_sync_plan is
 * the same run collected into lists (tests, small pools). */
#ifndef FAKEHW_DRIVER_SLICE_SYNC_H
#define FAKEHW_DRIVER_SLICE_SYNC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct slice_sync_input {
    const char *driver;
    const char *node;
    const char *node_uid;
    const json_t *existing; /* items of the LIST answer */
    const json_t *desired;  /* slice_build's slices (slice_sync_plan only) */
    bool ignore_taints;     /* the server drops taints and the policy keeps publishing */
    /* Specs the server stored differently from what was sent, as
     * [{"sent": spec, "stored": spec}] (may be NULL): a slice whose spec is
     * "stored" counts as equal to "sent", so a server that rewrites a field
     * does not make the publisher write the same slice again and again. */
    const json_t *equivalents;
    /* What the server would store for an update object, asked without
     * storing it (a dry run; may be NULL).  Asked only for a slice whose
     * desired spec differs from the stored one by nothing but members the
     * stored one lacks: a server that drops a field it does not serve (its
     * feature gate off) stored an earlier process's slice without it, and a
     * new process would otherwise write that slice once more (the
     * publisher asks until its first sync succeeded).  Fills
     * *stored_spec (a new reference) and returns 0, or returns -1 when it
     * cannot tell (the slice is then written). */
    int (*would_store)(void *ctx, const json_t *obj, json_t **stored_spec);
    void *would_store_ctx;
};

struct slice_sync_plan {
    int64_t generation;   /* the pool's generation after the sync */
    json_t *updates;      /* full objects to PUT (name and resourceVersion kept) */
    json_t *update_index; /* parallel to updates: desired slice index (integers) */
    json_t *creates;      /* full objects to POST */
    json_t *create_index; /* parallel to creates */
    json_t *deletes;      /* existing objects to DELETE (name, uid, resourceVersion) */
    size_t unchanged;     /* matched slices left alone */
};

int slice_sync_plan(const struct slice_sync_input *in, struct slice_sync_plan *plan,
                    struct error *err);

void slice_sync_plan_free(struct slice_sync_plan *plan);

/* True when nothing is to be done. */
bool slice_sync_plan_empty(const struct slice_sync_plan *plan);

enum slice_sync_op { SLICE_SYNC_UPDATE, SLICE_SYNC_CREATE, SLICE_SYNC_DELETE };

/* Builds desired slice index (of n_slices) as a new reference the run may
 * change (it sets the generation and taint times); NULL with err. */
typedef json_t *(*slice_sync_build_fn)(void *ctx, size_t index, struct error *err);

/* Carries out one call: obj is the full object to PUT or POST, or the
 * existing object to DELETE; index is the desired slice's (0 for a delete).
 * obj is lent for the call (take a reference to keep any part of it).
 * Returns 0 to go on, 1 to stop the run (re-read and re-plan), -1 with err to
 * fail it. */
typedef int (*slice_sync_write_fn)(void *ctx, enum slice_sync_op op, size_t index,
                                   const json_t *obj, struct error *err);

struct slice_sync_summary {
    int64_t generation; /* the pool's generation after the sync */
    size_t updates, creates, deletes, unchanged;
};

/* Plans and carries out the sync slice by slice: the pool's n_slices desired
 * slices come from build_fn (in->desired is not used), every call goes to
 * write_fn, in the order above.  Returns 0 when every call was made, 1 when
 * write_fn stopped the run, -1 with err (out of memory, build or write
 * failed).  *sum counts the calls made. */
int slice_sync_run(const struct slice_sync_input *in, size_t n_slices, slice_sync_build_fn build_fn,
                   slice_sync_write_fn write_fn, void *ctx, struct slice_sync_summary *sum,
                   struct error *err);

/* Compares two slice specs the way the plan does: nulls, empty lists and
 * empty maps equal missing fields, taint timeAdded is ignored, and so are
 * taints altogether with ignore_taints. */
bool slice_spec_equal(const json_t *a, const json_t *b, bool ignore_taints);

/* Compares the devices lists of two slices the way the plan does. */
bool slice_devices_equal(const json_t *a, const json_t *b, bool ignore_taints);

/* True when a desired device carries a taint that the same device in
 * returned (the object the server answered a create or update with) lacks:
 * the server dropped the field (DRADeviceTaints off). */
bool slice_taints_dropped(const json_t *desired_slice, const json_t *returned_slice);

/* obj[a][b] (obj[a] when b is NULL) when it is a string, else NULL: the
 * fields of a slice or an event object that the publishers read. */
const char *slice_json_string(const json_t *obj, const char *a, const char *b);

#endif
