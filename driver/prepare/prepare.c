// SPDX-License-Identifier: Apache-2.0
/* The prepare and unprepare flows of prepare.h: per-claim serialisation,
 * the checkpoint protocol (files, then the journal line, then the answer),
 * the check that a claim answered from the checkpoint still has its files,
 * and rollback on failure. */
#include "driver/prepare/prepare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocation_checks.h"
#include "atomic_file.h"
#include "checkpoint.h"
#include "checkpoint_journal.h"
#include "checkpoint_store.h"
#include "claim_record.h"
#include "cleanup.h"
#include "device_metadata.h"
#include "log.h"
#include "prepare_state.h"
#include "prepare_trace.h"
#include "prepared_claim.h"
#include "record_files.h"
#include "serialize_lock.h"
#include "xalloc.h"

/* ---- per-claim serialisation ---- */

static void uid_acquire(struct prepare_state *st, const char *uid, struct busy_uid *slot)
{
    pthread_mutex_lock(&st->lock);
    for (;;) {
        struct busy_uid *b = st->busy;
        while (b && strcmp(b->uid, uid) != 0)
            b = b->next;
        if (b == NULL)
            break;
        pthread_cond_wait(&st->idle, &st->lock);
    }
    snprintf(slot->uid, sizeof(slot->uid), "%s", uid);
    slot->next = st->busy;
    st->busy = slot;
    pthread_mutex_unlock(&st->lock);
}

static void uid_release(struct prepare_state *st, struct busy_uid *slot)
{
    pthread_mutex_lock(&st->lock);
    struct busy_uid **p = &st->busy;
    while (*p != slot)
        p = &(*p)->next;
    *p = slot->next;
    pthread_cond_broadcast(&st->idle);
    pthread_mutex_unlock(&st->lock);
}

/* ---- checkpoint and files ---- */

/* The snapshot callback of the store: the claims in the checkpoint, i.e.
 * those in state PrepareCompleted (a PrepareStarted one is in flight).
 * Records become JSON here and in change_line, nowhere else. */
static char *snapshot_text(void *ctx, struct error *err)
{
    struct prepare_state *st = ctx;
    pthread_mutex_lock(&st->lock);
    json_auto_t *durable = claim_records_to_json(&st->claims, true);
    pthread_mutex_unlock(&st->lock);
    if (durable == NULL) {
        error_set(err, "checkpoint: out of memory");
        return NULL;
    }
    return checkpoint_encode(durable, err);
}

/* A change of st->claims, applied once its journal line is written (a
 * prepare's) or durable. */
struct change {
    struct prepare_state *st;
    const char *uid;
    struct claim_record *record; /* in st->claims, becomes PrepareCompleted; NULL = remove uid */
};

static void apply_change(void *ctx)
{
    const struct change *c = ctx;
    pthread_mutex_lock(&c->st->lock);
    if (c->record != NULL)
        c->record->state = CLAIM_PREPARE_COMPLETED;
    else
        claim_records_remove(&c->st->claims, c->uid);
    pthread_mutex_unlock(&c->st->lock);
}

/* The journal line of a change: record (as it will be, PrepareCompleted)
 * or, when NULL, the removal of uid. */
static char *change_line(const char *uid, const struct claim_record *record, size_t *len,
                         struct error *err)
{
    json_auto_t *completed = NULL;
    if (record != NULL) {
        struct claim_record done = *record; /* shallow: only the state differs */
        done.state = CLAIM_PREPARE_COMPLETED;
        if ((completed = claim_record_to_json(&done)) == NULL) {
            error_set(err, "out of memory");
            return NULL;
        }
    }
    return checkpoint_journal_line(uid, completed, len, err);
}

/* How a change's journal line is appended (checkpoint_store.h). */
enum journal_mode {
    /* Returns once the line is durable and the change applied. */
    JOURNAL_DURABLE,
    /* A prepare's or an unprepare's line: written before the answer (a
     * crash of the process keeps it) and made durable just after it
     * (prepare_after_answer).  The files are never synced, so what a crash
     * of the machine leaves is the recovery rule's either way: a claim
     * whose files are missing is dropped, files no claim owns are swept. */
    JOURNAL_LAZY,
};

