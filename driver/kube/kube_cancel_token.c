// SPDX-License-Identifier: Apache-2.0
/* The watches' cancel token: a flag and the curl multi handles of the watches
 * that wait on it, so firing it wakes each of them at once (see
 * kube_client.h).  A watch attaches its handle before its first poll and
 * detaches it under the lock before cleaning it up, so curl_multi_wakeup
 * never sees a freed handle. */
#include "kube_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "xalloc.h"

struct kube_cancel {
    atomic_bool fired;
    pthread_mutex_t lock; /* guards waiters */
    struct kube_cancel_waiter *waiters;
};

struct kube_cancel *kube_cancel_new(void)
{
    struct kube_cancel *t = xcalloc(1, sizeof(*t));
    atomic_init(&t->fired, false);
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

void kube_cancel_free(struct kube_cancel *t)
{
    if (t == NULL)
        return;
    pthread_mutex_destroy(&t->lock);
    free(t);
}

void kube_cancel_fire(struct kube_cancel *t)
{
    if (t == NULL)
        return;
    atomic_store_explicit(&t->fired, true, memory_order_release);
    pthread_mutex_lock(&t->lock);
    for (struct kube_cancel_waiter *w = t->waiters; w != NULL; w = w->next)
        curl_multi_wakeup(w->multi);
    pthread_mutex_unlock(&t->lock);
}

bool kube_cancel_fired(struct kube_cancel *t)
{
    return t != NULL && atomic_load_explicit(&t->fired, memory_order_acquire);
}

void kube_cancel_attach(struct kube_cancel *t, struct kube_cancel_waiter *w)
{
    if (t == NULL)
        return;
    pthread_mutex_lock(&t->lock);
    w->next = t->waiters;
    t->waiters = w;
    pthread_mutex_unlock(&t->lock);
}

void kube_cancel_detach(struct kube_cancel *t, struct kube_cancel_waiter *w)
{
    if (t == NULL)
        return;
    pthread_mutex_lock(&t->lock);
    struct kube_cancel_waiter **p = &t->waiters;
    while (*p != NULL && *p != w)
        p = &(*p)->next;
    if (*p == w)
        *p = w->next;
    pthread_mutex_unlock(&t->lock);
}
