// SPDX-License-Identifier: Apache-2.0
/* Taking over the mount point from a predecessor.
 *
 * During a surge rolling update the new pod's fakehw starts while the old
 * pod's fakehw still serves the tree at the same host path.  Instead of
 * refusing (mountpoint.h), the new one waits until that mount is gone (the
 * old fakehw unmounted on SIGTERM) or has gone stale (it was killed; the
 * caller's mountpoint_prepare then clears it or says how), and mounts then.
 * The wait polls the mount point every TAKEOVER_POLL_MS and stays
 * interruptible by the caller's stop signals. */
#ifndef FAKEHW_TAKEOVER_H
#define FAKEHW_TAKEOVER_H

#include <signal.h>

#include "error.h"

#define TAKEOVER_POLL_MS 100

/* takeover_wait's result when a stop signal came. */
#define TAKEOVER_STOPPED 1

/* Returns 0 as soon as no live FUSE filesystem is mounted at dir (at once
 * when none is), TAKEOVER_STOPPED with *sig set when a signal of stop became
 * pending (it is taken), or -1 with err after timeout_s seconds or when
 * waiting for signals fails.  The signals of stop must be blocked. */
int takeover_wait(const char *dir, long timeout_s, const sigset_t *stop, int *sig,
                  struct error *err);

#endif
