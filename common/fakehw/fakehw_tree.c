// SPDX-License-Identifier: Apache-2.0
/* Strict reader of the fakehw tree: see fakehw_tree_read.h for the contract.
 * Devices file by file and the listing here; values in fakehw_tree_value.c,
 * the snapshot in fakehw_tree_snapshot.c. */
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

static int compare_devices(const void *pa, const void *pb)
{
    const struct fakehw_device *a = pa, *b = pb;
    if (a->index != b->index)
        return a->index < b->index ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* For finding equal uuids: sorted by uuid, then position. */
static int compare_uuid_refs(const void *pa, const void *pb)
{
    const struct fakehw_device *a = *(const struct fakehw_device *const *)pa;
    const struct fakehw_device *b = *(const struct fakehw_device *const *)pb;
    int c = strcmp(a->uuid, b->uuid);
    return c != 0 ? c : (a < b ? -1 : a > b);
}

/* Same index or uuid twice means the tree is inconsistent: consumers key on
 * both.  devs is sorted by index; where names the tree in messages.  Sorting
 * keeps this O(n log n): 4,096 devices pairwise would cost more than reading
 * them. */
static int check_unique(const char *where, const struct fakehw_device *devs, size_t n,
                        struct error *err)
{
    for (size_t i = 1; i < n; i++)
        if (devs[i - 1].index == devs[i].index)
            return error_set_and_errno(err, EINVAL, "%s: devices %s and %s both have index %ld",
                                       where, devs[i - 1].name, devs[i].name, devs[i].index);
    if (n < 2)
        return 0;
    const struct fakehw_device **refs = malloc(n * sizeof(*refs));
    if (refs == NULL)
        return error_set_and_errno(err, ENOMEM, "%s: out of memory for %zu devices", where, n);
    for (size_t i = 0; i < n; i++)
        refs[i] = &devs[i];
    qsort(refs, n, sizeof(*refs), compare_uuid_refs);
    int rc = 0;
    for (size_t i = 1; i < n && rc == 0; i++)
        if (!strcmp(refs[i - 1]->uuid, refs[i]->uuid))
            rc = error_set_and_errno(err, EINVAL, "%s: devices %s and %s both have uuid %s", where,
                                     refs[i - 1]->name, refs[i]->name, refs[i]->uuid);
    free(refs);
    return rc;
}

/* Makes room for one more device in *list, growing with what was read so
 * far (never from a count the input declares), up to
 * FAKEHW_TREE_MAX_DEVICES; where names the line or directory for the error
 * beyond that. */
int tree_grow(struct fakehw_device **list, size_t count, size_t *cap, const char *where,
              const char *name, struct error *err)
{
    if (count >= FAKEHW_TREE_MAX_DEVICES)
        return error_set_and_errno(err, EOVERFLOW, "%s: device %s: more than %d devices", where,
                                   name, FAKEHW_TREE_MAX_DEVICES);
    GROW(*list, *cap, count + 1);
    return 0;
}

/* Sorts and checks what either way of reading found, and hands it out;
 * takes list either way. */
int tree_finish_list(const char *where, struct fakehw_device *taken, size_t count,
                     struct fakehw_device **devs, size_t *n, struct error *err)
{
    cleanup_free struct fakehw_device *list = taken;
    if (count > 1)
        qsort(list, count, sizeof(*list), compare_devices);
    if (check_unique(where, list, count, err) < 0)
        return -1;
    *devs = count > 0 ? steal_pointer(&list) : NULL;
    *n = count;
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
