// SPDX-License-Identifier: Apache-2.0
/* The shared device snapshot: see device_snapshot.h. */
#include "device_snapshot.h"

#include <stdlib.h>
#include <string.h>

struct device_snapshot *device_snapshot_new(struct fakehw_device *devs, size_t n, bool tree_up,
                                            struct error *err)
{
    struct device_snapshot *s = malloc(sizeof(*s));
    if (s == NULL) {
        free(devs);
        error_set(err, "out of memory keeping a snapshot of %zu devices", n);
        return NULL;
    }
    atomic_init(&s->refs, 1);
    s->tree_up = tree_up;
    s->n = n;
    s->devs = n > 0 ? devs : NULL;
    if (n == 0)
        free(devs);
    return s;
}

struct device_snapshot *device_snapshot_get(struct device_snapshot *s)
{
    /* Taking a reference needs no ordering: the caller already sees the
     * snapshot through a reference it holds or borrows. */
    if (s != NULL)
        atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    return s;
}

void device_snapshot_put(struct device_snapshot *s)
{
    if (s == NULL)
        return;
    /* Release: every earlier read of the snapshot by this holder happens
     * before the free; acquire on the last put pairs with the others'. */
    if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    free((void *)s->devs);
    free(s);
}

const struct fakehw_device *device_snapshot_find(const struct device_snapshot *s, const char *name)
{
    if (s == NULL)
        return NULL;
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->devs[i].name, name) == 0)
            return &s->devs[i];
    }
    return NULL;
}

size_t device_snapshot_refs(const struct device_snapshot *s)
{
    return s != NULL ? atomic_load_explicit(&s->refs, memory_order_relaxed) : 0;
}
