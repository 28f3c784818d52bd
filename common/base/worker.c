// SPDX-License-Identifier: Apache-2.0
/* Background threads woken by a condition variable: see worker.h. */
#include "worker.h"

#include <signal.h>

#include "retry.h"

int thread_start_quiet(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

void thread_stop_join(pthread_mutex_t *lock, pthread_cond_t *cond, bool *stop, pthread_t t)
{
    pthread_mutex_lock(lock);
    *stop = true;
    pthread_cond_broadcast(cond);
    pthread_mutex_unlock(lock);
    pthread_join(t, NULL);
}

void worker_init(struct worker *w)
{
    w->stop = false;
    pthread_mutex_init(&w->lock, NULL);
    retry_cond_init(&w->cond);
}

int worker_start(struct worker *w, void *(*fn)(void *), void *arg)
{
    return thread_start_quiet(&w->thread, fn, arg);
}

void worker_stop(struct worker *w)
{
    pthread_mutex_lock(&w->lock);
    w->stop = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
}

void worker_destroy(struct worker *w)
{
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
}
