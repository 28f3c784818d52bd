// SPDX-License-Identifier: Apache-2.0
#include "stop_signals.h"

#include <pthread.h>
#include <time.h>

void stop_signals_block(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    pthread_sigmask(SIG_BLOCK, set, NULL);
}

int stop_signals_wait(const sigset_t *set)
{
    int sig = 0;
    sigwait(set, &sig);
    return sig;
}

int stop_signals_take_pending(const sigset_t *set)
{
    const struct timespec now = {0, 0};
    int sig = sigtimedwait(set, NULL, &now);
    return sig > 0 ? sig : 0;
}
