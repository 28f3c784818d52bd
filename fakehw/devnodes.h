// SPDX-License-Identifier: Apache-2.0
/* Fake device nodes: one real character device per GPU, <dir>/fakegpuN
 * (N = the device's minor), with the null device's numbers (1:3), so a
 * container runtime can pass it through its cgroup device rules and a
 * process can open, read (EOF) and write (discarded) it.  A GPU bound to
 * vfio-pci (config key `vfio`) also gets the node of its IOMMU group,
 * <dir>/vfio/<group>, and while there is one, <dir>/vfio/vfio, the VFIO
 * container node: the same null device, standing for /dev/vfio/<group>
 * and /dev/vfio/vfio.  mknod needs CAP_MKNOD. */
#ifndef FAKEHW_DEVNODES_H
#define FAKEHW_DEVNODES_H

#include <stddef.h>

#include "error.h"
#include "gpu.h"

#define DEVNODE_PREFIX       "fakegpu"
#define DEVNODE_VFIO_DIR     "vfio"
#define DEVNODE_VFIO_CONTROL "vfio"

/* "<dir>/fakegpu<num>" into buf (num is the device minor); -1 when it does not fit. */
int devnode_path(const char *dir, long num, char *buf, size_t size);

/* "<dir>/vfio/<group>" into buf; -1 when it does not fit. */
int devnode_vfio_path(const char *dir, long group, char *buf, size_t size);

struct devnodes;

/* Tracks the nodes made in dir (which must exist). */
struct devnodes *devnodes_new(const char *dir, struct error *err);

/* Makes the node of every device that has none and removes the nodes this
 * tracker made for devices no longer present.  A leftover null device node
 * of the same name (from a crash) is reused; any other file in the way is
 * an error.  On error the nodes made by this call are removed again. */
int devnodes_sync(struct devnodes *dn, const struct gpu_device *devs, size_t n, struct error *err);

/* Removes every node made and frees the tracker.  NULL is fine. */
void devnodes_free(struct devnodes *dn);

#endif
