// SPDX-License-Identifier: Apache-2.0
#include "claim_queue.h"

#include <stdlib.h>
#include <string.h>

#include "driver/kube/kube_paths.h"
#include "retry.h"
#include "xalloc.h"

/* Conflicts in a row that are re-read at once, before backing off. */
#define QUICK_CONFLICT_RETRIES 5

void claim_queue_init(struct claim_queue *q, const struct claim_queue_policy *policy)
{
    memset(q, 0, sizeof(*q));
    q->policy.retry_base_ms = policy->retry_base_ms > 0 ? policy->retry_base_ms : 500;
    q->policy.retry_max_ms = policy->retry_max_ms > 0 ? policy->retry_max_ms : 30000;
    q->policy.max_attempts = policy->max_attempts > 0 ? policy->max_attempts : 12;
}

void claim_work_free(struct claim_work *w)
{
    if (w == NULL)
        return;
    free(w->ns);
    free(w->name);
    free(w->uid);
    free(w);
}

void claim_queue_clear(struct claim_queue *q)
{
    while (q->items != NULL) {
        struct claim_work *w = q->items;
        q->items = w->next;
        claim_work_free(w);
    }
    q->n = 0;
}

struct claim_ref claim_work_ref(const struct claim_work *w)
{
    return (struct claim_ref){w->ns, w->name, w->uid};
}

static struct claim_work **find_link(struct claim_queue *q, const char *uid)
{
    struct claim_work **link = &q->items;
    while (*link != NULL && strcmp((*link)->uid, uid) != 0)
        link = &(*link)->next;
    return link;
}

struct claim_work *claim_queue_find(const struct claim_queue *q, const char *uid)
{
    return *find_link((struct claim_queue *)q, uid);
}

static void push(struct claim_queue *q, struct claim_work *w)
{
    w->next = q->items;
    q->items = w;
    q->n++;
}

void claim_queue_add(struct claim_queue *q, const struct claim_ref *claim, long long due_ms,
                     long long changed_ms)
{
    struct claim_work *w = claim_queue_find(q, claim->uid);
    if (w != NULL) {
        if (due_ms < w->due_ms)
            w->due_ms = due_ms;
        if (changed_ms >= 0 && (w->changed_ms < 0 || changed_ms < w->changed_ms))
            w->changed_ms = changed_ms;
        w->failures = 0;
        w->conflicts = 0;
        return;
    }
    w = xcalloc(1, sizeof(*w));
    w->ns = xstrdup(claim->ns);
    w->name = xstrdup(claim->name);
    w->uid = xstrdup(claim->uid);
    w->due_ms = due_ms;
    w->changed_ms = changed_ms;
    push(q, w);
}

void claim_queue_drop(struct claim_queue *q, const char *uid)
{
    struct claim_work **link = find_link(q, uid);
    struct claim_work *w = *link;
    if (w != NULL) {
        *link = w->next;
        claim_work_free(w);
        q->n--;
    }
    if (q->busy != NULL && strcmp(q->busy->uid, uid) == 0)
        q->busy_dropped = true;
}

struct claim_work *claim_queue_pop_due(struct claim_queue *q, long long now, long long *next_ms)
{
    struct claim_work **best = NULL;
    for (struct claim_work **link = &q->items; *link; link = &(*link)->next)
        if (best == NULL || (*link)->due_ms < (*best)->due_ms)
            best = link;
    *next_ms = best ? (*best)->due_ms : -1;
    if (best == NULL || (*best)->due_ms > now)
        return NULL;
    struct claim_work *w = *best;
    *best = w->next;
    w->next = NULL;
    q->n--;
    q->busy = w;
    q->busy_dropped = false;
    return w;
}

enum claim_settle claim_queue_settle(struct claim_queue *q, struct claim_work *w,
                                     enum claim_write_result out, long long now, long *delay_ms)
{
    bool dropped = q->busy == w && q->busy_dropped;
    if (q->busy == w) {
        q->busy = NULL;
        q->busy_dropped = false;
    }
    /* Newer work for the claim was queued meanwhile: it carries the news. */
    if (out == CLAIM_WRITE_DONE || dropped || claim_queue_find(q, w->uid) != NULL) {
        claim_work_free(w);
        return CLAIM_SETTLE_DONE;
    }
    if (out == CLAIM_WRITE_CONFLICT) {
        q->conflicts++;
        w->conflicts++;
        if (w->conflicts <= QUICK_CONFLICT_RETRIES) {
            w->due_ms = now;
            push(q, w);
            return CLAIM_SETTLE_REREAD;
        }
    } else {
        q->failures++;
        w->conflicts = 0;
    }
    w->failures++;
    if (w->failures >= q->policy.max_attempts) {
        q->given_up++;
        return CLAIM_SETTLE_GIVEN_UP;
    }
    *delay_ms = retry_backoff_ms(w->failures, q->policy.retry_base_ms, q->policy.retry_max_ms);
    w->due_ms = now + *delay_ms;
    push(q, w);
    return CLAIM_SETTLE_BACKOFF;
}

bool claim_queue_idle(const struct claim_queue *q)
{
    return q->items == NULL && q->busy == NULL;
}

/* Namespaces and claim names are DNS labels/subdomains; anything else must
 * not reach a URL path. */
static bool path_safe(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 253)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
            return false;
    }
    return true;
}

bool claim_work_path(const struct claim_work *w, char *path, size_t size)
{
    return path_safe(w->ns) && path_safe(w->name) &&
           kube_path_resourceclaim(path, size, w->ns, w->name) == 0;
}
