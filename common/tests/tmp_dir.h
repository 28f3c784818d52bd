// SPDX-License-Identifier: Apache-2.0
/* For the unit tests: a scratch directory under /tmp, and removing one with
 * all it holds when the test is done. */
#ifndef FAKEHW_TESTS_TMP_DIR_H
#define FAKEHW_TESTS_TMP_DIR_H

#include <ftw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

/* Makes a fresh directory /tmp/<name>.XXXXXX and puts its path into root
 * (size bytes); false when it cannot. */
static inline bool tmp_dir_make(char *root, size_t size, const char *name)
{
    int n = snprintf(root, size, "/tmp/%s.XXXXXX", name);
    return n > 0 && (size_t)n < size && mkdtemp(root) != NULL;
}

static inline int tmp_dir_remove_entry(const char *path, const struct stat *st, int flag,
                                       struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Removes path and everything below it, links as links (rm -rf); 0, or -1
 * with errno when something could not go. */
static inline int tmp_dir_remove(const char *path)
{
    return nftw(path, tmp_dir_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