/* Records a change in the checkpoint: record (in st->claims) is prepared, or
 * (NULL) uid is gone.  The caller holds uid, so the record does not change
 * under it.  Returns once the line is appended as mode says and the change
 * applied to st->claims; -1 with err and st->claims unchanged. */
static int journal(struct prepare_state *st, const char *uid, struct claim_record *record,
                   enum journal_mode mode, struct error *err)
{
    size_t len = 0;
    cleanup_free char *line = change_line(uid, record, &len, err);
    if (line == NULL)
        return -1;
    struct change c = {st, uid, record};
    return mode == JOURNAL_LAZY
               ? checkpoint_store_append_lazy(st->store, line, len, apply_change, &c, err)
               : checkpoint_store_append(st->store, line, len, apply_change, &c, err);
}

/* ---- prepare ---- */

/* Another uid with the same namespace/name would share the metadata
 * directory.  Lock held. */
static const char *same_name_uid(const struct prepare_state *st, const struct claim_ref *c)
{
    for (size_t i = 0; i < st->claims.n; i++) {
        const struct claim_record *rec = st->claims.v[i];
        if (strcmp(rec->uid, c->uid) != 0 && claim_record_names(rec, c->ns, c->name))
            return rec->uid;
    }
    return NULL;
}

/* The devices of rec against what the node's other claims hold
 * (allocation_checks.h): the records prepared, or being prepared, since
 * the start.  Lock held, so two prepares in parallel see each other. */
static int check_node_holds(const struct prepare_state *st, const struct claim_record *rec,
                            struct error *err)
{
    cleanup_free struct claim_holds *others = xcalloc(st->claims.n + 1, sizeof(*others));
    size_t n = 0;
    for (size_t i = 0; i < st->claims.n; i++) {
        const struct claim_record *o = st->claims.v[i];
        if (o->holds != NULL && strcmp(o->uid, rec->uid) != 0)
            others[n++] = (struct claim_holds){o->ns, o->name, o->uid, o->holds, o->n_holds};
    }
    const struct claim_holds mine = {NULL, NULL, NULL, rec->holds, rec->n_holds};
    return allocation_check_node(&mine, others, n, err);
}

/* Removes a claim's files, then its record: through the journal when it is
 * in the checkpoint, from memory only when it is not.  On failure the record
 * stays, so a retry (or the next start) cleans up.  for_unprepare: only
 * what the kubelet's answer needs happens before this returns, the journal
 * line written (JOURNAL_LAZY: a crash of the process keeps it, so no claim
 * comes back); the files go to the reaper, and the line is synced, right
 * after the answer.  The caller holds uid. */
static int drop_record(struct prepare_state *st, const char *uid, bool for_unprepare,
                       struct prepare_trace *tr, struct error *err)
{
    pthread_mutex_lock(&st->lock);
    const struct claim_record *rec = claim_records_find(&st->claims, uid);
    pthread_mutex_unlock(&st->lock);
    if (rec == NULL)
        return 0;
    bool durable = rec->state == CLAIM_PREPARE_COMPLETED;
    /* Shared: the other instance may prepare the claim again as soon as
     * the lock is free, so nothing may be left for after the answer. */
    int rc = record_files_remove(st, rec, !for_unprepare || st->cfg.shared, err);
    if (tr != NULL)
        prepare_trace_mark(tr, PREPARE_STEP_FILES);
    if (rc < 0)
        return -1;
    if (durable) {
        rc = journal(st, uid, NULL, for_unprepare ? JOURNAL_LAZY : JOURNAL_DURABLE, err);
        if (tr != NULL)
            prepare_trace_mark(tr, PREPARE_STEP_JOURNAL);
        return rc;
    }
    pthread_mutex_lock(&st->lock);
    claim_records_remove(&st->claims, uid);
    pthread_mutex_unlock(&st->lock);
    return 0;
}

/* Undoes a failed prepare (its record is PrepareStarted, only in memory).
 * A record whose files cannot be removed stays: never answered from,
 * dropped by the next prepare of the claim, and, since it is not in the
 * checkpoint, its files are swept at the next start. */
