// SPDX-License-Identifier: Apache-2.0
#include "checkpoint_store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "checkpoint.h"
#include "checkpoint_journal.h"
#include "claim_files.h"
#include "cleanup.h"
#include "log.h"
#include "owned_files.h"
#include "retry.h"

/* What identifies a version of a file that another process may replace
 * (rename), truncate or append to. */
struct file_id {
    bool exists;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
};

struct checkpoint_store {
    char dir[PATH_MAX];
    char snapshot_path[PATH_MAX];
    char journal_path[PATH_MAX];
    size_t max_lines, max_bytes;
    checkpoint_snapshot_fn snapshot;
    void *ctx;
    int fd; /* the journal, O_APPEND */

    pthread_mutex_t mu; /* everything below, and the order of the lines */
    pthread_cond_t cv;  /* a sync ended, an appender finished, a compaction ended */
    off_t size;         /* bytes in the journal */
    size_t lines;       /* lines in the journal */
    uint64_t written;   /* sequence number of the last line written (never reset) */
    uint64_t synced;    /* lines up to this one are durable */
    off_t synced_size;  /* size and lines when they became durable */
    size_t synced_lines;
    uint64_t failed; /* lines up to this one failed their sync */
    int failed_errno;
    bool syncing;    /* one appender runs fdatasync for everyone */
    unsigned active; /* appenders between their write and their apply */
    bool compacting;
    bool dirty;  /* the journal may hold bytes of failed appends: compact before appending */
    bool shared; /* another process writes the files too (checkpoint_store_share) */
    struct file_id seen_snapshot, seen_journal; /* as this store last wrote or loaded them */

    /* The sync thread makes lazy lines durable. */
    pthread_t sync_thread;
    bool sync_started, stopping;
    pthread_cond_t sync_cv; /* CLOCK_MONOTONIC: a kick, or stop */
    uint64_t lazy_target;   /* the last lazy line written: synced after a delay */
};

/* Is line n written but neither durable nor failed?  Lock held. */
static bool pending_locked(const struct checkpoint_store *s, uint64_t n)
{
    return n > s->synced && n > s->failed;
}

static void file_id_of(const struct stat *sb, struct file_id *id)
{
    *id = (struct file_id){.exists = true,
                           .dev = sb->st_dev,
                           .ino = sb->st_ino,
                           .size = sb->st_size,
                           .mtime = sb->st_mtim,
                           .ctime = sb->st_ctim};
}

/* A file that cannot be stat'ed counts as missing: compared with what was
 * seen, it is a change, which makes the caller load the files again. */
static void path_id(const char *path, struct file_id *id)
{
    struct stat sb;
    if (stat(path, &sb) == 0)
        file_id_of(&sb, id);
    else
        *id = (struct file_id){.exists = false};
}

static bool same_file_id(const struct file_id *a, const struct file_id *b)
{
    return a->exists == b->exists &&
           (!a->exists ||
            (a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
             a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
             a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec));
}

/* Shared mode: remembers the files as this store left them.  Lock held. */
static void note_files_locked(struct checkpoint_store *s)
{
    struct stat sb;
    if (!s->shared)
        return;
    path_id(s->snapshot_path, &s->seen_snapshot);
    if (fstat(s->fd, &sb) == 0)
        file_id_of(&sb, &s->seen_journal);
    else
        s->seen_journal = (struct file_id){.exists = false};
}

/* The snapshot written, then the journal emptied.  With mu held. */
static int write_compacted_locked(struct checkpoint_store *s, struct error *err)
{
    cleanup_free char *text = s->snapshot(s->ctx, err);
    if (text == NULL || checkpoint_write(s->snapshot_path, text, err) < 0)
        return -1;
    /* The snapshot holds every line now: a crash before the truncation is
     * durable only replays them onto it again, which changes nothing. */
    if (ftruncate(s->fd, 0) < 0 || fsync(s->fd) < 0) {
        s->dirty = true;
        return error_set_errno(err, errno, "emptying %s after writing %s", s->journal_path,
                               s->snapshot_path);
    }
    s->size = s->synced_size = 0;
    s->lines = s->synced_lines = 0;
    s->synced = s->written;
    s->dirty = false;
    return 0;
}

/* Writes a new snapshot and empties the journal.  With mu held; waits until
 * every written line has been applied (or failed), and keeps new appends out
 * meanwhile. */
