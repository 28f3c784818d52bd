// SPDX-License-Identifier: Apache-2.0
/* The claim work queue of the background writers that PATCH a claim's
 * status (driver/health/claim_status.h, driver/bind/binder.h): work kept per claim uid, so
 * repeated requests for one claim before it is written collapse into one
 * write; the earliest due claim is written first; after an attempt the
 * claim is settled: done, re-read at once after a conflict (409) a few times,
 * retried with backoff and jitter, or given up after max_attempts.  The
 * claim in flight is tracked so that work dropped meanwhile is not
 * requeued.
 *
 * Not locked: the writer's own mutex guards the queue (every call below is
 * made with it held). */
#ifndef FAKEHW_DRIVER_CLAIM_QUEUE_H
#define FAKEHW_DRIVER_CLAIM_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include "driver/prepare/prepare_types.h"

/* A claim waiting for a write (strings owned). */
struct claim_work {
    char *ns, *name, *uid;
    long long due_ms;
    long long changed_ms; /* when a change it reports was seen; -1: none */
    int failures;         /* failed attempts in a row (conflicts beyond the quick ones included) */
    int conflicts;        /* 409 answers in a row */
    struct claim_work *next;
};

/* What one attempt came to. */
enum claim_write_result {
    CLAIM_WRITE_DONE,     /* written, nothing to write, or nothing can be written */
    CLAIM_WRITE_RETRY,    /* failed: try again later */
    CLAIM_WRITE_CONFLICT, /* 409: the claim changed while we wrote */
};

/* What settling an attempt did with the claim. */
enum claim_settle {
    CLAIM_SETTLE_DONE,     /* done, dropped or superseded by newer work: freed */
    CLAIM_SETTLE_REREAD,   /* a conflict: queued again, due now */
    CLAIM_SETTLE_BACKOFF,  /* queued again after a delay */
    CLAIM_SETTLE_GIVEN_UP, /* max_attempts reached: the caller logs and frees it */
};

struct claim_queue_policy {
    long retry_base_ms; /* first retry delay; 0 = 500 */
    long retry_max_ms;  /* cap of the doubling delay; 0 = 30000 */
    int max_attempts;   /* failed attempts before a claim is given up; 0 = 12 */
};

struct claim_queue {
    struct claim_work *items;
    size_t n;
    struct claim_queue_policy policy;
    const struct claim_work *busy; /* popped and being written; NULL = none */
    bool busy_dropped;             /* dropped while busy: not requeued */
    unsigned long conflicts;       /* 409 answers */
    unsigned long failures;        /* other failed attempts */
    unsigned long given_up;
};

/* Fills the policy's defaults. */
void claim_queue_init(struct claim_queue *q, const struct claim_queue_policy *policy);
/* Frees every queued claim (not one in flight: its writer owns it). */
void claim_queue_clear(struct claim_queue *q);

/* Queues the claim due at due_ms, or brings its queued work forward (the
 * earlier due and changed times win).  Fresh work resets the failure
 * counts: it carries news. */
void claim_queue_add(struct claim_queue *q, const struct claim_ref *claim, long long due_ms,
                     long long changed_ms);
/* Forgets the claim's queued work; an attempt in flight is not requeued. */
void claim_queue_drop(struct claim_queue *q, const char *uid);
struct claim_work *claim_queue_find(const struct claim_queue *q, const char *uid);

/* Takes the earliest claim out when it is due at now and marks it busy; NULL
 * when none is.  *next_ms: the earliest due time, -1 when the queue is
 * empty. */
struct claim_work *claim_queue_pop_due(struct claim_queue *q, long long now, long long *next_ms);

/* After an attempt on w (from claim_queue_pop_due): requeues or frees it and
 * counts conflicts and failures.  *delay_ms is set for BACKOFF.  On GIVEN_UP
 * the caller still owns w (claim_work_free). */
enum claim_settle claim_queue_settle(struct claim_queue *q, struct claim_work *w,
                                     enum claim_write_result out, long long now, long *delay_ms);

/* Nothing queued and nothing in flight. */
bool claim_queue_idle(const struct claim_queue *q);

struct claim_ref claim_work_ref(const struct claim_work *w);
void claim_work_free(struct claim_work *w);

/* The claim's API path, /apis/resource.k8s.io/v1/namespaces/NS/resourceclaims/NAME
 * (append "/status" for the status subresource); false when its namespace or
 * name could not be a Kubernetes name and must not reach a URL. */
bool claim_work_path(const struct claim_work *w, char *path, size_t size);

#endif
