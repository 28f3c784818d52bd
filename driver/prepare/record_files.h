// SPDX-License-Identifier: Apache-2.0
/* The files of a claim record (claim_record.h), as the prepare state places
 * them (claim_files.h names them): written from a prepare's plan, checked
 * when a claim is answered from the checkpoint or recovered, removed when
 * it is unprepared, rolled back or dropped.  Used by the prepare flows
 * (prepare.c) and the start-up recovery (prepare_recovery.c). */
#ifndef FAKEHW_PREPARE_RECORD_FILES_H
#define FAKEHW_PREPARE_RECORD_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "claim_record.h"
#include "error.h"
#include "prepare_state.h"

/* Writes a plan's files in order (plan->files: metadata files, metadata
 * specs, the claim spec last).  Derived data: atomic for readers, but no
 * fsync. */
int record_files_write(const struct prepare_state *st, const struct prepare_plan *plan,
                       struct error *err);

/* Is a file of the record missing (or empty)?  Returns true and names it in
 * path; false when its CDI specs and metadata files are all there.  One
 * stat per file. */
bool record_files_missing(const struct prepare_state *st, const struct claim_record *rec,
                          char *path, size_t size);

/* Removes the CDI specs of rec (claim spec first: a runtime stops seeing the
 * claim at once) and its metadata directory: all before it returns (now),
 * or all through the reaper, after the answer (claim_reaper.h). */
int record_files_remove(const struct prepare_state *st, const struct claim_record *rec, bool now,
                        struct error *err);

#endif