static void rollback(struct prepare_state *st, const char *uid)
{
    struct error e;
    if (drop_record(st, uid, false, NULL, &e) < 0)
        LOG_E("claim %s: rolling back a failed prepare: %s", uid, e.msg);
}

/* Answers from a PrepareCompleted record whose files are all there.
 * Returns 0 when answered, 1 when there is no such record (a record with a
 * missing file is dropped first, so the claim is prepared afresh), -1 with
 * err. */
static int answer_from_checkpoint(struct prepare_state *st, const struct claim_ref *c,
                                  struct prepared_claim *out, struct error *err)
{
    /* Only this thread changes this uid's record (it holds the uid). */
    pthread_mutex_lock(&st->lock);
    const struct claim_record *rec = claim_records_find(&st->claims, c->uid);
    pthread_mutex_unlock(&st->lock);
    if (rec == NULL || rec->state != CLAIM_PREPARE_COMPLETED)
        return 1;
    if (!claim_record_names(rec, c->ns, c->name))
        return error_set(err, "uid %s is already prepared for claim %s/%s", c->uid, rec->ns,
                         rec->name);
    char missing[PATH_MAX];
    if (!record_files_missing(st, rec, missing, sizeof(missing))) {
        prepared_claim_copy(&rec->devices, out);
        return 0;
    }
    LOG_W("claim %s/%s (uid %s): %s is missing or empty (lost in a reboot or a crash); "
          "preparing the claim afresh",
          c->ns, c->name, c->uid, missing);
    if (drop_record(st, c->uid, false, NULL, err) < 0)
        return error_prefix(err, "dropping the claim's remaining files");
    return 1;
}

#define cleanup_plan __attribute__((cleanup(prepare_plan_free)))

/* The claim from the API (the watch, else a GET) and what its prepare will
 * write and answer. */
static int plan_claim(struct prepare_state *st, const struct claim_ref *c,
                      struct prepare_plan *plan, struct prepare_trace *tr, struct error *err)
{
    json_auto_t *claim = NULL;
    if (st->cfg.fetch_claim(st->cfg.fetch_ctx, c, &claim, err) < 0)
        return -1;
    prepare_trace_mark(tr, PREPARE_STEP_CLAIM);
    int rc = prepare_plan_build(st, c, claim, plan, err);
    prepare_trace_mark(tr, PREPARE_STEP_PLAN);
    return rc;
}

/* Takes the plan's record into st->claims (PrepareStarted) unless another
 * uid of the name is still prepared or the node's other claims hold what
 * its devices need. */
static int admit_record(struct prepare_state *st, const struct claim_ref *c,
                        struct prepare_plan *plan, struct error *err)
{
    int rc = 0;
    pthread_mutex_lock(&st->lock);
    const char *other = same_name_uid(st, c);
    if (other != NULL)
        rc = error_set(err, "still prepared with the old uid %s; waiting for its unprepare", other);
    else if (check_node_holds(st, plan->record, err) < 0)
        rc = -1;
    else
        claim_records_put(&st->claims, steal_pointer(&plan->record));
    pthread_mutex_unlock(&st->lock);
    return rc;
}

/* The files first, then the journal line: a crash in between leaves files
 * no line owns, which the next start sweeps.  The line is written before
 * the answer and made durable just after it (JOURNAL_LAZY).  On failure
 * the record is rolled back. */
static int write_claim(struct prepare_state *st, const struct claim_ref *c,
                       struct claim_record *rec, const struct prepare_plan *plan,
                       struct prepare_trace *tr, struct error *err)
{
    /* An unprepare of this claim, or of an earlier claim of this name, may
     * have left its files queued. */
    int rc = claim_reaper_reclaim(st->reaper, c->uid, rec->metadata_dir, err);
    if (rc == 0)
        rc = record_files_write(st, plan, err);
    prepare_trace_mark(tr, PREPARE_STEP_FILES);
    if (rc == 0) {
        rc = journal(st, c->uid, rec, JOURNAL_LAZY, err);
        prepare_trace_mark(tr, PREPARE_STEP_JOURNAL);
    }
    if (rc < 0)
        rollback(st, c->uid);
    return rc;
}

