// SPDX-License-Identifier: Apache-2.0
/* Files in the plugin's own directories, never through a symbolic link.
 *
 * The plugin directory and the metadata root belong to the plugin; a link
 * planted there (by root, or left by another tool) must not make the plugin
 * write, truncate or remove anything outside.  So what the plugin creates
 * below a root it opens level by level relative to directory descriptors
 * with O_NOFOLLOW, and a link it finds is refused with an error that names
 * it and where it points. */
#ifndef FAKEHW_PREPARE_OWNED_FILES_H
#define FAKEHW_PREPARE_OWNED_FILES_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* Sets err to "<path> is a symbolic link (to <target>); the plugin does not
 * follow links in its own directories: remove it".  Returns -1. */
int owned_link_error(int dirfd, const char *name, const char *path, struct error *err);

/* Writes root/rel atomically (temporary file, rename; no fsync), creating
 * root (its parent must exist) and the directories of rel (mode 0755) on
 * the way; rel is relative, "a/b/file".  When this call made the file's
 * directory, the file is written in place instead: nothing can read it yet,
 * and a crash halfway leaves it in a directory the caller must own only
 * once the write returned (the checkpoint line comes after the files).
 * Every level is opened without following links: a link anywhere below root
 * (or root itself) fails with owned_link_error's message. */
int owned_write_file(const char *root, const char *rel, const char *data, size_t len, mode_t mode,
                     struct error *err);

/* Opens a directory (O_DIRECTORY | O_NOFOLLOW); -1 with err, the link
 * message for a link. */
int owned_open_dir(int dirfd, const char *name, const char *path, struct error *err);

#endif
