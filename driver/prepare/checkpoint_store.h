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
 * the caller keeps in memory never runs ahead of the disk (except by the
 * lazy changes below), nor behind a snapshot.
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
 * compacts first, so no doubtful byte stays in the journal.
 *
 * Two modes of append:
 *   durable (checkpoint_store_append): returns once the line is durable,
 *     after its change was applied;
 *   lazy (checkpoint_store_append_lazy): for a change that recovery can
 *     work out by itself when its line is lost.  The line is written now
 *     and the change applied at once, without waiting for the disk; a crash
 *     of the process keeps it, a crash of the machine within
 *     CHECKPOINT_LAZY_SYNC_MS of the next kick may lose it.
 * Every line is written before its call returns, in the order of the calls,
 * so a claim's lines stay in order.  The store's thread makes the lazy lines
 * durable CHECKPOINT_LAZY_SYNC_MS after checkpoint_store_kick, with one
 * fdatasync (shared with any append running then; a durable append's
 * fdatasync covers the lazy lines written before it too).  After a failed
 * sync of lazy lines the thread compacts at once: their changes are applied
 * already, and the snapshot is where they become durable.
 *
 * Shared mode (checkpoint_store_share), for a rolling update: two plugin
 * processes keep the same files, each writing them only while it holds
 * <dir>/serialize.lock (serialize_lock.h), around every append and
 * compaction.  At the start of each such section the caller asks
 * checkpoint_store_changed whether the other process wrote since this store
 * last wrote or loaded the files (the snapshot's and the journal's inode,
 * size and times), and if so loads them again and reports it with
 * checkpoint_store_loaded.  The store's thread then only syncs: it neither
 * compacts nor cuts the journal, which would need the lock; a lazy append
 * compacts past the bound itself, and a failed sync is cut off by a
 * compaction under the lock. */
#ifndef FAKEHW_PREPARE_CHECKPOINT_STORE_H
#define FAKEHW_PREPARE_CHECKPOINT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define CHECKPOINT_JOURNAL_MAX_LINES 1024
#define CHECKPOINT_JOURNAL_MAX_BYTES (1 << 20)
/* How long after checkpoint_store_kick the store's thread makes the lazy
 * lines durable. */
#define CHECKPOINT_LAZY_SYNC_MS 20

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

/* Writes line now and applies the change at once; the store's thread makes
 * it durable CHECKPOINT_LAZY_SYNC_MS after checkpoint_store_kick (or the
 * fdatasync of a durable append does, sooner).  A crash of the process
 * keeps the line (it is in the kernel); a crash of the machine in that
 * window may lose it, so the change must be one recovery works out by
 * itself when it is lost.  -1 with err when it could not be written; apply
 * was then not called. */
int checkpoint_store_append_lazy(struct checkpoint_store *s, const char *line, size_t len,
                                 checkpoint_apply_fn apply, void *apply_ctx, struct error *err);

/* Compacts now (a clean shutdown leaves an empty journal). */
int checkpoint_store_compact(struct checkpoint_store *s, struct error *err);

/* Switches s to shared mode; before any append. */
void checkpoint_store_share(struct checkpoint_store *s);

/* Shared mode: have the files changed since this store last wrote or
 * loaded them?  A file that cannot be stat'ed counts as changed. */
bool checkpoint_store_changed(struct checkpoint_store *s);

/* Shared mode: the caller loaded the files again, finding lines good
 * journal lines and, when torn, a torn last one (dropped).  Takes the
 * journal again if it was replaced (moved aside by a recovery), counts the
 * journal anew, and compacts before the next append when torn.  -1 with
 * err when the journal cannot be opened. */
int checkpoint_store_loaded(struct checkpoint_store *s, size_t lines, bool torn, struct error *err);

/* Journal lines since the last compaction (for tests). */
size_t checkpoint_store_lines(struct checkpoint_store *s);

/* Wakes the store's thread when lazy lines wait for it. */
void checkpoint_store_kick(struct checkpoint_store *s);

/* Waits until the lazy lines are durable (or their sync failed) and no
 * compaction runs. */
void checkpoint_store_wait_idle(struct checkpoint_store *s);

/* No append may be in flight.  Stops the store's sync thread (which makes
 * the lazy lines durable first). */
void checkpoint_store_close(struct checkpoint_store *s);

#endif
