// SPDX-License-Identifier: Apache-2.0
/* Strict reader of the fakehw tree: see fakehw_tree_read.h for the contract.
 * Devices file by file and the listing here; values in fakehw_tree_value.c,
 * the snapshot in fakehw_tree_snapshot.c, the device list both build in
 * fakehw_tree_list.c. */
#include "fakehw_tree_internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cleanup.h"
#include "dns_names.h"
#include "grow.h"
#include "xalloc.h"

/* Builds "<a>/<b>" (or "<a>/<b>/<c>" when c is not NULL) into out. */
static int join(char *out, size_t size, const char *a, const char *b, const char *c,
                struct error *err)
{
    int n = c ? snprintf(out, size, "%s/%s/%s", a, b, c) : snprintf(out, size, "%s/%s", a, b);
    if (n < 0 || (size_t)n >= size)
        return error_set_and_errno(err, ENAMETOOLONG, "%s/%s%s%s: path is longer than %zu bytes", a,
                                   b, c ? "/" : "", c ? c : "", size - 1);
    return 0;
}

int fakehw_tree_read_device(const char *root, const char *name, struct fakehw_device *dev,
                            struct error *err)
{
    char dir[PATH_MAX];
    if (join(dir, sizeof(dir), root, FAKEHW_DIR_DEVICES, name, err) < 0)
        return -1;
    if (!dns_label_valid(name)) {
        char q[128];
        return error_set_and_errno(err, EINVAL, "%s: device directory name %s is not a DNS label",
                                   dir, tree_quoted(q, sizeof(q), name));
    }
    /* Filled here and copied out only when every attribute is good. */
    struct fakehw_device d;
    memset(&d, 0, sizeof(d));
    char value[VALUE_MAX];
    for (size_t i = 0; i < FAKEHW_ATTR_COUNT; i++) {
        const struct fakehw_attr *a = &fakehw_device_attributes[i];
        char path[PATH_MAX];
        if (join(path, sizeof(path), dir, a->file, NULL, err) < 0)
            return -1;
        size_t cap = a->size ? a->size : FAKEHW_TEXT_MAX;
        if (fakehw_tree_read_value(path, value, cap, err) < 0) {
            if (a->optional && errno == ENOENT)
                continue;
            return -1;
        }
        if (tree_store_attr(a, path, value, &d, err) < 0)
            return -1;
    }
    if (strcmp(d.name, name) != 0) {
        char q[128];
        return error_set_and_errno(err, EINVAL,
                                   "%s/%s: %s does not match the directory name \"%s\"", dir,
                                   FAKEHW_ATTR(NAME), tree_quoted(q, sizeof(q), d.name), name);
    }
    *dev = d;
    return 0;
}

/* ---- the per-file walk: a plain directory, or a fakehw without snapshot ---- */

/* One entry of <root>/devices: a device directory, read into list[*count].
 * 0 also for an entry gone since readdir, which adds nothing. */
static int walk_entry(const char *root, const char *devdir, DIR *d, const char *name,
                      struct fakehw_device **list, size_t *count, size_t *cap, struct error *err)
{
    char q[128];
    if (!dns_label_valid(name))
        return error_set_and_errno(err, EINVAL,
                                   "%s: entry %s is not a DNS label (a device directory name)",
                                   devdir, tree_quoted(q, sizeof(q), name));
    struct stat st;
    if (fstatat(dirfd(d), name, &st, 0) < 0) {
        if (errno == ENOENT)
            return 0; /* removed since readdir */
        int saved = errno;
        error_set_errno(err, saved, "%s/%s", devdir, name);
        return tree_fail_with(saved);
    }
    if (!S_ISDIR(st.st_mode))
        return error_set_and_errno(err, ENOTDIR, "%s/%s: is not a directory", devdir, name);
    if (tree_grow(list, *count, cap, devdir, name, err) < 0)
        return -1;
    if (fakehw_tree_read_device(root, name, &(*list)[*count], err) < 0) {
        int saved = errno;
        if (saved == ENOENT && fstatat(dirfd(d), name, &st, 0) < 0 && errno == ENOENT)
            return 0; /* the whole device went away while we read it */
        return tree_fail_with(saved);
    }
    (*count)++;
    return 0;
}

static int list_walk(const char *root, struct fakehw_device **devs, size_t *n, struct error *err)
{
    char devdir[PATH_MAX];
    if (join(devdir, sizeof(devdir), root, FAKEHW_DIR_DEVICES, NULL, err) < 0)
        return -1;
    cleanup_closedir DIR *d = opendir(devdir);
    if (d == NULL)
        return tree_fail_errno(err, errno, devdir);
    cleanup_free struct fakehw_device *list = NULL;
    size_t count = 0, cap = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (de == NULL && errno != 0)
            return tree_fail_errno(err, errno, devdir);
        if (de == NULL)
            break;
        if (de->d_name[0] != '.' &&
            walk_entry(root, devdir, d, de->d_name, &list, &count, &cap, err) < 0)
            return -1;
    }
    return tree_finish_list(devdir, steal_pointer(&list), count, devs, n, err);
}

int fakehw_tree_list(const char *root, struct fakehw_device **devs, size_t *n, struct error *err)
{
    char path[PATH_MAX];
    if (join(path, sizeof(path), root, FAKEHW_FILE_SNAPSHOT, NULL, err) < 0)
        return -1;
    int rc = tree_read_snapshot(path, devs, n, err);
    return rc == 1 ? list_walk(root, devs, n, err) : rc;
}

int fakehw_tree_read_node(const char *root, char *buf, size_t size, struct error *err)
{
    char path[PATH_MAX];
    if (join(path, sizeof(path), root, FAKEHW_FILE_NODE, NULL, err) < 0)
        return -1;
    cleanup_free char *tmp = xmalloc(size);
    if (fakehw_tree_read_value(path, tmp, size, err) < 0 ||
        tree_check_printable(path, tmp, err) < 0)
        return -1;
    if (*tmp == '\0')
        return error_set_and_errno(err, EINVAL, "%s: is empty", path);
    memcpy(buf, tmp, strlen(tmp) + 1);
    return 0;
}

int fakehw_tree_parse_generation(const char *path, const char *text, size_t len, uint64_t *gen,
                                 struct error *err)
{
    char buf[32];
    if (len > 0 && text[len - 1] == '\n')
        len--;
    if (len >= sizeof(buf))
        return error_set_and_errno(err, EOVERFLOW, "%s: value is longer than %zu bytes", path,
                                   sizeof(buf) - 1);
    memcpy(buf, text, len);
    buf[len] = '\0';
    uint64_t v;
    if (memchr(text, '\0', len) != NULL || !tree_parse_u64(buf, &v)) {
        char q[128];
        return error_set_and_errno(err, EINVAL, "%s: %s is not a generation counter (decimal)",
                                   path, tree_quoted(q, sizeof(q), buf));
    }
    *gen = v;
    return 0;
}

int fakehw_tree_read_generation(const char *root, uint64_t *gen, struct error *err)
{
    char path[PATH_MAX];
    if (join(path, sizeof(path), root, FAKEHW_FILE_GENERATION, NULL, err) < 0)
        return -1;
    char buf[32];
    if (fakehw_tree_read_value(path, buf, sizeof(buf), err) < 0)
        return -1;
    return fakehw_tree_parse_generation(path, buf, strlen(buf), gen, err);
}
