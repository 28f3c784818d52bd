// SPDX-License-Identifier: Apache-2.0
/* The plugin's personality: whose driver it stands in for.
 *
 *   fakehw  (default) driver gpu.fakehw.example.com; devices under the fakehw
 *           tree's names, attributes as device_attributes.h lists them.
 *   nvidia  a drop-in for NVIDIA's DRA driver (dra-driver-nvidia-gpu):
 *           driver gpu.nvidia.com; GPUs named gpu-<minor>, MIG devices
 *           gpu-<minor>-mig-<profile without dots>-<profile ID>-<placement
 *           start> (gpu-0-mig-3g40gb-9-4), as that driver names them; its
 *           attributes, capacities and counters (nvidia_attributes.h,
 *           driver/publish/nvidia_capacity.h); a GPU bound to vfio-pci
 *           (fakehw's `vfio`) as its VFIO device gpu-vfio-<i>
 *           (nvidia_vfio.h).
 *
 * The personality renames the devices of each snapshot as the inventory
 * reads it, so slices, prepare, health and claim status all see one name;
 * paths into the tree use the tree's names (fakehw_device_dir). */
#ifndef FAKEHW_DRIVER_DEVICE_PERSONALITY_H
#define FAKEHW_DRIVER_DEVICE_PERSONALITY_H

#include <stddef.h>

#include "error.h"
#include "fakehw_tree.h"

enum personality {
    PERSONALITY_FAKEHW = 0,
    PERSONALITY_NVIDIA,
};

#define PERSONALITY_DEFAULT_NAME "fakehw"

/* "fakehw" or "nvidia" into *out; anything else is an error naming the
 * value and the choices. */
int personality_parse(const char *name, enum personality *out, struct error *err);

const char *personality_name(enum personality p);

/* The driver name the personality stands for: gpu.fakehw.example.com or
 * gpu.nvidia.com. */
const char *personality_driver_name(enum personality p);

/* The name device d is published under (buf of FAKEHW_NAME_MAX): the
 * tree's name for fakehw; for nvidia as above (a partition's minor is its
 * GPU's; a VFIO device's name needs the node's other GPUs:
 * personality_rename gives it).  -1 with err when the name would not be a DNS label of at most
 * 63 characters. */
int personality_device_name(enum personality p, const struct fakehw_device *d, char *buf,
                            size_t size, struct error *err);

/* Renames devs (n of them) in place: name and parent become the published
 * names, dir and parent_dir keep the tree's.  On error (a name too long,
 * two devices under one name) nothing is renamed. */
int personality_rename(enum personality p, struct fakehw_device *devs, size_t n, struct error *err);

/* The tree directory of d: dir when a personality renamed it, else name. */
const char *fakehw_device_dir(const struct fakehw_device *d);
/* The tree directory of d's parent GPU ("" on a GPU). */
const char *fakehw_device_parent_dir(const struct fakehw_device *d);

#endif
