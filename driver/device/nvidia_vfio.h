// SPDX-License-Identifier: Apache-2.0
/* VFIO devices of the nvidia personality: a GPU that fakehw has bound to
 * vfio-pci (its config key `vfio`), as NVIDIA's DRA driver publishes such a
 * GPU with its gate PassthroughSupport (cmd/gpu-kubelet-plugin/
 * deviceinfo.go VfioDeviceInfo, nvlib.go getVfioDeviceInfo): not as a
 * gpu device (NVML does not see it) but as
 *
 *   name        gpu-vfio-<i>, i its position among the node's GPUs in PCI
 *               bus id order (go-nvlib's GetGPUs), bound to vfio-pci or not
 *   type        "vfio"
 *   uuid        the version 5 UUID of its PCI bus id in the DNS namespace
 *               (uuid.NewSHA1(uuid.NameSpaceDNS, address)), no GPU- prefix
 *   deviceID    the PCI device ID, "0x2330" (left out when fakehw does not
 *               know it: a GPU without a catalogue profile)
 *   vendorID    "0x10de"
 *   productName the PCI ID database's name, "GH100 [H100 SXM5 80GB]" (the
 *               tree's productName when that is not known)
 *   iommuFDEnabled  false: fakehw makes no /dev/iommu
 *   resource.kubernetes.io/pciBusID, pcieRoot, numaNode   as on a GPU
 *   capacity addressableMemory: the next power of two of its 64-bit BARs
 *               (go-nvlib's GetTotalAddressableMemory(true)); fakehw models
 *               a data-centre board's BARs: BAR1 the next power of two of
 *               its memory, BAR3 32 MiB, so twice the next power of two of
 *               the memory (an H100 80GB: 256Gi). */
#ifndef FAKEHW_DRIVER_DEVICE_NVIDIA_VFIO_H
#define FAKEHW_DRIVER_DEVICE_NVIDIA_VFIO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "fakehw_tree.h"

#define NVIDIA_VFIO_TYPE      "vfio"
#define NVIDIA_PCI_VENDOR_ID  "0x10de"
#define NVIDIA_VFIO_UUID_SIZE 37 /* 36 characters and NUL */

/* Whether d is published as a VFIO device (a GPU, not a partition, bound
 * to vfio-pci). */
bool nvidia_is_vfio(const struct fakehw_device *d);

/* The version 5 UUID of a PCI bus id, lowercase, into buf (at least
 * NVIDIA_VFIO_UUID_SIZE bytes). */
void nvidia_vfio_uuid(const char *pci_bus_id, char *buf);

/* addressableMemory in bytes for a GPU of memory bytes (see above). */
uint64_t nvidia_vfio_addressable_memory(uint64_t memory);

/* The attributes of VFIO device d, or NULL with err naming it. */
json_t *nvidia_vfio_attributes_json(const struct fakehw_device *d, struct error *err);

/* The slice capacity of VFIO device d: {"addressableMemory": {"value": Q}}. */
json_t *nvidia_vfio_capacity_json(const struct fakehw_device *d, struct error *err);

#endif