static int compact_locked(struct checkpoint_store *s, struct error *err)
{
    s->compacting = true;
    while (s->active > 0 || s->syncing)
        pthread_cond_wait(&s->cv, &s->mu);
    int rc = write_compacted_locked(s, err);
    note_files_locked(s);
    s->compacting = false;
    pthread_cond_broadcast(&s->cv);
    return rc;
}

/* Makes line number me durable, syncing for everyone written so far when no
 * one else is.  With mu held.  0 when durable, -1 when its sync failed. */
static int wait_durable(struct checkpoint_store *s, uint64_t me)
{
    while (s->synced < me && s->failed < me) {
        if (s->syncing) {
            pthread_cond_wait(&s->cv, &s->mu);
            continue;
        }
        s->syncing = true;
        uint64_t target = s->written;
        off_t size = s->size;
        size_t lines = s->lines;
        pthread_mutex_unlock(&s->mu);
        int rc = fdatasync(s->fd);
        int e = errno;
        pthread_mutex_lock(&s->mu);
        s->syncing = false;
        if (rc == 0) {
            s->synced = target;
            s->synced_size = size;
            s->synced_lines = lines;
        } else {
            /* Every line not known durable fails; cut them off again (best
             * effort: the next append compacts anyway). */
            s->failed = s->written;
            s->failed_errno = e;
            /* Shared: another process may have appended since; the next
             * append, under the lock, compacts instead. */
            if (!s->shared && ftruncate(s->fd, s->synced_size) == 0) {
                s->size = s->synced_size;
                s->lines = s->synced_lines;
            }
            s->dirty = true;
        }
        pthread_cond_broadcast(&s->cv);
    }
    return s->synced >= me ? 0 : -1;
}

static ssize_t write_all_once(int fd, const char *buf, size_t len)
{
    ssize_t w;
    do
        w = write(fd, buf, len);
    while (w < 0 && errno == EINTR);
    return w;
}

/* Writes one line at the end of the journal.  Lock held.  0, or -1 with
 * err and nothing of it left behind (or dirty set). */
static int raw_write_locked(struct checkpoint_store *s, const char *line, size_t len,
                            struct error *err)
{
    off_t before = s->size;
    ssize_t w = write_all_once(s->fd, line, len);
    if (w < 0 || (size_t)w != len) {
        if (w < 0)
            error_set_errno(err, errno, "appending to %s", s->journal_path);
        else
            error_set(err, "appending to %s: wrote %zd of %zu bytes", s->journal_path, w, len);
        /* A partial line must not stay in front of later ones. */
        if (w > 0 && ftruncate(s->fd, before) < 0)
            s->dirty = true;
        return -1;
    }
    s->size += (off_t)len;
    s->lines++;
    ++s->written;
    note_files_locked(s);
    return 0;
}

/* Writes line at the end of the journal, compacting first after a failed
 * append.  Takes mu and keeps it on success (0); -1 with err and mu
 * released. */
static int write_line_locked(struct checkpoint_store *s, const char *line, size_t len,
                             struct error *err)
{
    pthread_mutex_lock(&s->mu);
    while (s->compacting)
        pthread_cond_wait(&s->cv, &s->mu);
    if (s->dirty && compact_locked(s, err) < 0) {
        pthread_mutex_unlock(&s->mu);
        return error_prefix(err, "the checkpoint journal had a failed write");
    }
    if (raw_write_locked(s, line, len, err) < 0) {
        pthread_mutex_unlock(&s->mu);
        return -1;
    }
    return 0;
}

/* Waits until line me is durable, applies, compacts past the bound.  With
 * mu held (released on return); the caller counted itself in active. */
/* Compacts past the bound.  A change is durable (or applied, lazy) by
 * then: a failed compaction does not fail it.  Lock held. */
static void compact_past_bound_locked(struct checkpoint_store *s)
{
    struct error ce;
    if (!s->compacting && (s->lines > s->max_lines || (size_t)s->size > s->max_bytes) &&
        compact_locked(s, &ce) < 0)
        LOG_E("compacting the checkpoint: %s; the journal keeps growing until it works", ce.msg);
}