static int prepare_locked(struct prepare_state *st, const struct claim_ref *c,
                          struct prepared_claim *out, struct prepare_trace *tr, struct error *err)
{
    int rc = answer_from_checkpoint(st, c, out, err);
    if (rc <= 0) {
        if (rc == 0)
            LOG_V(2, "claim %s/%s (uid %s): already prepared", c->ns, c->name, c->uid);
        return rc;
    }
    /* A PrepareStarted record left by a failed rollback: clean up first. */
    if (drop_record(st, c->uid, false, NULL, err) < 0)
        return -1;
    prepare_trace_mark(tr, PREPARE_STEP_CHECKPOINT);
    cleanup_plan struct prepare_plan plan = {0};
    if (plan_claim(st, c, &plan, tr, err) < 0)
        return -1;
    struct claim_record *rec = plan.record; /* in st->claims once admitted */
    if (admit_record(st, c, &plan, err) < 0 || write_claim(st, c, rec, &plan, tr, err) < 0)
        return -1;
    *out = plan.answer;
    memset(&plan.answer, 0, sizeof(plan.answer));
    LOG_V(1, "claim %s/%s (uid %s): prepared %zu device(s)", c->ns, c->name, c->uid,
          out->n_devices);
    return 0;
}

/* What one call of the API does for its claim, between claim_call's
 * bracket; ctx is the call's own. */
typedef int (*claim_step_fn)(struct prepare_state *st, const struct claim_ref *c,
                             struct prepare_trace *tr, void *ctx, struct error *err);

struct claim_call {
    const char *done, *failed; /* the trace log's words */
    const char *suffix;        /* after the claim in an error: "" or ": unprepare" */
    claim_step_fn step;
    void *ctx;
    prepare_hook_fn hook; /* told after a success */
};

/* One prepare or unprepare: the reference checked, the step run holding
 * the shared lock and the claim's uid, the hook told after a success, the
 * step times logged.  Errors name the claim. */
static int claim_call(struct prepare_state *st, const char *ns, const char *name, const char *uid,
                      const struct claim_call *call, struct error *err)
{
    if (k8s_check_claim_ref(ns, name, uid, err) < 0)
        return error_prefix(err, "claim %.63s/%.253s", ns ? ns : "", name ? name : "");
    const struct claim_ref c = {ns, name, uid};
    struct busy_uid slot;
    struct prepare_trace tr;
    prepare_trace_start(&tr);
    int lock;
    if (prepare_shared_enter(st, &lock, err) < 0)
        return error_prefix(err, "claim %s/%s (uid %s)%s", ns, name, uid, call->suffix);
    uid_acquire(st, uid, &slot);
    prepare_trace_mark(&tr, PREPARE_STEP_WAIT);
    int rc = call->step(st, &c, &tr, call->ctx, err);
    if (rc == 0 && call->hook) {
        call->hook(st->cfg.hook_ctx, &c);
        prepare_trace_mark(&tr, PREPARE_STEP_HOOKS);
    }
    uid_release(st, &slot);
    prepare_shared_leave(st, lock);
    prepare_trace_log(&tr, rc == 0 ? call->done : call->failed, ns, name, uid);
    if (rc < 0)
        return error_prefix(err, "claim %s/%s (uid %s)%s", ns, name, uid, call->suffix);
    return 0;
}

static int prepare_step(struct prepare_state *st, const struct claim_ref *c,
                        struct prepare_trace *tr, void *ctx, struct error *err)
{
    return prepare_locked(st, c, ctx, tr, err);
}

int prepare_claim(struct prepare_state *st, const char *ns, const char *name, const char *uid,
                  struct prepared_claim *out, struct error *err)
{
    memset(out, 0, sizeof(*out));
    const struct claim_call call = {"prepare", "failed prepare",   "", prepare_step,
                                    out,       st->cfg.on_prepared};
    return claim_call(st, ns, name, uid, &call, err);
}

/* ---- unprepare ---- */

