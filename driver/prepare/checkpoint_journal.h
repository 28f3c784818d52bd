// SPDX-License-Identifier: Apache-2.0
/* The checkpoint journal: the changes made since checkpoint.json (the
 * snapshot, checkpoint.h) was written, one line each, appended in order:
 *
 *   <plugin dir>/checkpoint.journal
 *   crc32:<8 hex digits> <JSON>\n
 *   JSON = {"op":"prepared","record":RECORD,"uid":"<uid>"}   the claim is prepared
 *        | {"op":"unprepared","uid":"<uid>"}                 the claim is gone
 *
 * The JSON is compact with sorted keys (no newline can occur in it); the CRC
 * (IEEE) covers exactly its bytes.  RECORD is a checkpoint record (checkpoint.h)
 * in state PrepareCompleted.
 *
 * Replaying a journal onto its snapshot gives the state: "prepared" sets the
 * uid's record, "unprepared" deletes it.  Replay is idempotent, and replaying
 * it onto a newer snapshot (one written after these lines, when a compaction
 * stopped before it emptied the journal) gives that snapshot's state again.
 *
 * A line is written with one write(2) and made durable before the change is
 * answered, so only the last line can be torn, by a crash during its append,
 * and that change was never answered: a last line without its newline or
 * whose checksum does not match is dropped.  Any other bad line is
 * corruption, reported with the line number. */
#ifndef FAKEHW_PREPARE_CHECKPOINT_JOURNAL_H
#define FAKEHW_PREPARE_CHECKPOINT_JOURNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#define CHECKPOINT_JOURNAL_FILE  "checkpoint.journal"
#define CHECKPOINT_OP_PREPARED   "prepared"
#define CHECKPOINT_OP_UNPREPARED "unprepared"

/* The line of one change, newline included: record (state PrepareCompleted)
 * for "prepared", NULL for "unprepared".  Caller frees; *len is its length. */
char *checkpoint_journal_line(const char *uid, const json_t *record, size_t *len,
                              struct error *err);

/* What a replay found besides the changes it applied. */
struct checkpoint_journal_replay {
    size_t lines;     /* good lines applied */
    size_t kept;      /* bytes of those lines: the journal without a torn tail */
    size_t torn_line; /* line number of a dropped torn last line, 0 = none */
    char torn_why[ERROR_MSG_MAX];
};

/* Applies the journal text (len bytes) to claims (object uid -> record),
 * checking every record against driver's naming rules.  Returns 0 and fills
 * *r, or -1 with err ("line 3: checksum mismatch: ...") on corruption; claims
 * is then partly updated and must be discarded. */
int checkpoint_journal_replay(const char *text, size_t len, const char *driver, json_t *claims,
                              struct checkpoint_journal_replay *r, struct error *err);

/* Reads path and replays it onto claims.  Returns 0, 1 when the file does not
 * exist, -1 with *corrupt set when the content is bad (err starts with the
 * path), -1 with *corrupt clear when it could not be read. */
int checkpoint_journal_load(const char *path, const char *driver, json_t *claims,
                            struct checkpoint_journal_replay *r, int *corrupt, struct error *err);

#endif
