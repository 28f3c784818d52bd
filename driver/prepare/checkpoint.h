// SPDX-License-Identifier: Apache-2.0
/* The checkpoint snapshot: every claim this driver prepared, so a restarted
 * plugin answers repeated prepares the same and still cleans up on unprepare.
 * The changes made since it was written are in checkpoint.journal next to it
 * (checkpoint_journal.h); checkpoint_store.h writes both.
 *
 *   <plugin dir>/checkpoint.json
 *   {
 *     "checksum": "crc32:1a2b3c4d",   CRC-32 (IEEE) of the canonical claims JSON:
 *                                     compact, keys sorted (jansson JSON_COMPACT|JSON_SORT_KEYS)
 *     "claims": {"<uid>": RECORD, ...},
 *     "version": 1
 *   }
 *   RECORD = {
 *     "uid", "namespace", "name",
 *     "state": "PrepareCompleted" | "PrepareStarted" (only in files written
 *              before the journal: such claims are rolled back at start-up),
 *     "devices": [...],          the prepare answer (prepared_claim.h)
 *     "cdiSpecs": ["k8s.<driver>-gpu_<uid>.json", "<driver>_metadata_<uid>_<req>.json", ...],
 *     "metadataDir": "<ns>_<name>"   only when metadata files were written
 *   }
 *
 * Written with atomic_write_file (temp file, fsync, rename, fsync of the
 * directory).  Decoding is strict: anything but exactly this is corrupt, and
 * the error says what (bad JSON with line and column, unknown version,
 * checksum mismatch, a bad record field). */
#ifndef FAKEHW_PREPARE_CHECKPOINT_H
#define FAKEHW_PREPARE_CHECKPOINT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define CHECKPOINT_FILE    "checkpoint.json"
#define CHECKPOINT_VERSION 1

#define CHECKPOINT_STARTED   "PrepareStarted"
#define CHECKPOINT_COMPLETED "PrepareCompleted"

uint32_t checkpoint_crc32(const void *data, size_t len);

/* The file text for claims (object uid -> record).  Caller frees. */
char *checkpoint_encode(const json_t *claims, struct error *err);

/* Decodes and checks file text; every record is checked against driver's
 * naming rules.  Returns 0 with *claims (new reference) or -1 with err. */
int checkpoint_decode(const char *text, size_t len, const char *driver, json_t **claims,
                      struct error *err);

/* Checks one record (also used for records rebuilt from CDI specs). */
int checkpoint_check_record(const char *driver, const char *uid, const json_t *rec,
                            struct error *err);

/* Reads a whole checkpoint file (snapshot or journal).  Returns 0 with
 * *text (NUL-terminated, caller frees) and *len, 1 when the file does not
 * exist, -1 with *corrupt set when it is larger than any checkpoint can be,
 * -1 with *corrupt clear when it could not be read. */
int checkpoint_read_file(const char *path, char **text, size_t *len, int *corrupt,
                         struct error *err);

/* Reads path.  Returns 0 with *claims, 1 when the file does not exist, -1
 * with *corrupt set when the content is bad (err says what), -1 with
 * *corrupt clear when it could not be read. */
int checkpoint_load(const char *path, const char *driver, json_t **claims, int *corrupt,
                    struct error *err);

/* Replaces the file at path with text (from checkpoint_encode), atomically. */
int checkpoint_write(const char *path, const char *text, struct error *err);

#endif
