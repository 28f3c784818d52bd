// SPDX-License-Identifier: Apache-2.0
/* Why mounting the fakehw tree failed, in words that say what to do.
 * libfuse only reports that the mount failed (and prints its own line);
 * fakehw then looks at /dev/fuse and at its own privileges and tells a
 * missing device (the fuse module, a container without the host's
 * /dev/fuse) from a permission problem (neither root nor CAP_SYS_ADMIN, a
 * container that is not privileged). */
#ifndef FAKEHW_FUSE_ACCESS_H
#define FAKEHW_FUSE_ACCESS_H

#include <stdbool.h>
#include <stddef.h>

#define FUSE_DEVICE "/dev/fuse"

/* The advice for a failed mount: open_errno is how opening the FUSE device
 * read-write failed (0: it opened), may_mount whether the process may
 * mount by itself (root with CAP_SYS_ADMIN).  Never NULL. */
const char *fuse_mount_advice(int open_errno, bool may_mount);

/* Opens device to see what stops a mount and writes "<what>: <advice>"
 * into buf. */
void fuse_mount_diagnose(const char *device, char *buf, size_t size);

#endif
