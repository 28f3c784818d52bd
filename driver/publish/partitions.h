// SPDX-License-Identifier: Apache-2.0
/* Partitionable devices (KEP-4815) in the resource.k8s.io/v1 shape: which of
 * the node's fakehw devices are published how, and the JSON of the counter
 * sets and of each device's consumesCounters.
 *
 *   A GPU with MIG off: a plain device.
 *   A GPU in dynamic MIG mode: a counter set "<gpu>-counter-set" (counters
 *     "memory" = its memory in bytes and "memory-slice-0" .. "memory-slice-7"
 *     = 1 each, as NVIDIA's DRA driver names them), published in
 *     sharedCounters slices; the whole GPU consumes all of it, each partition
 *     (every placement of every profile) its memory and its memory slices,
 *     so the scheduler never hands out two that overlap.
 *   A GPU in static MIG mode: not published (it is cut into its instances);
 *     each instance is a plain device.
 *
 * With counters off (the API server refused them: an older release or the
 * DRAPartitionableDevices gate off) a dynamic-mode GPU is published as a
 * plain whole GPU and its placements are left out.
 *
 * Partitions carry the attributes type "mig", profile ("3g.40gb") and
 * parentUUID, as NVIDIA's driver publishes MIG devices.  The whole GPU of a
 * dynamic-mode GPU carries profile "full": profile is the slice's
 * partitionTypeAttribute (KEP-4815, 1.37 gate DRAPartitionableDevicesType:
 * the attribute whose value labels each counted device with its partition
 * type; the server requires it, as a string, on every device of the slice
 * that consumes counters, and devices of one type cost the same).
 *
 * In the nvidia personality (nvidia_capacity.h) the counter sets and
 * consumesCounters also count the engines, every partition and a
 * dynamic-mode GPU get their capacities, static instances their
 * memorySlice<i>, and a dynamic-mode placement has no uuid attribute. */
#ifndef FAKEHW_DRIVER_PUBLISH_PARTITIONS_H
#define FAKEHW_DRIVER_PUBLISH_PARTITIONS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "fakehw_tree.h"
#include "nvidia_capacity.h"

#define PARTITIONS_SETS_PER_SLICE     8 /* ResourceSliceMaxCounterSets */
#define PARTITIONS_COUNTER_SET_SUFFIX "-counter-set"
#define PARTITIONS_TYPE_ATTRIBUTE     "profile" /* in the driver's domain */
#define PARTITIONS_WHOLE_PROFILE      "full"

enum partition_role {
    PARTITION_PLAIN,   /* published without counters */
    PARTITION_COUNTED, /* published, consumes from counter set `set` */
    PARTITION_HIDDEN,  /* not published */
};

struct partition_info {
    enum partition_role role;
    size_t set;                         /* PARTITION_COUNTED: index into sets */
    const struct fakehw_device *parent; /* partitions: their GPU, NULL if not in the input */
};

struct partition_plan {
    struct partition_info *info;       /* per input device, same order */
    const struct fakehw_device **sets; /* the GPU of each counter set, in device order */
    size_t n_sets;
    bool nvidia;                  /* the nvidia personality's capacities and counters */
    struct nvidia_caps *set_caps; /* per counter set: the largest of its partitions' */
};

/* Plans devs (n of them).  counters false: no counter sets (see above);
 * nvidia: the nvidia personality's capacities and counters.  -1 with err
 * only for no memory. */
int partitions_plan(const struct fakehw_device *devs, size_t n, bool counters, bool nvidia,
                    struct partition_plan *out, struct error *err);
void partitions_plan_free(struct partition_plan *p);

/* Number of sharedCounters slices: ceil(n_sets / 8). */
size_t partitions_counter_slices(const struct partition_plan *p);

/* The counter set name of a GPU ("gpu-0-counter-set"; "gpu-<index>-counter-set"
 * when the name would not be a DNS label). */
void partitions_set_name(const struct fakehw_device *gpu, char *buf, size_t size);

/* The sharedCounters array of counter slice k; NULL with err. */
json_t *partitions_shared_counters_json(const struct partition_plan *p, size_t k,
                                        struct error *err);

/* Adds to dev (the JSON slice_device_json built for d, input device i) what
 * the plan says: for partitions the attributes profile and parentUUID, for
 * a counted whole GPU profile "full", for counted devices consumesCounters.
 * -1 with err. */
int partitions_decorate(const struct partition_plan *p, const struct fakehw_device *d, size_t i,
                        json_t *dev, struct error *err);

#endif
