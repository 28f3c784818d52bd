// SPDX-License-Identifier: Apache-2.0
/* What prepare refuses of an allocation: see allocation_checks.h. */
#include "allocation_checks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* The memory slices a partition takes; a GPU (or a placement a hand-made
 * tree got wrong) takes them all. */
static uint32_t slices_of(const struct fakehw_device *d)
{
    long start = d->mig_placement[0], size = d->mig_placement[1];
    if (d->parent[0] == '\0' || start < 0 || size <= 0 || start + size > 32)
        return UINT32_MAX;
    return (uint32_t)(((1ULL << size) - 1) << start);
}

int allocation_check_result(const struct claim_result *r, size_t i, const struct fakehw_device *d,
                            struct device_hold *h, struct error *err)
{
    memset(h, 0, sizeof(*h));
    snprintf(h->device, sizeof(h->device), "%s", d->name);
    snprintf(h->gpu, sizeof(h->gpu), "%s", d->parent[0] ? d->parent : d->name);
    h->slices = slices_of(d);
    h->admin = r->admin_access;
    h->gpu_memory = d->memory_bytes;
    const uint64_t *sh = d->memory_sharing; /* default, min, step; 0: not shared */
    h->share = r->share_id != NULL || r->has_consumed_memory;
    if (!h->share)
        return 0;
    if (sh[0] == 0)
        return error_set(err,
                         "allocation result %zu (device %s): %s: the device is not shared by "
                         "memory (its memorySharing is empty), so it has no shares to give",
                         i, d->name,
                         r->has_consumed_memory ? "consumedCapacity.memory" : "shareID");
    if (!r->has_consumed_memory) {
        h->memory = sh[0]; /* what a share that asks for nothing gets */
        return 0;
    }
    uint64_t v = r->consumed_memory;
    h->memory = v;
    const char *what = NULL;
    if (v < sh[1])
        what = "less than the device's min";
    else if (sh[2] != 0 && (v - sh[1]) % sh[2] != 0)
        what = "not the device's min plus a multiple of its step";
    else if (v > d->memory_bytes)
        return error_set(err,
                         "allocation result %zu (device %s): consumedCapacity.memory: %llu bytes "
                         "is more than the device's memory of %llu bytes",
                         i, d->name, (unsigned long long)v, (unsigned long long)d->memory_bytes);
    if (what != NULL)
        return error_set(err,
                         "allocation result %zu (device %s): consumedCapacity.memory: %llu bytes "
                         "is %s (min %llu, step %llu bytes)",
                         i, d->name, (unsigned long long)v, what, (unsigned long long)sh[1],
                         (unsigned long long)sh[2]);
    return 0;
}

/* One counted hold: owner is the index in others, or MINE. */
#define MINE SIZE_MAX
struct entry {
    const struct device_hold *h;
    size_t owner, index;
};

/* By GPU, then device, then the node's claims before this one, then
 * result order. */