/* *ctx (bool): whether the claim was prepared. */
static int unprepare_step(struct prepare_state *st, const struct claim_ref *c,
                          struct prepare_trace *tr, void *ctx, struct error *err)
{
    pthread_mutex_lock(&st->lock);
    const struct claim_record *rec = claim_records_find(&st->claims, c->uid);
    pthread_mutex_unlock(&st->lock);
    if (rec && !claim_record_names(rec, c->ns, c->name))
        LOG_W("claim %s/%s (uid %s): unprepare names it, the checkpoint has it as %s/%s; "
              "removing it by uid",
              c->ns, c->name, c->uid, rec->ns, rec->name);
    *(bool *)ctx = rec != NULL;
    return rec != NULL ? drop_record(st, c->uid, true, tr, err) : 0;
}

int unprepare_claim(struct prepare_state *st, const char *ns, const char *name, const char *uid,
                    struct error *err)
{
    bool known = false;
    const struct claim_call call = {"unprepare",   "failed unprepare",
                                    ": unprepare", unprepare_step,
                                    &known,        st->cfg.on_unprepared};
    if (claim_call(st, ns, name, uid, &call, err) < 0)
        return -1;
    LOG_V(1, "claim %s/%s (uid %s): %s", ns, name, uid, known ? "unprepared" : "not prepared");
    return 0;
}

/* ---- health ---- */

void prepare_for_each_device(struct prepare_state *st, prepared_device_fn fn, void *ctx)
{
    pthread_mutex_lock(&st->lock);
    for (size_t i = 0; i < st->claims.n; i++) {
        const struct claim_record *rec = st->claims.v[i];
        if (rec->state != CLAIM_PREPARE_COMPLETED)
            continue;
        const struct claim_ref c = claim_record_ref(rec);
        for (size_t k = 0; k < rec->devices.n_devices; k++) {
            const struct prepared_device *d = &rec->devices.devices[k];
            fn(ctx, &c, d->pool_name, d->device_name, d->share_id);
        }
    }
    pthread_mutex_unlock(&st->lock);
}

void prepare_after_answer(struct prepare_state *st)
{
    claim_reaper_kick(st->reaper);
    checkpoint_store_kick(st->store);
    if (st->cfg.after_answer != NULL)
        st->cfg.after_answer(st->cfg.hook_ctx);
}

void prepare_wait_settled(struct prepare_state *st)
{
    claim_reaper_wait_idle(st->reaper); /* each wakes its thread first */
    checkpoint_store_wait_idle(st->store);
}

/* ---- state ---- */

static int check_config(const struct prepare_config *c, struct error *err)
{
    if (c->driver_name == NULL || !k8s_is_dns_subdomain(c->driver_name) ||
        strlen(c->driver_name) > K8S_DNS_LABEL_MAX)
        return error_set(err, "driver name \"%s\" is not a DNS subdomain of at most %d characters",
                         c->driver_name ? c->driver_name : "", K8S_DNS_LABEL_MAX);
    if (c->node_name == NULL || !k8s_is_dns_subdomain(c->node_name))
        return error_set(err, "node name \"%s\" is not a DNS subdomain",
                         c->node_name ? c->node_name : "");
    const struct {
        const char *what, *path;
    } paths[] = {{"plugin directory", c->plugin_dir},
                 {"CDI root", c->cdi_root},
                 {"fakehw host root", c->fakehw_host_root}};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
        if (paths[i].path == NULL || paths[i].path[0] != '/' ||
            strlen(paths[i].path) > PATH_MAX / 2)
            return error_set(err, "%s \"%s\" is not an absolute path", paths[i].what,
                             paths[i].path ? paths[i].path : "");
    if (c->fakegpu_smi != NULL && c->fakegpu_smi[0] != '\0' && c->fakegpu_smi[0] != '/')
        return error_set(err, "fakegpu-smi path \"%s\" is not absolute", c->fakegpu_smi);
    if (c->fetch_claim == NULL || c->lookup_device == NULL)
        return error_set(err, "prepare needs the claim fetch and device lookup callbacks");
    return 0;
}

