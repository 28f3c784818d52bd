// SPDX-License-Identifier: Apache-2.0
/* The prepare state shared by two plugin instances during a rolling update
 * (prepare_config.shared).  The kubelet may prepare a claim through one
 * instance and unprepare it through the other, so neither may trust what it
 * keeps in memory across calls: each call takes serialize.lock, loads the
 * checkpoint again when the other instance wrote it since (checkpoint_store.h,
 * shared mode), and leaves its change in the journal before it lets go. */
#include <stdlib.h>

#include "checkpoint_store.h"
#include "claim_record.h"
#include "log.h"
#include "prepare_state.h"
#include "serialize_lock.h"

/* Replaces the claims in memory with those on disk; a missing or corrupt
 * checkpoint is handled as at start-up (moved aside, rebuilt from the CDI
 * specs, swept), which no call of either instance can be in the middle of.
 * Called holding serialize.lock. */
static int reload(struct prepare_state *st, struct error *err)
{
    struct claim_records fresh = {0};
    struct checkpoint_journal_replay r;
    int corrupt = 0;
    int rc = prepare_load_checkpoint(st, &fresh, &r, &corrupt, err);
    if (rc == 0) {
        pthread_mutex_lock(&st->lock);
        struct claim_records old = st->claims;
        st->claims = fresh;
        pthread_mutex_unlock(&st->lock);
        claim_records_clear(&old);
        LOG_V(2, "prepare state: loaded %zu claim(s) written by another instance", fresh.n);
        return checkpoint_store_loaded(st->store, r.lines, r.torn_line > 0, err);
    }
    claim_records_clear(&fresh);
    if (rc < 0 && !corrupt)
        return -1;
    if (rc == 1)
        LOG_W("%s is gone; recovering the prepared claims as at start-up", st->checkpoint_path);
    /* Under st->lock: the claim-status writer reads the claims meanwhile. */
    pthread_mutex_lock(&st->lock);
    claim_records_clear(&st->claims);
    rc = prepare_recover(st, err);
    pthread_mutex_unlock(&st->lock);
    if (rc < 0 || checkpoint_store_loaded(st->store, 0, false, err) < 0)
        return -1;
    return checkpoint_store_compact(st->store, err);
}

int prepare_shared_enter(struct prepare_state *st, int *lock, struct error *err)
{
    *lock = -1;
    if (!st->cfg.shared)
        return 0;
    *lock = serialize_lock_acquire(st->lock_path, err);
    if (*lock < 0)
        return -1;
    /* No store yet: the start-up recovery reads everything anyway. */
    if (st->store == NULL || !checkpoint_store_changed(st->store))
        return 0;
    if (reload(st, err) < 0) {
        serialize_lock_release(*lock);
        *lock = -1;
        return error_prefix(err, "loading the checkpoint another instance wrote");
    }
    return 0;
}

void prepare_shared_leave(struct prepare_state *st, int lock)
{
    (void)st;
    serialize_lock_release(lock);
}