static int compare_entries(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    int c = strcmp(x->h->gpu, y->h->gpu);
    if (c == 0)
        c = strcmp(x->h->device, y->h->device);
    if (c != 0)
        return c;
    bool xm = x->owner == MINE, ym = y->owner == MINE;
    if (xm != ym)
        return xm ? 1 : -1;
    if (x->owner != y->owner)
        return x->owner < y->owner ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* By GPU, then result order: the claim's own results. */
static int compare_in_claim(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    int c = strcmp(x->h->gpu, y->h->gpu);
    return c != 0 ? c : (x->index > y->index) - (x->index < y->index);
}

/* "allocation result 0 (device gpu-0) of this claim" or "device gpu-0 of
 * claim ns/name (uid ...), prepared on this node". */
static void describe(const struct entry *e, const struct claim_holds *others, char *buf,
                     size_t size)
{
    if (e->owner == MINE) {
        snprintf(buf, size, "allocation result %zu (device %s) of this claim", e->index,
                 e->h->device);
        return;
    }
    const struct claim_holds *o = &others[e->owner];
    snprintf(buf, size, "device %s of claim %s/%s (uid %s), prepared on this node", e->h->device,
             o->ns, o->name, o->uid);
}

static int overlap_error(const struct entry *e, const struct entry *p,
                         const struct claim_holds *others, struct error *err)
{
    char other[512];
    describe(p, others, other, sizeof(other));
    return error_set(err,
                     "allocation result %zu (device %s): device: GPU %s is held by %s, which "
                     "takes memory slices this result takes too",
                     e->index, e->h->device, e->h->gpu, other);
}

/* Result at of a GPU's group of this claim against the results before it,
 * whose exclusive holds take mask and whose shares take shared bytes. */
static int check_in_claim(const struct entry *group, size_t at, uint32_t mask, uint64_t shared,
                          struct error *err)
{
    const struct entry *e = &group[at];
    const struct device_hold *h = e->h;
    char other[512];
    bool clash = h->share ? mask != 0 : ((mask & h->slices) != 0 || shared > 0);
    if (clash) {
        size_t p = 0;
        while (p < at && (h->share ? group[p].h->share
                                   : !group[p].h->share && !(group[p].h->slices & h->slices)))
            p++;
        if (!h->share && !group[p].h->share)
            return overlap_error(e, &group[p], NULL, err);
        describe(&group[p], NULL, other, sizeof(other));
        if (h->share)
            return error_set(err,
                             "allocation result %zu (device %s): shareID: GPU %s is held whole "
                             "by %s; it cannot be shared as well",
                             e->index, h->device, h->gpu, other);
        return error_set(err,
                         "allocation result %zu (device %s): device: GPU %s is shared by memory "
                         "with %s; it cannot be held whole as well",
                         e->index, h->device, h->gpu, other);
    }
    if (h->share && shared + h->memory > h->gpu_memory)
        return error_set(err,
                         "allocation result %zu (device %s): consumedCapacity.memory: the shares "
                         "of GPU %s in this claim come to %llu bytes with this one, more than its "
                         "memory of %llu bytes",
                         e->index, h->device, h->gpu, (unsigned long long)(shared + h->memory),
                         (unsigned long long)h->gpu_memory);
    return 0;
}

int allocation_check_claim(const struct claim_holds *mine, struct error *err)
{
    struct entry *v = xcalloc(mine->n ? mine->n : 1, sizeof(*v));
    size_t used = 0;
    for (size_t i = 0; i < mine->n; i++)
        if (!mine->holds[i].admin)
            v[used++] = (struct entry){&mine->holds[i], MINE, i};
    qsort(v, used, sizeof(*v), compare_in_claim);
    int rc = 0;
    for (size_t start = 0; start < used && rc == 0;) {
        size_t end = start;
        uint32_t mask = 0;
        uint64_t shared = 0;
        for (; end < used && !strcmp(v[end].h->gpu, v[start].h->gpu) && rc == 0; end++) {
            rc = check_in_claim(v + start, end - start, mask, shared, err);
            if (v[end].h->share)
                shared += v[end].h->memory;
            else
                mask |= v[end].h->slices;
        }
        start = end;
    }
    free(v);
    return rc;
}

/* One GPU's entries [start, end), sorted by device: a result of this claim
 * against the other devices of the GPU that the node's claims hold. */
static int check_gpu_on_node(const struct entry *v, size_t start, size_t end,
                             const struct claim_holds *others, struct error *err)
{
    /* The slices the node's claims hold of each device (run) of the GPU,
     * then, for each run, those of the runs after it. */
    size_t n = end - start;
    uint32_t *run_mask = xcalloc(n, sizeof(*run_mask)), *after = xcalloc(n + 1, sizeof(*after));
    size_t *run_of = xcalloc(n, sizeof(*run_of)), runs = 0;
    for (size_t i = start; i < end; i++) {
        if (i > start && strcmp(v[i].h->device, v[i - 1].h->device) != 0)
            runs++;
        run_of[i - start] = runs;
        if (v[i].owner != MINE)
            run_mask[runs] |= v[i].h->slices;
    }
    runs++;
    for (size_t r = runs; r-- > 0;)
        after[r] = after[r + 1] | run_mask[r];
    int rc = 0;
    uint32_t before = 0; /* the runs before the current one */
    for (size_t i = start, r = 0; i < end && rc == 0; i++) {
        if (run_of[i - start] != r) {
            before |= run_mask[r];
            r = run_of[i - start];
        }
        const struct entry *e = &v[i];
        if (e->owner != MINE || !(e->h->slices & (before | after[r + 1])))
            continue;
        /* The same device in two claims is the scheduler's to prevent;
         * another device overlapping it is a MIG layout no GPU has. */
        for (size_t p = start; p < end; p++)
            if (v[p].owner != MINE && run_of[p - start] != r && (v[p].h->slices & e->h->slices)) {
                rc = overlap_error(e, &v[p], others, err);
                break;
            }
    }
    free(run_mask);
    free(after);
    free(run_of);
    return rc;
}

int allocation_check_node(const struct claim_holds *mine, const struct claim_holds *others,
                          size_t n_others, struct error *err)
{
    size_t n = mine->n;
    for (size_t k = 0; k < n_others; k++)
        n += others[k].n;
    struct entry *v = xcalloc(n ? n : 1, sizeof(*v));
    size_t used = 0;
    /* Exclusive holds only: shares are bounded within their claim. */
    for (size_t k = 0; k < n_others; k++)
        for (size_t i = 0; i < others[k].n; i++)
            if (!others[k].holds[i].admin && !others[k].holds[i].share)
                v[used++] = (struct entry){&others[k].holds[i], k, i};
    for (size_t i = 0; i < mine->n; i++)
        if (!mine->holds[i].admin && !mine->holds[i].share)
            v[used++] = (struct entry){&mine->holds[i], MINE, i};
    qsort(v, used, sizeof(*v), compare_entries);
    int rc = 0;
    for (size_t start = 0; start < used && rc == 0;) {
        size_t end = start;
        while (end < used && !strcmp(v[end].h->gpu, v[start].h->gpu))
            end++;
        rc = check_gpu_on_node(v, start, end, others, err);
        start = end;
    }
    free(v);
    return rc;
}
