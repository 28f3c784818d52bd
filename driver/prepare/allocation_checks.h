// SPDX-License-Identifier: Apache-2.0
/* What prepare refuses of an allocation whatever the scheduler decided:
 * the scheduler should never allocate any of it, so a claim that has it
 * was written by hand, by a broken scheduler or by a hostile client, and
 * preparing it would hand out more than the device holds.
 *
 * - per result: a share (shareID or consumedCapacity.memory) of a device
 *   that is not shared by memory; consumed memory below the device's min,
 *   off its min + n*step grid, or more than its memory;
 * - within the claim, per GPU: two exclusive holds of its memory slices
 *   (the same device twice, a GPU and one of its MIG partitions, two
 *   overlapping partitions), an exclusive hold beside shares, shares
 *   adding up past the memory;
 * - against the claims prepared on the node since the plugin started (a
 *   record read from the checkpoint has no holds): another device of the
 *   same GPU whose memory slices overlap (a GPU and its partition, two
 *   overlapping partitions).  The same device in two claims is left to the
 *   scheduler, as are shares across claims.
 *
 * Results with adminAccess count for nothing here: the scheduler hands
 * devices in use to admin claims on purpose.  Every refusal names the
 * result, the device and the field; the caller prefixes the claim. */
#ifndef FAKEHW_PREPARE_ALLOCATION_CHECKS_H
#define FAKEHW_PREPARE_ALLOCATION_CHECKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "claim_allocation.h"
#include "error.h"
#include "fakehw_tree.h"

/* What one prepared allocation result holds of its GPU. */
struct device_hold {
    char device[FAKEHW_NAME_MAX];
    char gpu[FAKEHW_NAME_MAX]; /* the device itself, or a partition's parent */
    uint32_t slices;           /* memory slices of gpu it takes; all bits: the whole GPU */
    bool share;                /* a share of a GPU shared by memory, not an exclusive hold */
    bool admin;                /* adminAccess: not counted */
    uint64_t memory;           /* a share's consumed memory in bytes */
    uint64_t gpu_memory;       /* the device's memory in bytes */
};

/* The holds of one claim; ns, name and uid name it in refusals (all NULL
 * for the claim being prepared, which the caller names). */
struct claim_holds {
    const char *ns, *name, *uid;
    const struct device_hold *holds;
    size_t n;
};

/* Checks result i against its device d (the per-result rules above) and
 * fills *h. */
int allocation_check_result(const struct claim_result *r, size_t i, const struct fakehw_device *d,
                            struct device_hold *h, struct error *err);

/* Checks the claim being prepared (mine, one hold per result in result
 * order) within itself.  O(n log n). */
int allocation_check_claim(const struct claim_holds *mine, struct error *err);

/* Checks it against the claims prepared on the node.  O(n log n) in all
 * the holds, plus the devices of one GPU times this claim's results on it
 * when there is a conflict to name. */
int allocation_check_node(const struct claim_holds *mine, const struct claim_holds *others,
                          size_t n_others, struct error *err);

#endif
