// SPDX-License-Identifier: Apache-2.0
/* SIGTERM and SIGINT for the plugin, and the bound on how long it may take
 * to stop after one, whatever any thread is blocked on.
 *
 * A thread of its own takes the signals (every other thread has them
 * blocked).  From the signal on it keeps a deadline: if the process is still
 * there budget_ms after the signal, because the stop itself is stuck (a
 * thread waiting on something no deadline of its own covers), it says so and
 * ends the process with _exit(1).  The stop is expected to finish well
 * before: it leaves threads blocked in the fakehw tree behind and gives the
 * API server a deadline (driver/main.c), so the watchdog is the last resort.
 * A signal during the start counts too: the start cannot be interrupted, so
 * a start stuck in a hung fakehw tree ends at the budget. */
#ifndef FAKEHW_DRIVER_SHUTDOWN_H
#define FAKEHW_DRIVER_SHUTDOWN_H

#include "error.h"

/* Blocks SIGTERM and SIGINT in the calling thread, so in every thread it
 * starts from now on (call it before any other thread exists), and starts
 * the thread that takes them.  -1 with err when it cannot start. */
int shutdown_start(int budget_ms, struct error *err);

/* Waits up to timeout_ms for SIGTERM or SIGINT: the signal's number, or 0
 * when none came. */
int shutdown_wait(int timeout_ms);

/* When the signal came (monotonic_ms clock); 0 before. */
long long shutdown_signal_ms(void);

/* The stop is done: the watchdog stands down. */
void shutdown_finished(void);

#endif
