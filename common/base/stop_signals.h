// SPDX-License-Identifier: Apache-2.0
/* SIGTERM and SIGINT, the signals that stop a program, taken by sigwait in
 * one thread rather than by a handler: the program blocks them before it
 * starts any thread, so every thread inherits the mask, and waits for them
 * where it stops. */
#ifndef FAKEHW_COMMON_STOP_SIGNALS_H
#define FAKEHW_COMMON_STOP_SIGNALS_H

#include <signal.h>

/* Fills set with SIGTERM and SIGINT and blocks them in the calling thread,
 * so in every thread it starts from now on. */
void stop_signals_block(sigset_t *set);

/* Waits for a signal of set (blocked by stop_signals_block): its number,
 * 0 when set is not a valid set. */
int stop_signals_wait(const sigset_t *set);

/* A signal of set that is pending, taken: its number; 0 when none is (no
 * wait), for a program that must stop during a long start-up. */
int stop_signals_take_pending(const sigset_t *set);

#endif
