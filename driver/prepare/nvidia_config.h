// SPDX-License-Identifier: Apache-2.0
/* Opaque device configuration of the nvidia personality: NVIDIA's DRA
 * driver's resource.nvidia.com/v1beta1 kinds (its api/nvidia.com/resource/
 * v1beta1), parsed and validated as that driver does with its gates
 * TimeSlicingSettings and MPSSupport on (docs/nvidia.md):
 *
 *   kind: GpuConfig                     whole GPUs
 *   sharing:
 *     strategy: TimeSlicing | MPS       required
 *     timeSlicingConfig: {interval: Default | Short | Medium | Long}   TimeSlicing only
 *     mpsConfig:                        MPS only
 *       defaultActiveThreadPercentage: 0..100
 *       defaultPinnedDeviceMemoryLimit: <quantity, at least 1Mi>
 *       defaultPerDevicePinnedMemoryLimit: {<device UUID or index>: <quantity>}
 *       multiUser: true | false
 *   kind: MigDeviceConfig               MIG devices
 *   sharing: {strategy: TimeSlicing | MPS, mpsConfig: {...}}
 *   kind: VfioDeviceConfig              VFIO devices
 *   iommu: {backendPolicy: LegacyOnly | PreferIommuFD, enableAPIDevice: bool}
 *
 * Which entry applies to a result, as the real driver picks it: the
 * entries of status.allocation.devices.config for this driver, FromClass
 * before FromClaim, each in list order, after a default GpuConfig and
 * MigDeviceConfig (no sharing), the last entry that applies wins: one that
 * names the result's request ("req" also matches "req/sub"), which must
 * then be of the device's kind (else an error), or one that names no
 * request and is of the device's kind.  Entries do not merge.  A TimeSlicing entry without
 * an interval gets Default; an MPS entry's per-device limits name the
 * devices the entry applies to, by UUID or by index in their sorted UUIDs.
 *
 * Every refusal names the entry and the field:
 *   config[1] (FromClaim): parameters: field "sharing.strategy": "Fast" is
 *   not one of TimeSlicing, MPS */
#ifndef FAKEHW_PREPARE_NVIDIA_CONFIG_H
#define FAKEHW_PREPARE_NVIDIA_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "fakehw_tree.h"

#define NVIDIA_CONFIG_API_VERSION "resource.nvidia.com/v1beta1"
#define NVIDIA_MPS_PIPE_DIRECTORY "/tmp/nvidia-mps" /* where the real driver mounts the pipes */
#define NVIDIA_MPS_LIMITS_MAX     64                /* per-device limits of one entry */

enum nvidia_config_kind {
    NVIDIA_GPU_CONFIG,
    NVIDIA_MIG_DEVICE_CONFIG,
    NVIDIA_VFIO_DEVICE_CONFIG,
};

enum nvidia_sharing {
    NVIDIA_SHARING_NONE, /* no sharing section */
    NVIDIA_SHARING_TIME_SLICING,
    NVIDIA_SHARING_MPS,
};

/* The effective configuration of one allocation result. */
struct nvidia_config {
    enum nvidia_config_kind kind;
    long entry;         /* index in status.allocation.devices.config; -1: the default */
    const char *source; /* "FromClass" / "FromClaim"; NULL for the default */
    enum nvidia_sharing sharing;
    const char *interval;          /* TimeSlicing on a GPU: static "Default" ... */
    long active_thread_percentage; /* MPS: -1 when not set */
    uint64_t pinned_limit_mib;     /* MPS: this device's pinned memory limit; 0 = none */
    char pinned_limits[1024];      /* MPS: "<uuid>=<N>M,..." of the entry's devices; "" = none */
    bool multi_user;               /* MPS */
    const char *iommu_backend;     /* VFIO: "LegacyOnly" | "PreferIommuFD" */
    bool iommu_api_device;         /* VFIO */
};

const char *nvidia_config_kind_name(enum nvidia_config_kind k);
const char *nvidia_sharing_name(enum nvidia_sharing s); /* "", "TimeSlicing", "MPS" */

/* Fills out[i] with the config of result i: request requests[i] ("req" or
 * "req/sub") on device devs[i] (a partition is a MIG device).  config is
 * status.allocation.devices.config (an array, or NULL).  -1 with err naming
 * the entry and field. */
int nvidia_config_resolve(const char *driver, const json_t *config, const char *const *requests,
                          const struct fakehw_device *devs, size_t n, struct nvidia_config *out,
                          struct error *err);

/* c as the claim's device status data shows it, in the real API's words:
 *   {"kind": "GpuConfig", "source": "FromClaim", "entry": 0,
 *    "sharing": {"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": 25,
 *                "pinnedDeviceMemoryLimit": "1024M", "multiUser": false}}}
 * (no source and entry for the default; timeSlicingConfig.interval for
 * TimeSlicing on a GPU; iommu for VFIO).  NULL when out of memory. */
json_t *nvidia_config_json(const struct nvidia_config *c);

/* The config of allocation result `result` of claim, resolved over the
 * claim's results of driver in pool with their devices from find: NULL when
 * that result is not one of them, a device is not found or the config does
 * not resolve (prepare refuses the claim then, saying why). */
typedef const struct fakehw_device *(*nvidia_device_find_fn)(void *ctx, const char *name);
json_t *nvidia_config_claim_data(const char *driver, const char *pool, const json_t *claim,
                                 size_t result, nvidia_device_find_fn find, void *find_ctx);

#endif
