// SPDX-License-Identifier: Apache-2.0
/* Internals of the prepare state shared by prepare.c (the prepare and
 * unprepare flows), prepare_plan.c (what a claim's prepare writes and
 * answers) and prepare_recovery.c (startup: rollback, rebuild, sweep). */
#ifndef FAKEHW_PREPARE_PREPARE_STATE_H
#define FAKEHW_PREPARE_PREPARE_STATE_H

#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>

#include "cdi_spec.h"
#include "checkpoint_journal.h"
#include "claim_record.h"
#include "driver/prepare/prepare_types.h"
#include "k8s_names.h"
#include "claim_reaper.h"

struct busy_uid {
    char uid[K8S_UID_LEN + 1];
    struct busy_uid *next;
};

struct prepare_state {
    struct prepare_config cfg;
    char claim_kind[CDI_NAME_MAX];    /* k8s.<driver>/gpu */
    char metadata_kind[CDI_NAME_MAX]; /* <driver>/metadata */
    char checkpoint_path[PATH_MAX];   /* <plugin dir>/checkpoint.json */
    char journal_path[PATH_MAX];      /* <plugin dir>/checkpoint.journal */
    char metadata_root[PATH_MAX];     /* <plugin dir>/dra-device-metadata */
    char lock_path[PATH_MAX];         /* <plugin dir>/serialize.lock (cfg.shared) */

    /* Durable changes, in order; NULL until recovery is done.  Its lock is
     * taken before lock, never after. */
    struct checkpoint_store *store;
    pthread_mutex_t lock; /* claims and busy */
    pthread_cond_t idle;  /* a uid left busy */
    /* The claims by uid.  PrepareCompleted: in the checkpoint (its journal
     * line is durable).  PrepareStarted: a prepare in flight, or one whose
     * rollback could not remove its files; only in memory.  A record is
     * replaced or removed only by the thread that holds its uid (busy), so
     * that thread may read it without the lock. */
    struct claim_records claims;
    struct busy_uid *busy; /* uids being prepared or unprepared */
    /* Removes unprepared claims' files after the answer; NULL until
     * recovery is done (recovery removes at once). */
    struct claim_reaper *reaper;
};

/* A file prepare writes. */
struct plan_file {
    char *path;
    char *text;
    bool make_parent; /* metadata files live in per-request directories */
    /* Created without a rename, which would make a container runtime's CDI
     * cache re-read the CDI root: the metadata specs, which the claim
     * spec's rename, last, brings in with it. */
    bool quiet;
};

/* Everything one claim's prepare writes and answers, computed before
 * anything is written. */
struct prepare_plan {
    struct claim_record *record; /* state PrepareStarted */
    struct plan_file *files;
    size_t n_files; /* in write order: metadata files, metadata specs, claim spec */
    struct prepared_claim answer;
};

int prepare_plan_build(const struct prepare_state *st, const struct claim_ref *ref,
                       const json_t *claim, struct prepare_plan *plan, struct error *err);
void prepare_plan_free(struct prepare_plan *plan);

/* Loads the snapshot and replays the journal onto it (*r says what the
 * replay found), then turns the JSON into claim records: the one place a
 * checkpoint is read.  0 with records filled, 1 when there is no
 * checkpoint, -1 with *corrupt set when it is corrupt (err names the file
 * and the fault), -1 with *corrupt clear on an I/O error. */
int prepare_load_checkpoint(const struct prepare_state *st, struct claim_records *records,
                            struct checkpoint_journal_replay *r, int *corrupt, struct error *err);

/* Rolling update (cfg.shared): every prepare, unprepare, the start-up
 * recovery and the compaction at close run between these two, holding
 * <plugin dir>/serialize.lock; enter loads the checkpoint again when the
 * other instance changed it (prepare_shared.c).  Without cfg.shared they do
 * nothing.  enter: 0 with *lock to hand to leave, or -1 with err and no
 * lock held. */
int prepare_shared_enter(struct prepare_state *st, int *lock, struct error *err);
void prepare_shared_leave(struct prepare_state *st, int lock);

/* Startup, before the state is shared: loads the checkpoint (snapshot and
 * journal) or rebuilds the claims from the CDI specs, rolls back
 * PrepareStarted claims, drops claims with a missing file, and removes files
 * of this driver that no claim owns.  Fills st->claims (the checkpoint's
 * JSON is converted to claim records here); opening the store afterwards
 * writes it. */
int prepare_recover(struct prepare_state *st, struct error *err);

#endif
