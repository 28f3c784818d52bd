// SPDX-License-Identifier: Apache-2.0
/* The kubelet's health stream (v1alpha1 NodeWatchResources) read on a
 * thread of its own, recording when each device was last seen to change
 * state (CLOCK_REALTIME at the message's arrival), so a benchmark can ask
 * "when did the stream first say gpu-3 is unhealthy after time t". */
#ifndef FAKEHW_BENCH_HEALTH_WATCH_H
#define FAKEHW_BENCH_HEALTH_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct health_watch;

/* Opens the stream on the plugin's DRA socket and starts the reader; the
 * stream lasts at most timeout_s. */
struct health_watch *health_watch_start(const char *dra_socket, double timeout_s,
                                        struct error *err);

/* Waits for the first message (the full device list). */
int health_watch_wait_first(struct health_watch *w, int timeout_ms, struct error *err);

/* Waits up to timeout_ms until the stream has shown `device` healthy (or
 * not) in a message that arrived at or after since_ns; *t_ns gets that
 * arrival time. */
int health_watch_wait(struct health_watch *w, const char *device, bool healthy, int64_t since_ns,
                      int timeout_ms, int64_t *t_ns, struct error *err);

/* Joins the reader.  The stream must be ending: stop the plugin first (it
 * ends open streams on SIGTERM), or let the timeout pass.  NULL is fine. */
void health_watch_stop(struct health_watch *w);

#endif
