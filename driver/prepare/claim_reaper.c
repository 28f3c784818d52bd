// SPDX-License-Identifier: Apache-2.0
/* See claim_reaper.h. */
#include "claim_reaper.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "claim_files.h"
#include "log.h"
#include "retry.h"
#include "worker.h"
#include "xalloc.h"

struct pending {
    long long due_ms; /* monotonic_ms() when it may go */
    char *uid;        /* the claim's */
    char *dirname;    /* or NULL */
    char **files;
    size_t n_files;
    struct pending *next;
};

static void pending_free(struct pending *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->n_files; i++)
        free(p->files[i]);
    free(p->files);
    free(p->uid);
    free(p->dirname);
    free(p);
}

struct claim_reaper {
    char *root;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cond;  /* queued work, a removal ended, or stop */
    struct pending *head; /* oldest first */
    struct pending **tail;
    const struct pending *busy; /* the entry the thread is removing, or NULL */
    bool stopping;
};

/* Removes p's files, then <root>/<dirname> and all it holds; every one is
 * tried.  0, or -1 with err (the first failure). */
static int remove_pending(const struct claim_reaper *r, const struct pending *p, struct error *err)
{
    int rc = 0;
    for (size_t i = 0; i < p->n_files; i++)
        if (unlink(p->files[i]) < 0 && errno != ENOENT && rc == 0)
            rc = error_set_errno(err, errno, "removing %s", p->files[i]);
    struct error e;
    char path[4096];
    if (p->dirname != NULL && (claim_join(r->root, p->dirname, path, sizeof(path), &e) < 0 ||
                               claim_remove_tree(path, &e) < 0)) {
        if (rc == 0)
            error_set(err, "%s", e.msg);
        rc = -1;
    }
    return rc;
}

/* Is p for the claim uid, or for the directory dirname (when not NULL)? */
static bool pending_matches(const struct pending *p, const char *uid, const char *dirname)
{
    return strcmp(p->uid, uid) == 0 ||
           (dirname != NULL && p->dirname != NULL && strcmp(p->dirname, dirname) == 0);
}

/* Takes an entry for uid or dirname out of the queue.  Lock held.  The
 * entry, or NULL. */
static struct pending *unqueue_locked(struct claim_reaper *r, const char *uid, const char *dirname)
{
    for (struct pending **p = &r->head; *p != NULL; p = &(*p)->next) {
        if (!pending_matches(*p, uid, dirname))
            continue;
        struct pending *found = *p;
        *p = found->next;
        if (r->tail == &found->next)
            r->tail = p;
        return found;
    }
    return NULL;
}

static void *reaper_main(void *arg)
{
    struct claim_reaper *r = arg;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (r->head == NULL && !r->stopping)
            pthread_cond_wait(&r->cond, &r->mu);
        if (r->head == NULL)
            break; /* stopping, and nothing left */
        if (!r->stopping && monotonic_ms() < r->head->due_ms) {
            retry_cond_wait_until(&r->cond, &r->mu, r->head->due_ms);
            continue; /* the head may have been taken back meanwhile */
        }
        struct pending *p = r->head;
        r->head = p->next;
        if (r->head == NULL)
            r->tail = &r->head;
        r->busy = p;
        pthread_mutex_unlock(&r->mu);
        struct error e;
        if (remove_pending(r, p, &e) < 0)
            LOG_E("removing the files of unprepared claim %s: %s (the next start sweeps them)",
                  p->uid, e.msg);
        pthread_mutex_lock(&r->mu);
        r->busy = NULL;
        pending_free(p);
        pthread_cond_broadcast(&r->cond);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

struct claim_reaper *claim_reaper_start(const char *root, struct error *err)
{
    struct claim_reaper *r = xcalloc(1, sizeof(*r));
    r->root = xstrdup(root);
    r->tail = &r->head;
    pthread_mutex_init(&r->mu, NULL);
    if (retry_cond_init(&r->cond) < 0) {
        error_set(err, "cannot create the claim reaper's condition variable");
        pthread_mutex_destroy(&r->mu);
        free(r->root);
        free(r);
        return NULL;
    }
    if (pthread_create(&r->thread, NULL, reaper_main, r) != 0) {
        error_set(err, "cannot start the claim reaper thread");
        pthread_cond_destroy(&r->cond);
        pthread_mutex_destroy(&r->mu);
        free(r->root);
        free(r);
        return NULL;
    }
    return r;
}

void claim_reaper_add(struct claim_reaper *r, const char *uid, const char *dirname,
                      const char *const *files, size_t n)
{
    struct pending *p = xcalloc(1, sizeof(*p));
    p->uid = xstrdup(uid);
    p->dirname = dirname != NULL ? xstrdup(dirname) : NULL;
    p->files = xcalloc(n ? n : 1, sizeof(*p->files));
    for (size_t i = 0; i < n; i++)
        p->files[i] = xstrdup(files[i]);
    p->n_files = n;
    p->due_ms = monotonic_ms() + CLAIM_REAPER_DELAY_MS;
    pthread_mutex_lock(&r->mu);
    *r->tail = p;
    r->tail = &p->next;
    pthread_mutex_unlock(&r->mu);
}

void claim_reaper_kick(struct claim_reaper *r)
{
    pthread_mutex_lock(&r->mu);
    if (r->head != NULL)
        pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->mu);
}

int claim_reaper_reclaim(struct claim_reaper *r, const char *uid, const char *dirname,
                         struct error *err)
{
    pthread_mutex_lock(&r->mu);
    while (r->busy != NULL && pending_matches(r->busy, uid, dirname))
        pthread_cond_wait(&r->cond, &r->mu);
    /* Every matching entry at once, so the thread cannot start on one of
     * them while this removes another. */
    struct pending *mine = NULL, *p;
    while ((p = unqueue_locked(r, uid, dirname)) != NULL) {
        p->next = mine;
        mine = p;
    }
    pthread_mutex_unlock(&r->mu);
    int rc = 0;
    while ((p = mine) != NULL) {
        mine = p->next;
        if (rc == 0)
            rc = remove_pending(r, p, err);
        pending_free(p);
    }
    if (rc < 0)
        return error_prefix(err, "removing the files of the claim's last prepare");
    return 0;
}

void claim_reaper_wait_idle(struct claim_reaper *r)
{
    claim_reaper_kick(r);
    pthread_mutex_lock(&r->mu);
    while (r->head != NULL || r->busy != NULL)
        pthread_cond_wait(&r->cond, &r->mu);
    pthread_mutex_unlock(&r->mu);
}

void claim_reaper_stop(struct claim_reaper *r)
{
    if (r == NULL)
        return;
    thread_stop_join(&r->mu, &r->cond, &r->stopping, r->thread);
    pthread_cond_destroy(&r->cond);
    pthread_mutex_destroy(&r->mu);
    free(r->root);
    free(r);
}
