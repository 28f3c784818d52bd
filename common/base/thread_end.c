// SPDX-License-Identifier: Apache-2.0
/* Waiting for a thread with a deadline, and leaving it behind: see
 * thread_end.h. */
#include "thread_end.h"

#include "retry.h"

int thread_end_init(struct thread_end *e)
{
    e->ended = e->left = false;
    if (retry_cond_init(&e->cond) < 0)
        return -1;
    pthread_mutex_init(&e->lock, NULL);
    return 0;
}

void thread_end_destroy(struct thread_end *e)
{
    pthread_cond_destroy(&e->cond);
    pthread_mutex_destroy(&e->lock);
}

bool thread_end_mark(struct thread_end *e)
{
    pthread_mutex_lock(&e->lock);
    e->ended = true;
    bool left = e->left;
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->lock);
    return left;
}

bool thread_end_wait(struct thread_end *e, pthread_t t, long long deadline_ms)
{
    pthread_mutex_lock(&e->lock);
    while (!e->ended && (deadline_ms < 0 || monotonic_ms() < deadline_ms))
        retry_cond_wait_until(&e->cond, &e->lock, deadline_ms);
    bool ended = e->ended;
    if (!ended)
        e->left = true; /* decided under the lock: the thread frees from here on */
    pthread_mutex_unlock(&e->lock);
    if (ended)
        pthread_join(t, NULL); /* it is past its mark: no wait to speak of */
    else
        pthread_detach(t);
    return ended;
}
