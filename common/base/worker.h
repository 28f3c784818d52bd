// SPDX-License-Identifier: Apache-2.0
/* A background thread that sleeps on a condition variable until its owner
 * wakes it (under lock: change what it waits for, then signal cond), a
 * timed wait ends or worker_stop asks it to end.  It starts with every
 * signal blocked: signals belong to the thread that waits for them.
 *
 *   owner:  worker_init, worker_start; ...; worker_stop (the thread ends,
 *           joined), worker_destroy
 *   thread: lock; while (!w->stop) { work, or wait on cond }; unlock */
#ifndef FAKEHW_COMMON_WORKER_H
#define FAKEHW_COMMON_WORKER_H

#include <pthread.h>
#include <stdbool.h>

struct worker {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* on CLOCK_MONOTONIC, for pthread_cond_timedwait */
    bool stop;           /* under lock: worker_stop asked the thread to end */
};

/* The lock and the condition variable, stop false. */
void worker_init(struct worker *w);

/* Starts fn(arg) on a new thread: 0, or the pthread_create error number
 * (then only worker_destroy is left to do). */
int worker_start(struct worker *w, void *(*fn)(void *), void *arg);

/* Sets stop, wakes the thread and joins it.  The lock and the condition
 * variable stay usable until worker_destroy. */
void worker_stop(struct worker *w);
void worker_destroy(struct worker *w);

/* pthread_create with every signal blocked in the new thread. */
int thread_start_quiet(pthread_t *t, void *(*fn)(void *), void *arg);

/* The end of a thread t that waits on cond while *stop is false: sets *stop
 * under lock, wakes every waiter of cond and joins t. */
void thread_stop_join(pthread_mutex_t *lock, pthread_cond_t *cond, bool *stop, pthread_t t);

#endif
