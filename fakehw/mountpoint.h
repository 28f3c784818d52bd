// SPDX-License-Identifier: Apache-2.0
/* Getting the mount point ready before fakehw mounts on it.
 *
 * A fakehw that died without unmounting (SIGKILL, a crash) leaves a stale
 * FUSE mount: every access fails with ENOTCONN ("Transport endpoint is not
 * connected").  Mounting over it would hide the problem, so it is an error
 * that says how to clear it, unless clear_stale asks fakehw to detach it
 * (lazy unmount) first.  A live FUSE mount at the same place (another
 * fakehw) is always an error; fakehw/takeover.h waits for it to go first. */
#ifndef FAKEHW_MOUNTPOINT_H
#define FAKEHW_MOUNTPOINT_H

#include <stdbool.h>

#include "error.h"

/* Creates dir if missing, then checks it as above. */
int mountpoint_prepare(const char *dir, bool clear_stale, struct error *err);

/* True when a live FUSE filesystem is mounted at dir (a stale one fails
 * stat with ENOTCONN and does not count). */
bool mountpoint_busy(const char *dir);

/* Lazily unmounts the FUSE mount at dir: umount2(MNT_DETACH) as root,
 * otherwise `fusermount3 -u -z`. */
int mountpoint_detach(const char *dir, struct error *err);

#endif
