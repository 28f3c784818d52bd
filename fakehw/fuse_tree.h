// SPDX-License-Identifier: Apache-2.0
/* The FUSE filesystem that serves an inventory as the fakehw tree
 * (layout: common/fakehw/fakehw_tree.h, docs/fakehw.md).
 *
 * Files are rendered on every read (direct I/O, no kernel caching, zero
 * entry and attribute timeouts), so readers always see the current values.
 * `snapshot` is the exception: it is rendered once per open(2), and every
 * read of that open serves the same text (one generation); its stat size is
 * 0 and the text is freed at release.
 * `health` is the only writable file: one write(2) per command, "STATE" or
 * "STATE REASON"; a bad value fails with EINVAL and changes nothing.
 * poll(2) on an open `generation` file reports POLLIN|POLLPRI once the
 * counter moved past the value that file descriptor last read (or saw at
 * open), and otherwise waits for the next change. */
#ifndef FAKEHW_FUSE_TREE_H
#define FAKEHW_FUSE_TREE_H

#include <stdbool.h>

#include "error.h"
#include "inventory.h"

struct fuse_tree;

/* Mounts the tree at mountpoint (an existing directory).  allow_other lets
 * other users (containers) read it; it needs root or user_allow_other in
 * /etc/fuse.conf.  Registers itself as inv's listener. */
struct fuse_tree *fuse_tree_mount(struct live_inventory *inv, const char *mountpoint,
                                  bool allow_other, struct error *err);

/* Serves requests on worker threads until fuse_tree_exit or an external
 * unmount.  Returns 0, or -1 with err when the session failed. */
int fuse_tree_loop(struct fuse_tree *t, struct error *err);

/* Makes fuse_tree_loop return.  Async-signal-safe; the signal must reach
 * a thread of the loop to interrupt it (the loop's threads leave SIGTERM,
 * SIGINT unblocked). */
void fuse_tree_exit(struct fuse_tree *t);

/* Unmounts (if still mounted) and frees.  NULL is fine. */
void fuse_tree_unmount(struct fuse_tree *t);

#endif
