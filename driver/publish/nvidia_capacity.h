// SPDX-License-Identifier: Apache-2.0
/* Capacities and counters of the nvidia personality
 * (driver/device/personality.h), as NVIDIA's DRA driver publishes them
 * (cmd/gpu-kubelet-plugin/mig.go CommonCapacitiesMig, partitions.go):
 *
 *   GPU, MIG off           memory
 *   GPU, dynamic MIG       the largest value of each capacity over its
 *                          partitions (memory, multiprocessors, copyEngines,
 *                          decoders, encoders, jpegEngines, ofaEngines)
 *   MIG partition          memory and the six engines; a static instance
 *                          also memorySlice<i> = 1 for each memory slice
 *                          it takes
 *
 * Counters (dynamic MIG) carry the same values under DNS names
 * (copy-engines, jpeg-engines, ofa-engines: the real driver's
 * camelToDNSName) beside memory and memory-slice-<i>.  Engines are left out
 * where the tree does not know them (multiprocessors 0: a model without a
 * source for them, or an older fakehw). */
#ifndef FAKEHW_DRIVER_PUBLISH_NVIDIA_CAPACITY_H
#define FAKEHW_DRIVER_PUBLISH_NVIDIA_CAPACITY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "fakehw_tree.h"

#define NVIDIA_ENGINES 6

/* What a partition (or, as the maximum of its partitions, a GPU) offers. */
struct nvidia_caps {
    uint64_t memory;
    long engines[NVIDIA_ENGINES]; /* multiprocessors, copyEngines, ... as in the table */
};

/* The capacities of partition d. */
void nvidia_caps_of(const struct fakehw_device *d, struct nvidia_caps *c);

/* acc = the larger of acc and c, per capacity. */
void nvidia_caps_max(struct nvidia_caps *acc, const struct nvidia_caps *c);

/* Adds c to obj as {"memory": {"value": Q}, "multiprocessors": {"value":
 * "N"}, ...}: capacity names, or counter names when counters.  -1 with err. */
int nvidia_caps_add(json_t *obj, const struct nvidia_caps *c, bool counters, struct error *err);

/* Adds memorySlice<start> .. memorySlice<start+size-1> = 1 to capacity. */
int nvidia_memory_slices_add(json_t *capacity, long start, long size, struct error *err);

#endif