/* Recovers the claims and writes them as the new snapshot, with an empty
 * journal; shared, all of it holding the lock (the sweep would remove the
 * files of a prepare of the other instance in flight). */
static int open_store(struct prepare_state *st, struct error *err)
{
    int lock;
    if (prepare_shared_enter(st, &lock, err) < 0)
        return -1;
    int rc = prepare_recover(st, err);
    if (rc == 0) {
        st->store = checkpoint_store_open(st->cfg.plugin_dir, st->cfg.journal_max_lines, 0,
                                          snapshot_text, st, err);
        if (st->store == NULL)
            rc = error_prefix(err, "writing the checkpoint");
        else if (st->cfg.shared)
            checkpoint_store_share(st->store);
    }
    prepare_shared_leave(st, lock);
    return rc;
}

/* An empty journal: the next start reads one file, and a plugin that knows
 * only checkpoint.json still finds every claim.  Shared: with what the
 * other instance wrote, or not at all. */
static void compact_at_close(struct prepare_state *st)
{
    struct error e;
    int lock;
    if (prepare_shared_enter(st, &lock, &e) < 0) {
        LOG_E("compacting the checkpoint on exit: %s", e.msg);
        return;
    }
    if (checkpoint_store_compact(st->store, &e) < 0)
        LOG_E("compacting the checkpoint on exit: %s", e.msg);
    prepare_shared_leave(st, lock);
}

/* The CDI kinds, the paths below the plugin directory, the directories,
 * the recovered checkpoint and the reaper. */
static int state_init(struct prepare_state *st, const struct prepare_config *cfg, struct error *err)
{
    /* The metadata kind is also needed to recover metadata specs written
     * while device metadata was on. */
    if (cdi_claim_kind(cfg->driver_name, st->claim_kind, sizeof(st->claim_kind), err) < 0)
        return error_prefix(err, "driver name %s", cfg->driver_name);
    if (cdi_metadata_kind(cfg->driver_name, st->metadata_kind, sizeof(st->metadata_kind), err) <
        0) {
        if (cfg->device_metadata)
            return error_prefix(err, "driver name %s (device metadata)", cfg->driver_name);
        st->metadata_kind[0] = '\0';
    }
    snprintf(st->checkpoint_path, sizeof(st->checkpoint_path), "%s/%s", cfg->plugin_dir,
             CHECKPOINT_FILE);
    snprintf(st->journal_path, sizeof(st->journal_path), "%s/%s", cfg->plugin_dir,
             CHECKPOINT_JOURNAL_FILE);
    snprintf(st->metadata_root, sizeof(st->metadata_root), "%s/%s", cfg->plugin_dir,
             DEVICE_METADATA_DIR);
    snprintf(st->lock_path, sizeof(st->lock_path), "%s/%s", cfg->plugin_dir, SERIALIZE_LOCK_FILE);
    if (mkdir_p(cfg->plugin_dir, 0755, err) < 0 || mkdir_p(cfg->cdi_root, 0755, err) < 0 ||
        open_store(st, err) < 0)
        return -1;
    st->reaper = claim_reaper_start(st->metadata_root, err);
    return st->reaper != NULL ? 0 : -1;
}

struct prepare_state *prepare_state_open(const struct prepare_config *cfg, struct error *err)
{
    if (check_config(cfg, err) < 0)
        return NULL;
    struct prepare_state *st = xcalloc(1, sizeof(*st));
    st->cfg = *cfg;
    pthread_mutex_init(&st->lock, NULL);
    pthread_cond_init(&st->idle, NULL);
    if (state_init(st, cfg, err) < 0) {
        prepare_state_close(st);
        return NULL;
    }
    LOG_V(1, "prepare state: %zu prepared claim(s)", st->claims.n);
    return st;
}

void prepare_state_close(struct prepare_state *st)
{
    if (st == NULL)
        return;
    claim_reaper_stop(st->reaper); /* removes what is still queued */
    if (st->store != NULL) {
        compact_at_close(st);
        checkpoint_store_close(st->store);
    }
    claim_records_clear(&st->claims);
    pthread_cond_destroy(&st->idle);
    pthread_mutex_destroy(&st->lock);
    free(st);
}