static int finish_locked(struct checkpoint_store *s, uint64_t me, checkpoint_apply_fn apply,
                         void *apply_ctx, struct error *err)
{
    int rc = wait_durable(s, me);
    if (rc == 0 && apply != NULL)
        apply(apply_ctx);
    int e = s->failed_errno;
    s->active--;
    pthread_cond_broadcast(&s->cv);
    struct error ce;
    if (rc == 0)
        compact_past_bound_locked(s);
    else if (s->shared && !s->compacting && compact_locked(s, &ce) < 0)
        /* Cuts the failed line off now, while the caller holds the lock. */
        LOG_E("compacting the checkpoint after a failed fdatasync: %s", ce.msg);
    pthread_mutex_unlock(&s->mu);
    if (rc < 0)
        return error_set_errno(err, e, "fdatasync of %s", s->journal_path);
    return 0;
}

int checkpoint_store_append(struct checkpoint_store *s, const char *line, size_t len,
                            checkpoint_apply_fn apply, void *apply_ctx, struct error *err)
{
    if (write_line_locked(s, line, len, err) < 0)
        return -1;
    s->active++;
    return finish_locked(s, s->written, apply, apply_ctx, err);
}

int checkpoint_store_append_lazy(struct checkpoint_store *s, const char *line, size_t len,
                                 checkpoint_apply_fn apply, void *apply_ctx, struct error *err)
{
    if (write_line_locked(s, line, len, err) < 0)
        return -1;
    if (apply != NULL)
        apply(apply_ctx);
    s->lazy_target = s->written; /* synced by the store's thread, after a kick */
    if (s->shared)               /* the store's thread does not hold the lock to compact */
        compact_past_bound_locked(s);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

void checkpoint_store_kick(struct checkpoint_store *s)
{
    pthread_mutex_lock(&s->mu);
    if (pending_locked(s, s->lazy_target))
        pthread_cond_signal(&s->sync_cv);
    pthread_mutex_unlock(&s->mu);
}

/* The store's thread: syncs the lazy lines CHECKPOINT_LAZY_SYNC_MS after a
 * kick, all with one fdatasync (group commit with any append); compacts
 * past the bound afterwards. */
static void *sync_main(void *arg)
{
    struct checkpoint_store *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->stopping && !pending_locked(s, s->lazy_target))
            pthread_cond_wait(&s->sync_cv, &s->mu);
        if (!pending_locked(s, s->lazy_target))
            break; /* stopping, nothing left */
        retry_cond_pause_until(&s->sync_cv, &s->mu, &s->stopping,
                               monotonic_ms() + CHECKPOINT_LAZY_SYNC_MS);
        if (wait_durable(s, s->lazy_target) < 0) {
            LOG_E("fdatasync of %s: %s; a prepare or an unprepare of the last %d ms may be undone "
                  "by a power failure (the journal is rewritten at the next append)",
                  s->journal_path, strerror(s->failed_errno), CHECKPOINT_LAZY_SYNC_MS);
            /* Their changes are applied: the snapshot is where they can
             * still become durable, rather than at an append that may not
             * come. */
            struct error ce;
            if (!s->shared && !s->compacting && compact_locked(s, &ce) < 0)
                LOG_E("compacting the checkpoint: %s", ce.msg);
            continue;
        }
        /* The bound holds for lazy lines too, off the answer's path.
         * Shared: only the appender, which holds the lock, compacts. */
        if (!s->shared)
            compact_past_bound_locked(s);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

void checkpoint_store_wait_idle(struct checkpoint_store *s)
{
    checkpoint_store_kick(s);
    pthread_mutex_lock(&s->mu);
    while (pending_locked(s, s->lazy_target) || s->compacting)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

int checkpoint_store_compact(struct checkpoint_store *s, struct error *err)
{
    pthread_mutex_lock(&s->mu);
    while (s->compacting)
        pthread_cond_wait(&s->cv, &s->mu);
    int rc = compact_locked(s, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* Opens the journal for appending; creating it makes its name durable.
 * Never through a link: compaction truncates it. */
static int open_journal(const char *dir, const char *path, struct error *err)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ELOOP)
        return owned_link_error(AT_FDCWD, path, path, err);
    if (fd >= 0 || errno != ENOENT) {
        if (fd < 0)
            error_set_errno(err, errno, "opening %s", path);
        return fd;
    }
    fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return error_set_errno(err, errno, "creating %s", path);
    if (fsync_dir(dir, err) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

void checkpoint_store_share(struct checkpoint_store *s)
{
    pthread_mutex_lock(&s->mu);
    s->shared = true;
    note_files_locked(s);
    pthread_mutex_unlock(&s->mu);
}

bool checkpoint_store_changed(struct checkpoint_store *s)
{
    struct file_id snap, journal;
    path_id(s->snapshot_path, &snap);
    path_id(s->journal_path, &journal);
    pthread_mutex_lock(&s->mu);
    bool changed =
        !same_file_id(&snap, &s->seen_snapshot) || !same_file_id(&journal, &s->seen_journal);
    pthread_mutex_unlock(&s->mu);
    return changed;
}

/* The journal at its path, when another process moved ours aside (start-up
 * recovery of a corrupt checkpoint) or it is gone.  Lock held. */
static int reopen_journal_locked(struct checkpoint_store *s, struct error *err)
{
    struct stat at_path, ours;
    if (stat(s->journal_path, &at_path) == 0 && fstat(s->fd, &ours) == 0 &&
        at_path.st_dev == ours.st_dev && at_path.st_ino == ours.st_ino)
        return 0;
    int fd = open_journal(s->dir, s->journal_path, err);
    if (fd < 0)
        return -1;
    close(s->fd);
    s->fd = fd;
    return 0;
}

int checkpoint_store_loaded(struct checkpoint_store *s, size_t lines, bool torn, struct error *err)
{
    pthread_mutex_lock(&s->mu);
    while (s->compacting || s->syncing)
        pthread_cond_wait(&s->cv, &s->mu);
    struct stat sb;
    int rc = reopen_journal_locked(s, err);
    if (rc == 0 && fstat(s->fd, &sb) < 0)
        rc = error_set_errno(err, errno, "%s", s->journal_path);
    if (rc == 0) {
        s->size = s->synced_size = sb.st_size;
        s->lines = s->synced_lines = lines;
        s->synced = s->written; /* the writer of those lines syncs them */
        /* Appending after a torn line would make it a bad line in the
         * middle: the next append compacts first. */
        s->dirty = s->dirty || torn;
    }
    note_files_locked(s);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

size_t checkpoint_store_lines(struct checkpoint_store *s)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->lines;
    pthread_mutex_unlock(&s->mu);
    return n;
}

struct checkpoint_store *checkpoint_store_open(const char *dir, size_t max_lines, size_t max_bytes,
                                               checkpoint_snapshot_fn snapshot, void *ctx,
                                               struct error *err)
{
    struct checkpoint_store *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        error_set(err, "out of memory");
        return NULL;
    }
    s->fd = -1;
    snprintf(s->dir, sizeof(s->dir), "%s", dir);
    if (claim_join(dir, CHECKPOINT_FILE, s->snapshot_path, sizeof(s->snapshot_path), err) < 0 ||
        claim_join(dir, CHECKPOINT_JOURNAL_FILE, s->journal_path, sizeof(s->journal_path), err) <
            0) {
        free(s);
        return NULL;
    }
    s->max_lines = max_lines ? max_lines : CHECKPOINT_JOURNAL_MAX_LINES;
    s->max_bytes = max_bytes ? max_bytes : CHECKPOINT_JOURNAL_MAX_BYTES;
    s->snapshot = snapshot;
    s->ctx = ctx;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (retry_cond_init(&s->sync_cv) < 0) {
        error_set(err, "checkpoint store: cannot create a condition variable");
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return NULL;
    }
    if ((s->fd = open_journal(dir, s->journal_path, err)) < 0 ||
        checkpoint_store_compact(s, err) < 0) {
        checkpoint_store_close(s);
        return NULL;
    }
    if (pthread_create(&s->sync_thread, NULL, sync_main, s) != 0) {
        error_set(err, "checkpoint store: cannot start its sync thread");
        checkpoint_store_close(s);
        return NULL;
    }
    s->sync_started = true;
    return s;
}

void checkpoint_store_close(struct checkpoint_store *s)
{
    if (s == NULL)
        return;
    if (s->sync_started) {
        pthread_mutex_lock(&s->mu);
        s->stopping = true;
        pthread_cond_signal(&s->sync_cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->sync_thread, NULL); /* it syncs what is left first */
    }
    if (s->fd >= 0)
        close(s->fd);
    pthread_cond_destroy(&s->sync_cv);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
