// SPDX-License-Identifier: Apache-2.0
/* Stopping a thread that may be stuck where no signal reaches it: in a read
 * of a FUSE mount whose daemon is stopped or hung, the kernel waits for the
 * daemon's answer however the caller asks.  The owner waits for the thread
 * until a deadline; if it has not ended by then, the owner leaves it behind
 * (detached) and the thread, should it ever come back, frees what it uses
 * itself as it ends.  Either way exactly one of them frees.
 *
 *   owner:  ask the thread to stop; if (thread_end_wait(&e, t, deadline))
 *           free everything, else touch nothing of it any more
 *   thread: ... its loop ...; if (thread_end_mark(&e)) free everything */
#ifndef FAKEHW_COMMON_THREAD_END_H
#define FAKEHW_COMMON_THREAD_END_H

#include <pthread.h>
#include <stdbool.h>

struct thread_end {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* CLOCK_MONOTONIC */
    bool ended;          /* the thread marked its end */
    bool left;           /* the owner gave up waiting */
};

/* -1 when the condition variable cannot be made. */
int thread_end_init(struct thread_end *e);
void thread_end_destroy(struct thread_end *e);

/* The thread's last call.  True when its owner left it behind: the thread
 * must then free what it uses, this struct included (after this returns). */
bool thread_end_mark(struct thread_end *e);

/* Waits until thread t marked its end or deadline_ms passed (monotonic_ms
 * clock; < 0: no deadline).  True when it ended: it is joined, and the
 * owner frees.  False when it still runs: it is detached and owns its
 * state from now on. */
bool thread_end_wait(struct thread_end *e, pthread_t t, long long deadline_ms);

#endif
