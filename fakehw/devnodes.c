// SPDX-License-Identifier: Apache-2.0
/* Fake device nodes: see devnodes.h. */
#include "devnodes.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "grow.h"
#include "log.h"

/* The null device: reads give EOF, writes are discarded. */
#define NULL_MAJOR 1
#define NULL_MINOR 3

struct devnodes {
    char dir[FAKEHW_PATH_MAX];
    long *minors; /* nodes this tracker made (or took over), unsorted */
    size_t n, cap;
};

int devnode_path(const char *dir, long num, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s/" DEVNODE_PREFIX "%ld", dir, num);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

struct devnodes *devnodes_new(const char *dir, struct error *err)
{
    struct stat st;
    if (stat(dir, &st) < 0) {
        error_set_errno(err, errno, "device node directory %s", dir);
        return NULL;
    }
    if (!S_ISDIR(st.st_mode)) {
        error_set(err, "device node directory %s is not a directory", dir);
        return NULL;
    }
    struct devnodes *dn = calloc(1, sizeof(*dn));
    if (dn == NULL) {
        error_set(err, "out of memory");
        return NULL;
    }
    /* Readers take devicePath into FAKEHW_PATH_MAX bytes: every node's path must fit. */
    char longest[FAKEHW_PATH_MAX];
    if (snprintf(dn->dir, sizeof(dn->dir), "%s", dir) >= (int)sizeof(dn->dir) ||
        devnode_path(dir, FAKEHW_TREE_MAX_DEVICES - 1, longest, sizeof(longest)) < 0) {
        error_set(err, "device node directory %s: path too long (at most %d bytes with /%s%d)", dir,
                  FAKEHW_PATH_MAX - 1, DEVNODE_PREFIX, FAKEHW_TREE_MAX_DEVICES - 1);
        free(dn);
        return NULL;
    }
    return dn;
}

static bool tracked(const struct devnodes *dn, long num)
{
    for (size_t i = 0; i < dn->n; i++)
        if (dn->minors[i] == num)
            return true;
    return false;
}

static bool wanted(const struct gpu_device *devs, size_t n, long num)
{
    for (size_t i = 0; i < n; i++)
        if (devs[i].minor == num)
            return true;
    return false;
}

static void remove_node(const struct devnodes *dn, long num)
{
    char path[FAKEHW_PATH_MAX];
    if (devnode_path(dn->dir, num, path, sizeof(path)) < 0)
        return;
    if (unlink(path) < 0 && errno != ENOENT)
        LOG_W("removing device node %s: %s", path, strerror(errno));
    else
        LOG_V(2, "removed device node %s", path);
}

/* Makes (or takes over) the node for minor. */
static int make_node(const struct devnodes *dn, long num, struct error *err)
{
    char path[FAKEHW_PATH_MAX];
    if (devnode_path(dn->dir, num, path, sizeof(path)) < 0)
        return error_set(err, "device node path in %s too long", dn->dir);
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISCHR(st.st_mode) && major(st.st_rdev) == NULL_MAJOR &&
            minor(st.st_rdev) == NULL_MINOR) {
            LOG_V(1, "reusing device node %s left from an earlier run", path);
            return 0;
        }
        return error_set(err, "%s exists and is not a null device node (1:3); remove it", path);
    }
    if (errno != ENOENT)
        return error_set_errno(err, errno, "%s", path);
    /* mknod applies the umask; chmod sets the mode the runtimes expect. */
    if (mknod(path, S_IFCHR | 0666, makedev(NULL_MAJOR, NULL_MINOR)) < 0) {
        int e = errno;
        return error_set_errno(err, e, "mknod %s%s", path,
                               e == EPERM ? " (--dev-dir needs CAP_MKNOD)" : "");
    }
    if (chmod(path, 0666) < 0) {
        int e = errno;
        unlink(path);
        return error_set_errno(err, e, "chmod %s", path);
    }
    LOG_V(2, "made device node %s (1:3)", path);
    return 0;
}

int devnodes_sync(struct devnodes *dn, const struct gpu_device *devs, size_t n, struct error *err)
{
    /* Room for every node of this call, so tracking cannot fail midway. */
    GROW(dn->minors, dn->cap, dn->n + n);
    size_t before = dn->n;
    for (size_t i = 0; i < n; i++) {
        if (tracked(dn, devs[i].minor))
            continue;
        if (make_node(dn, devs[i].minor, err) < 0) {
            for (size_t j = before; j < dn->n; j++)
                remove_node(dn, dn->minors[j]);
            dn->n = before;
            return -1;
        }
        dn->minors[dn->n++] = devs[i].minor;
    }
    for (size_t i = 0; i < dn->n;) {
        if (wanted(devs, n, dn->minors[i])) {
            i++;
            continue;
        }
        remove_node(dn, dn->minors[i]);
        dn->minors[i] = dn->minors[--dn->n];
    }
    return 0;
}

void devnodes_free(struct devnodes *dn)
{
    if (dn == NULL)
        return;
    for (size_t i = 0; i < dn->n; i++)
        remove_node(dn, dn->minors[i]);
    free(dn->minors);
    free(dn);
}
