// SPDX-License-Identifier: Apache-2.0
/* The device list both ways of reading the tree build (the per-file walk of
 * fakehw_tree_read.c and the snapshot of fakehw_tree_snapshot.c): bounded
 * growth, then one sort and one check of unique indexes and uuids. */
#include "fakehw_tree_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "grow.h"

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
