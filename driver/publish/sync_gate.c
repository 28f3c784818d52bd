// SPDX-License-Identifier: Apache-2.0
/* The sync gate: see sync_gate.h. */
#include "sync_gate.h"

#include <pthread.h>
#include <stdlib.h>

/* One thread waiting for a slot, on its own stack; queued in order. */
struct waiter {
    pthread_cond_t cond;
    const atomic_bool *abort;
    bool admitted; /* a leaving thread handed it its slot */
    struct waiter *prev, *next;
};

struct sync_gate {
    pthread_mutex_t lock; /* guards everything below */
    unsigned slots, held, peak;
    /* While anyone waits every slot is held: a freed slot goes straight to
     * the head of the queue, so no newcomer overtakes it. */
    struct waiter *head, *tail;
};

struct sync_gate *sync_gate_new(unsigned slots)
{
    if (slots == 0)
        return NULL;
    struct sync_gate *g = calloc(1, sizeof(*g));
    if (g == NULL)
        return NULL;
    pthread_mutex_init(&g->lock, NULL);
    g->slots = slots;
    return g;
}

static void unlink_locked(struct sync_gate *g, struct waiter *w)
{
    if (w->prev != NULL)
        w->prev->next = w->next;
    else
        g->head = w->next;
    if (w->next != NULL)
        w->next->prev = w->prev;
    else
        g->tail = w->prev;
    w->prev = w->next = NULL;
}

static bool aborted(const atomic_bool *abort)
{
    return abort != NULL && atomic_load(abort);
}

/* Lock held: queues w and waits until it is handed a slot or gives up. */
static bool wait_locked(struct sync_gate *g, struct waiter *w)
{
    pthread_cond_init(&w->cond, NULL);
    w->prev = g->tail;
    if (g->tail != NULL)
        g->tail->next = w;
    else
        g->head = w;
    g->tail = w;
    while (!w->admitted && !aborted(w->abort))
        pthread_cond_wait(&w->cond, &g->lock);
    if (!w->admitted)
        unlink_locked(g, w); /* an admitted waiter was unlinked by leave */
    pthread_cond_destroy(&w->cond);
    return w->admitted;
}

bool sync_gate_enter(struct sync_gate *g, const atomic_bool *abort)
{
    if (g == NULL)
        return true;
    pthread_mutex_lock(&g->lock);
    bool held = false;
    if (aborted(abort)) {
        /* stopping already: no slot */
    } else if (g->head == NULL && g->held < g->slots) {
        g->held++;
        if (g->held > g->peak)
            g->peak = g->held;
        held = true;
    } else {
        struct waiter w = {.abort = abort};
        held = wait_locked(g, &w);
    }
    pthread_mutex_unlock(&g->lock);
    return held;
}

void sync_gate_leave(struct sync_gate *g)
{
    if (g == NULL)
        return;
    pthread_mutex_lock(&g->lock);
    struct waiter *w = g->head;
    if (w != NULL) {
        /* The slot changes hands: held stays as it is. */
        unlink_locked(g, w);
        w->admitted = true;
        pthread_cond_signal(&w->cond);
    } else if (g->held > 0) {
        g->held--;
    }
    pthread_mutex_unlock(&g->lock);
}

void sync_gate_wake(struct sync_gate *g, const atomic_bool *abort)
{
    if (g == NULL || abort == NULL)
        return;
    pthread_mutex_lock(&g->lock);
    for (struct waiter *w = g->head; w != NULL; w = w->next)
        if (w->abort == abort)
            pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&g->lock);
}

unsigned sync_gate_peak(struct sync_gate *g)
{
    pthread_mutex_lock(&g->lock);
    unsigned peak = g->peak;
    pthread_mutex_unlock(&g->lock);
    return peak;
}

unsigned sync_gate_waiting(struct sync_gate *g)
{
    pthread_mutex_lock(&g->lock);
    unsigned n = 0;
    for (const struct waiter *w = g->head; w != NULL; w = w->next)
        n++;
    pthread_mutex_unlock(&g->lock);
    return n;
}

void sync_gate_free(struct sync_gate *g)
{
    if (g == NULL)
        return;
    pthread_mutex_destroy(&g->lock);
    free(g);
}
