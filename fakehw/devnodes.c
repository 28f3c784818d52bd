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

/* What a node stands for: a GPU's fakegpuN, a vfio GPU's IOMMU group node
 * vfio/<group>, or the VFIO container node vfio/vfio. */
enum node_kind { NODE_GPU, NODE_VFIO_GROUP, NODE_VFIO_CONTROL };

struct node_key {
    enum node_kind kind;
    long num; /* the minor, or the group; 0 for the control node */
};

struct devnodes {
    char dir[FAKEHW_PATH_MAX];
    struct node_key *keys; /* nodes this tracker made (or took over), unsorted */
    size_t n, cap;
    bool made_vfio_dir; /* <dir>/vfio, removed again when empty */
};

int devnode_path(const char *dir, long num, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s/" DEVNODE_PREFIX "%ld", dir, num);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

int devnode_vfio_path(const char *dir, long group, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s/" DEVNODE_VFIO_DIR "/%ld", dir, group);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

static int key_path(const char *dir, struct node_key k, char *buf, size_t size)
{
    if (k.kind == NODE_GPU)
        return devnode_path(dir, k.num, buf, size);
    if (k.kind == NODE_VFIO_GROUP)
        return devnode_vfio_path(dir, k.num, buf, size);
    int n = snprintf(buf, size, "%s/" DEVNODE_VFIO_DIR "/" DEVNODE_VFIO_CONTROL, dir);
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
        devnode_path(dir, FAKEHW_TREE_MAX_DEVICES - 1, longest, sizeof(longest)) < 0 ||
        devnode_vfio_path(dir, FAKEHW_TREE_MAX_DEVICES - 1, longest, sizeof(longest)) < 0) {
        error_set(err, "device node directory %s: path too long (at most %d bytes with /%s%d)", dir,
                  FAKEHW_PATH_MAX - 1, DEVNODE_PREFIX, FAKEHW_TREE_MAX_DEVICES - 1);
        free(dn);
        return NULL;
    }
    return dn;
}

static bool same_key(struct node_key a, struct node_key b)
{
    return a.kind == b.kind && a.num == b.num;
}

static bool tracked(const struct devnodes *dn, struct node_key k)
{
    for (size_t i = 0; i < dn->n; i++)
        if (same_key(dn->keys[i], k))
            return true;
    return false;
}

/* The nodes devs need, into keys (room for 2n + 1); returns how many. */
static size_t wanted_keys(const struct gpu_device *devs, size_t n, struct node_key *keys)
{
    size_t k = 0;
    bool any_vfio = false;
    for (size_t i = 0; i < n; i++) {
        keys[k++] = (struct node_key){NODE_GPU, devs[i].minor};
        if (devs[i].vfio && devs[i].parent[0] == '\0') {
            keys[k++] = (struct node_key){NODE_VFIO_GROUP, devs[i].iommu_group};
            any_vfio = true;
        }
    }
    if (any_vfio)
        keys[k++] = (struct node_key){NODE_VFIO_CONTROL, 0};
    return k;
}

static bool wanted(const struct node_key *keys, size_t n, struct node_key k)
{
    for (size_t i = 0; i < n; i++)
        if (same_key(keys[i], k))
            return true;
    return false;
}

static void remove_node(const struct devnodes *dn, struct node_key k)
{
    char path[FAKEHW_PATH_MAX];
    if (key_path(dn->dir, k, path, sizeof(path)) < 0)
        return;
    if (unlink(path) < 0 && errno != ENOENT)
        LOG_W("removing device node %s: %s", path, strerror(errno));
    else
        LOG_V(2, "removed device node %s", path);
}

/* <dir>/vfio for the VFIO nodes, made once. */
static int vfio_dir(struct devnodes *dn, struct error *err)
{
    char path[FAKEHW_PATH_MAX];
    snprintf(path, sizeof(path), "%s/" DEVNODE_VFIO_DIR, dn->dir);
    if (mkdir(path, 0755) == 0) {
        dn->made_vfio_dir = true;
        return 0;
    }
    struct stat st;
    if (errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    return error_set_errno(err, errno == EEXIST ? ENOTDIR : errno, "%s", path);
}

/* Makes (or takes over) the node of k. */
static int make_node(struct devnodes *dn, struct node_key k, struct error *err)
{
    char path[FAKEHW_PATH_MAX];
    if (key_path(dn->dir, k, path, sizeof(path)) < 0)
        return error_set(err, "device node path in %s too long", dn->dir);
    if (k.kind != NODE_GPU && vfio_dir(dn, err) < 0)
        return -1;
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
    struct node_key *want = calloc(2 * n + 1, sizeof(*want));
    if (want == NULL)
        return error_set(err, "out of memory");
    size_t nwant = wanted_keys(devs, n, want);
    /* Room for every node of this call, so tracking cannot fail midway. */
    GROW(dn->keys, dn->cap, dn->n + nwant);
    size_t before = dn->n;
    for (size_t i = 0; i < nwant; i++) {
        if (tracked(dn, want[i]))
            continue;
        if (make_node(dn, want[i], err) < 0) {
            for (size_t j = before; j < dn->n; j++)
                remove_node(dn, dn->keys[j]);
            dn->n = before;
            free(want);
            return -1;
        }
        dn->keys[dn->n++] = want[i];
    }
    for (size_t i = 0; i < dn->n;) {
        if (wanted(want, nwant, dn->keys[i])) {
            i++;
            continue;
        }
        remove_node(dn, dn->keys[i]);
        dn->keys[i] = dn->keys[--dn->n];
    }
    free(want);
    return 0;
}

void devnodes_free(struct devnodes *dn)
{
    if (dn == NULL)
        return;
    for (size_t i = 0; i < dn->n; i++)
        remove_node(dn, dn->keys[i]);
    if (dn->made_vfio_dir) {
        char path[FAKEHW_PATH_MAX];
        snprintf(path, sizeof(path), "%s/" DEVNODE_VFIO_DIR, dn->dir);
        (void)rmdir(path); /* only when empty: the nodes above are gone */
    }
    free(dn->keys);
    free(dn);
}
