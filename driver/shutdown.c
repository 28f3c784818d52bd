// SPDX-License-Identifier: Apache-2.0
/* The signal thread and the stop watchdog: see shutdown.h.  One per
 * process, as signals are. */
#include "shutdown.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "retry.h"

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* CLOCK_MONOTONIC */
    sigset_t sigs;
    int budget_ms;
    int sig;             /* the signal taken; 0 before */
    long long signal_ms; /* when */
    bool finished;
} sd = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *signal_thread(void *arg)
{
    (void)arg;
    int sig = 0;
    while (sigwait(&sd.sigs, &sig) != 0 || (sig != SIGTERM && sig != SIGINT))
        ;
    pthread_mutex_lock(&sd.lock);
    sd.sig = sig;
    sd.signal_ms = monotonic_ms();
    long long deadline = sd.signal_ms + sd.budget_ms;
    pthread_cond_broadcast(&sd.cond);
    while (!sd.finished && monotonic_ms() < deadline)
        retry_cond_wait_until(&sd.cond, &sd.lock, deadline);
    bool finished = sd.finished;
    pthread_mutex_unlock(&sd.lock);
    if (!finished) {
        /* Something the stop waits for has no deadline of its own: exit
         * anyway, within the grace period the kubelet gives. */
        LOG_E("%s: still not stopped %d ms after the signal; exiting now", strsignal(sig),
              sd.budget_ms);
        _exit(1);
    }
    return NULL;
}

int shutdown_start(int budget_ms, struct error *err)
{
    sigemptyset(&sd.sigs);
    sigaddset(&sd.sigs, SIGTERM);
    sigaddset(&sd.sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sd.sigs, NULL);
    sd.budget_ms = budget_ms;
    if (retry_cond_init(&sd.cond) < 0)
        return error_set(err, "cannot create a condition variable");
    pthread_t t;
    if (pthread_create(&t, NULL, signal_thread, NULL) != 0)
        return error_set(err, "cannot start the signal thread");
    pthread_detach(t);
    return 0;
}

int shutdown_wait(int timeout_ms)
{
    long long deadline = monotonic_ms() + timeout_ms;
    pthread_mutex_lock(&sd.lock);
    while (sd.sig == 0 && monotonic_ms() < deadline)
        retry_cond_wait_until(&sd.cond, &sd.lock, deadline);
    int sig = sd.sig;
    pthread_mutex_unlock(&sd.lock);
    return sig;
}

long long shutdown_signal_ms(void)
{
    pthread_mutex_lock(&sd.lock);
    long long t = sd.signal_ms;
    pthread_mutex_unlock(&sd.lock);
    return t;
}

void shutdown_finished(void)
{
    pthread_mutex_lock(&sd.lock);
    sd.finished = true;
    pthread_cond_broadcast(&sd.cond);
    pthread_mutex_unlock(&sd.lock);
}
