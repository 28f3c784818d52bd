// SPDX-License-Identifier: Apache-2.0
/* One fake GPU as fakehw serves it: the configured values of the attributes
 * of its directory in the tree (the rows of FAKEHW_DEVICE_ATTRIBUTES in
 * fakehw_tree.h; render_config_attr in inventory.c maps each field to its
 * row) and its configured initial health.  The config builds these; the
 * inventory adds the live health state. */
#ifndef FAKEHW_GPU_H
#define FAKEHW_GPU_H

#include <stdbool.h>
#include <stdint.h>

#include "fakehw_tree.h"
#include "mig_profiles.h"
#include "uuid.h"

/* Driver pair every device gets unless the config says otherwise: a real
 * R580 datacenter driver and the CUDA version it reports. */
#define GPU_DEFAULT_DRIVER_VERSION      "580.95.05"
#define GPU_DEFAULT_CUDA_DRIVER_VERSION "13.0"

/* An attachable device (config key `attach`): it starts detached, and an
 * attach takes delay_ms, then succeeds or fails as `failure` scripts. */
struct gpu_attach {
    bool attachable;
    int64_t delay_ms;
    enum fakehw_attach_failure failure; /* the scripted failure at start */
};

enum gpu_mig_mode {
    GPU_MIG_OFF,     /* whole GPU only */
    GPU_MIG_DYNAMIC, /* every placement of every profile is offered */
    GPU_MIG_STATIC,  /* the configured instances only */
    GPU_MIG_NONE,    /* not a GPU: a partition */
};

/* The tree's migMode value of m ("" for GPU_MIG_NONE). */
const char *gpu_mig_mode_name(enum gpu_mig_mode m);

struct gpu_device {
    char name[FAKEHW_NAME_MAX]; /* DNS label, the directory name */
    long index;                 /* position on the node, 0.. */
    long minor;                 /* = index; the N of fakegpuN */
    char uuid[GPU_UUID_SIZE];
    char product_name[FAKEHW_TEXT_MAX];
    char architecture[FAKEHW_TEXT_MAX];
    char brand[FAKEHW_TEXT_MAX];
    uint64_t memory_bytes;
    char compute_capability[FAKEHW_TEXT_MAX];
    char driver_version[FAKEHW_TEXT_MAX];
    char cuda_driver_version[FAKEHW_TEXT_MAX];
    char pci_bus_id[FAKEHW_TEXT_MAX]; /* "0000:08:00.0" */
    char pcie_root[FAKEHW_TEXT_MAX];  /* "pci0000:07" */
    long numa_node;
    bool healthy; /* initial health from the config */
    char health_reason[FAKEHW_REASON_MAX];
    struct gpu_attach attach;
    bool virtual_gpu;       /* config key `virtual`: needs no node preparation */
    bool vfio;              /* config key `vfio`: bound to vfio-pci for passthrough */
    long iommu_group;       /* its PCI function's IOMMU group: = index */
    char pci_device_id[16]; /* the catalogue's "0x2330"; "" without a profile */
    char pci_device_name[FAKEHW_TEXT_MAX]; /* the catalogue's "GH100 [H100 SXM5 80GB]" */
    /* MIG (fakehw/mig_profiles.h).  A GPU has mig_mode and parent_index -1;
     * a partition (a MIG instance, or in dynamic mode a placement that may
     * be allocated) has mig_mode GPU_MIG_NONE, its parent GPU's name and
     * index, its profile and placement; its minor, PCI placement and device
     * node are the parent's. */
    enum gpu_mig_mode mig_mode;
    char parent[FAKEHW_NAME_MAX];
    long parent_index;
    char mig_profile[FAKEHW_NAME_MAX];
    long mig_start, mig_size;       /* memory slices start .. start+size-1 */
    int mig_profile_id;             /* partitions: GPU instance profile ID */
    struct mig_engines mig_engines; /* partitions: their engines; zero on a GPU */
    /* Consumable capacity (config_sharing.c): several claims may share the
     * GPU by memory; 0 = not shared. */
    uint64_t share_default, share_min, share_step;
};

#endif
