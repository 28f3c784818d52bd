// SPDX-License-Identifier: Apache-2.0
/* The attributes of a device in the nvidia personality (personality.h):
 * the names, types and values NVIDIA's DRA driver publishes
 * (cmd/gpu-kubelet-plugin/deviceinfo.go, mig.go), in the ResourceSlice
 * attribute JSON shape.
 *
 *   type                             "gpu", or "mig" on a partition
 *   uuid                             GPU-... / MIG-... (the slice leaves it
 *                                    out on a dynamic-mode placement, which
 *                                    has no UUID before it is made:
 *                                    driver/publish/partitions.c)
 *   productName, architecture        as the tree has them
 *   brand                            NVML's name as go-nvlib spells it:
 *                                    "Nvidia" for nvidia-smi's "NVIDIA"
 *   cudaComputeCapability, driverVersion, cudaDriverVersion   versions
 *   resource.kubernetes.io/pciBusID  always
 *   resource.kubernetes.io/pcieRoot  when the tree has one
 *   resource.kubernetes.io/numaNode  when >= 0
 *
 * Not here: profile and parentUUID of partitions (driver/publish/
 * partitions.c adds them in both personalities), addressingMode (NVML
 * reports none on a GPU without coherent memory, and fakehw models none;
 * the real driver leaves it out then too).  Values follow device_attributes.h:
 * at most 64 characters, versions as semantic versions. */
#ifndef FAKEHW_DRIVER_DEVICE_NVIDIA_ATTRIBUTES_H
#define FAKEHW_DRIVER_DEVICE_NVIDIA_ATTRIBUTES_H

#include <jansson.h>

#include "error.h"
#include "fakehw_tree.h"

/* A new attribute object, or NULL with err naming the device.  A GPU bound
 * to vfio-pci gets a VFIO device's (nvidia_vfio.h). */
json_t *nvidia_attributes_json(const struct fakehw_device *d, struct error *err);

/* go-nvlib's spelling of an NVML brand given as nvidia-smi prints it
 * ("NVIDIA" -> "Nvidia", "GeForce RTX" -> "GeForceRTX", ...); an unknown
 * one is returned as it is. */
const char *nvidia_brand(const char *smi_brand);

#endif
