// SPDX-License-Identifier: Apache-2.0
/* The claim record: one claim this driver prepared (or is preparing), typed.
 * It is what the prepare state keeps per claim uid; JSON appears only at the
 * checkpoint boundary, where claim_record_to_json and claim_record_from_json
 * convert to and from the RECORD of checkpoint.h (same fields, same meaning):
 *
 *   uid, namespace, name   ->  uid, ns, name
 *   state                  ->  state (enum claim_state)
 *   devices                ->  devices (struct prepared_claim, the answer)
 *   cdiSpecs               ->  cdi_specs
 *   metadataDir            ->  metadata_dir (NULL when absent)
 *   (none)                 ->  holds (in memory only)
 *
 * struct claim_records is the set of them, keyed by uid. */
#ifndef FAKEHW_PREPARE_CLAIM_RECORD_H
#define FAKEHW_PREPARE_CLAIM_RECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "cleanup.h"
#include "driver/prepare/prepare_types.h"
#include "error.h"

enum claim_state {
    CLAIM_PREPARE_STARTED,   /* files being written; only in memory */
    CLAIM_PREPARE_COMPLETED, /* its journal line is durable */
};

struct device_hold;

struct claim_record {
    char *uid, *ns, *name;
    enum claim_state state;
    struct prepared_claim devices; /* the prepare answer */
    char **cdi_specs;              /* file names in the CDI root, in write order */
    size_t n_cdi_specs;
    char *metadata_dir; /* "<ns>_<name>" below the metadata root; NULL = none */
    /* What its devices hold of their GPUs, one per device, for the checks
     * of later prepares (allocation_checks.h).  In memory only: NULL for a
     * record read from the checkpoint, which keeps neither MIG placements
     * nor adminAccess. */
    struct device_hold *holds;
    size_t n_holds;
};

/* A new record of the claim with no device and no file. */
struct claim_record *claim_record_new(const struct claim_ref *claim, enum claim_state state);
void claim_record_free(struct claim_record *r);
CLEANUP_FUNC(struct claim_record, claim_record_free)
#define cleanup_claim_record __attribute__((cleanup(claim_record_freep)))

/* The reference borrows the record's strings. */
struct claim_ref claim_record_ref(const struct claim_record *r);
/* Does the record name this claim (namespace and name)? */
bool claim_record_names(const struct claim_record *r, const char *ns, const char *name);

void claim_record_add_spec(struct claim_record *r, const char *spec_name);
bool claim_record_lists_spec(const struct claim_record *r, const char *spec_name);
void claim_record_set_metadata_dir(struct claim_record *r, const char *dirname);

/* "PrepareStarted" / "PrepareCompleted", the checkpoint's names. */
const char *claim_state_name(enum claim_state s);

/* The checkpoint RECORD; NULL when jansson is out of memory. */
json_t *claim_record_to_json(const struct claim_record *r);
/* From a RECORD that checkpoint_check_record accepted (it is checked again
 * here only as far as the conversion needs).  -1 with err naming the field. */
int claim_record_from_json(const char *uid, const json_t *rec, struct claim_record **out,
                           struct error *err);

struct claim_records {
    struct claim_record **v; /* insertion order */
    size_t n, cap;
};

struct claim_record *claim_records_find(const struct claim_records *t, const char *uid);
/* Takes r; a record of the same uid is freed. */
void claim_records_put(struct claim_records *t, struct claim_record *r);
/* Frees the uid's record, if any. */
void claim_records_remove(struct claim_records *t, const char *uid);
void claim_records_clear(struct claim_records *t);

/* The checkpoint's claims object (uid -> RECORD) of the records, only those
 * PrepareCompleted when completed_only.  NULL when out of memory. */
json_t *claim_records_to_json(const struct claim_records *t, bool completed_only);
/* Replaces t with the records of a checkpoint's claims object. */
int claim_records_from_json(const json_t *claims, struct claim_records *t, struct error *err);

#endif
