// SPDX-License-Identifier: Apache-2.0
/* Crash-safe file replacement: write a temp file in the same directory,
 * fsync it, rename it over the target, fsync the directory.  A reader sees
 * either the old content or the new, never a mix; a crash leaves at most a
 * stray ".<name>.tmp.*" file, which the next write replaces. */
#ifndef FAKEHW_COMMON_ATOMIC_FILE_H
#define FAKEHW_COMMON_ATOMIC_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

int atomic_write_file(const char *path, const void *data, size_t len, mode_t mode,
                      struct error *err);

/* The same temp file and rename, without either fsync: readers still see
 * the old content or the new, never a mix, but a crash of the machine (not
 * of the process) can lose the new file or leave it empty.  For derived
 * data the writer can rebuild; about 5x cheaper than atomic_write_file on a
 * disk. */
int atomic_write_file_nosync(const char *path, const void *data, size_t len, mode_t mode,
                             struct error *err);

/* Creates path with data, complete when it appears, without a temporary
 * name: an unnamed file (O_TMPFILE) written, then linked in.  Someone
 * watching the directory with inotify sees one IN_CREATE, no write, no
 * rename (the CDI cache of container runtimes re-reads its directories on
 * writes, renames and removals only).  No fsync.  Where the filesystem has
 * no O_TMPFILE, /proc is missing, or path exists, it is
 * atomic_write_file_nosync instead. */
int atomic_create_file_quiet(const char *path, const void *data, size_t len, mode_t mode,
                             struct error *err);

/* Does the process's umask take bits of mode away?  A file created with
 * mode then needs a chmod to have it. */
bool umask_strips(mode_t mode);

/* fsync of directory dir, so a name created or renamed in it is durable. */
int fsync_dir(const char *dir, struct error *err);

/* mkdir -p with the given mode for every directory it creates.  One mkdir
 * when the parent exists already. */
int mkdir_p(const char *path, mode_t mode, struct error *err);

#endif
