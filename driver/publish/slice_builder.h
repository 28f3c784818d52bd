// SPDX-License-Identifier: Apache-2.0
/* Turns the node's fake GPUs into the ResourceSlice objects of its pool.
 * Pure: same input, same output, no I/O (docs/resourceslices.md shows the
 * result).
 *
 * One pool per node: pool name = node name, spec.nodeName = node name, owner
 * reference to the Node (apiVersion v1, kind Node, its uid, controller true).
 * One device per GPU, named like its fakehw directory (gpu-0), with the
 * attributes of device_attributes_json (driver/device/device_attributes.h,
 * shared with the device metadata files) and capacity "memory" as a
 * Kubernetes quantity.  An unhealthy device carries the taints of
 * device_health_taints_json, or is left out when remove_unhealthy is set;
 * an ignored XID's taint (effect None) stays on a healthy device.
 *
 * Splitting: devices go in (index, name) order into slices of at most 128,
 * or at most 64 when any published device of the pool carries a taint or
 * consumes counters (the API's limit for slices with either).  MIG
 * partitions and counter sets: partitions.h.  A pool with no device still gets one
 * empty slice, so consumers see "no devices" rather than "no driver".
 *
 * The pool can be built whole (slice_build) or one slice at a time
 * (slice_layout_make, then slice_layout_slice for each index): the layout
 * decides which devices are published, in which order and how many per
 * slice, without keeping their JSON, so a sync holds one slice's JSON at a
 * time instead of the whole pool's.  Both give the same slices.
 *
 * Virtual GPUs (fakehw's `virtual: true`: no node preparation needed) go
 * after the others, in slices of their own whose spec carries
 * "skipNodeOperations": ["*"] (KEP-5945, gate DRAOptionalNodeOperations;
 * the field applies to a whole slice): the kubelet then makes no
 * NodePrepareResources/NodeUnprepareResources call for a claim whose
 * devices of this driver are all virtual.
 *
 * Slice i is created with generateName
 *   <i as lowercase hex, zero-padded to max(5, digits of n-1)>-<driver>-<node>-
 * cut to 58 characters (the API server cuts any generateName base there
 * before adding 5 random characters), as the v0.36 Go helper names them;
 * slice_generate_name gives the exact prefix the publisher matches. */
#ifndef FAKEHW_DRIVER_SLICE_BUILDER_H
#define FAKEHW_DRIVER_SLICE_BUILDER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver/device/personality.h"
#include "driver/health/device_health.h"
#include "error.h"
#include "fakehw_tree.h"
#include "partitions.h"

#define SLICE_MAX_DEVICES         128
#define SLICE_MAX_DEVICES_TAINTED 64
#define SLICE_GENERATE_NAME_MAX   58 /* 63 - 5 random characters */
#define SLICE_GENERATE_NAME_BUF   64
#define SLICE_INDEX_MIN_DIGITS    5

struct slice_build_input {
    const char *driver;   /* DNS subdomain, at most 63 */
    const char *node;     /* DNS subdomain: pool name and nodeName */
    const char *node_uid; /* for the owner reference */
    const struct fakehw_device *devs;
    size_t n_devs;
    bool tree_up; /* false: fakehw is gone, every device is unhealthy */
    enum taint_effect effect;
    bool remove_unhealthy; /* leave unhealthy devices out instead of tainting them */
    int64_t generation;    /* pool.generation written into every slice */
    /* Partitionable devices (partitions.h): publish counter sets and
     * consumesCounters; false: whole GPUs only (the server refused them). */
    bool partitions;
    /* With partitions: name the partition type attribute
     * (PARTITIONS_TYPE_ATTRIBUTE in the driver's domain) in
     * spec.partitionTypeAttribute of every slice whose devices consume
     * counters; false: not (the server dropped the field). */
    bool partition_type;
    /* Whose driver the slices stand for: names were given by the inventory;
     * this picks attributes, capacities and counters (personality.h) and
     * how XIDs are tainted (device_health.h). */
    enum personality personality;
    const struct xid_policy *xids; /* which XIDs are fatal; NULL: the default list */
};

struct slice_build_result {
    json_t *slices;   /* array of ResourceSlice objects, slice order */
    json_t *rejected; /* array of {"device": name, "error": why}: devices left out
                         because they break an API rule (they never block the others) */
    size_t published; /* devices in the slices */
    size_t tainted;   /* of which are unhealthy (tainted, not only by an ignored XID) */
    size_t removed;   /* unhealthy devices left out (remove_unhealthy) */
};

/* Builds the pool.  -1 with err only for a bad driver, node or uid (or no
 * memory); a device that breaks an API rule is rejected, not fatal. */
int slice_build(const struct slice_build_input *in, struct slice_build_result *out,
                struct error *err);
void slice_build_result_free(struct slice_build_result *r);

/* The shape of the pool: which devices are published, in slice order, and
 * how they split.  It points into the input's devices, which must stay
 * unchanged while it is used. */
struct slice_layout {
    const struct fakehw_device **order; /* the published devices, slice order */
    json_t *rejected;                   /* as in slice_build_result */
    size_t published, tainted, removed; /* as in slice_build_result */
    size_t per_slice;                   /* SLICE_MAX_DEVICES or SLICE_MAX_DEVICES_TAINTED */
    size_t n_slices;                    /* at least 1 */
    /* Virtual GPUs (fakehw `virtual`) come last in order, in slices of
     * their own that skip node operations: order[n_plain..published). */
    size_t n_plain;      /* devices that need node operations */
    size_t plain_slices; /* the slices that hold them, after the counter slices */
    /* Counter sets go first, in slices of their own (the API allows devices
     * or sharedCounters in one slice, not both): slices 0 .. counter_slices-1;
     * the device slices follow.  Devices that consume counters lower
     * per_slice to 64, the API's limit then. */
    struct partition_plan plan;
    size_t counter_slices;
    size_t counted; /* published devices that consume counters */
};

/* Decides the layout: checks the input like slice_build, builds and checks
 * each device's JSON one at a time and keeps none of it.  -1 with err like
 * slice_build. */
int slice_layout_make(const struct slice_build_input *in, struct slice_layout *out,
                      struct error *err);
void slice_layout_free(struct slice_layout *l);

/* Builds slice index (< l->n_slices) of the pool l was made for, from the
 * same input; NULL with err (out of memory). */
json_t *slice_layout_slice(const struct slice_build_input *in, const struct slice_layout *l,
                           size_t index, struct error *err);

/* Builds one device of the slice (no validation), with the attributes of
 * health's personality and the taints of its classification; NULL with err. */
json_t *slice_device_json(const struct fakehw_device *d, const char *driver, bool tree_up,
                          enum taint_effect effect, const struct health_policy *health,
                          struct error *err);

/* Digits of the index prefix for a pool of n_slices slices. */
int slice_index_digits(size_t n_slices);

/* Writes the generateName of slice index of a pool of n_slices into buf
 * (SLICE_GENERATE_NAME_BUF bytes). */
void slice_generate_name(size_t index, size_t n_slices, const char *driver, const char *node,
                         char *buf, size_t size);

/* Sets spec.pool.generation of a built slice. */
int slice_set_generation(json_t *slice, int64_t generation);

#endif
