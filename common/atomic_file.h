/* Crash-safe file replacement: write a temp file in the same directory,
 * fsync it, rename it over the target, fsync the directory.  A reader sees
 * either the old content or the new, never a mix; a crash leaves at most a
 * stray ".<name>.tmp.*" file, which the next write replaces. */
#ifndef FAKEHW_COMMON_ATOMIC_FILE_H
#define FAKEHW_COMMON_ATOMIC_FILE_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

int atomic_write_file(const char *path, const void *data, size_t len, mode_t mode,
                      struct error *err);

/* mkdir -p with the given mode for every directory it creates. */
int mkdir_p(const char *path, mode_t mode, struct error *err);

#endif
