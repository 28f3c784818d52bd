// SPDX-License-Identifier: Apache-2.0
/* The durable checkpoint at run time: checkpoint.json (the snapshot,
 * checkpoint.h) and checkpoint.journal (the changes since, checkpoint_journal.h)
 * in one directory.
 *
 * A change is one line appended to the journal with one write(2) on an
 * O_APPEND descriptor, then fdatasync: no rename, no directory fsync.
 * Appends from several threads share their fdatasync (group commit): lines
 * written while one fdatasync runs are covered by the next one, which one of
 * their writers makes for all of them.  Each change's apply callback runs
 * once its line is durable, before any compaction can start, so the state
 * the caller keeps in memory never runs ahead of the disk by a change that
 * could be lost, nor behind a snapshot.
 *
 * Compaction: when the journal holds more than max_lines lines or max_bytes
 * bytes, the snapshot callback's text replaces checkpoint.json atomically
 * (atomic_write_file), then the journal is truncated (ftruncate + fsync).  A
 * crash between the two leaves the old lines with the new snapshot, and
 * replaying them onto it is harmless (replay is idempotent).  Opening the
 * store compacts at once.
 *
 * After a failed append (short write, failed fdatasync) the lines not known
 * to be durable are cut off again and their changes fail; the next append
 * compacts first, so no doubtful byte stays in the journal. */
#ifndef FAKEHW_PREPARE_CHECKPOINT_STORE_H
#define FAKEHW_PREPARE_CHECKPOINT_STORE_H

#include <stddef.h>

#include "error.h"

#define CHECKPOINT_JOURNAL_MAX_LINES 1024
#define CHECKPOINT_JOURNAL_MAX_BYTES (1 << 20)

/* Returns the text of checkpoint.json for the current state (caller frees),
 * or NULL with err.  Called with the store's lock held. */
typedef char *(*checkpoint_snapshot_fn)(void *ctx, struct error *err);
/* Applies a change to the caller's state once its line is durable.  Called
 * with the store's lock held; must not call back into the store. */
typedef void (*checkpoint_apply_fn)(void *ctx);

struct checkpoint_store;

/* Opens (or creates, then fsyncs dir once) dir/checkpoint.journal and
 * compacts: the snapshot callback's text becomes dir/checkpoint.json and the
 * journal is emptied.  max_lines, max_bytes: the compaction bound (0 = the
 * defaults above).  NULL with err. */
struct checkpoint_store *checkpoint_store_open(const char *dir, size_t max_lines, size_t max_bytes,
                                               checkpoint_snapshot_fn snapshot, void *ctx,
                                               struct error *err);

/* Appends line (len bytes, newline included) and returns once it is
 * durable, after apply(apply_ctx) ran (apply may be NULL).  -1 with err when
 * it could not be made durable; apply was then not called. */
int checkpoint_store_append(struct checkpoint_store *s, const char *line, size_t len,
                            checkpoint_apply_fn apply, void *apply_ctx, struct error *err);

/* Compacts now (a clean shutdown leaves an empty journal). */
int checkpoint_store_compact(struct checkpoint_store *s, struct error *err);

/* Journal lines since the last compaction (for tests). */
size_t checkpoint_store_lines(struct checkpoint_store *s);

/* No append may be in flight. */
void checkpoint_store_close(struct checkpoint_store *s);

#endif
