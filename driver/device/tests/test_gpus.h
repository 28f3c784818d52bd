// SPDX-License-Identifier: Apache-2.0
/* The fake GPU the unit tests of driver/device and driver/publish build
 * their devices from: an H100 of the catalogue as the tree reader fills
 * it in, numbered i (name gpu-<i>, index and minor i, its own UUID and PCI
 * address), healthy.  Tests change what they test from there. */
#ifndef FAKEHW_TEST_GPUS_H
#define FAKEHW_TEST_GPUS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakehw_tree.h"

static inline struct fakehw_device test_h100(int i)
{
    struct fakehw_device d;
    memset(&d, 0, sizeof(d));
    snprintf(d.name, sizeof(d.name), "gpu-%d", i);
    d.index = d.minor = i;
    snprintf(d.uuid, sizeof(d.uuid), "GPU-%08x-1111-2222-3333-444444444444", (unsigned)i);
    snprintf(d.product_name, sizeof(d.product_name), "NVIDIA H100 80GB HBM3");
    snprintf(d.architecture, sizeof(d.architecture), "Hopper");
    snprintf(d.brand, sizeof(d.brand), "NVIDIA");
    d.memory_bytes = 81559ULL << 20;
    snprintf(d.compute_capability, sizeof(d.compute_capability), "9.0");
    snprintf(d.driver_version, sizeof(d.driver_version), "580.95.05");
    snprintf(d.cuda_driver_version, sizeof(d.cuda_driver_version), "13.0");
    snprintf(d.pci_bus_id, sizeof(d.pci_bus_id), "0000:%02x:00.0", (i + 0x18) & 0xff);
    snprintf(d.pcie_root, sizeof(d.pcie_root), "pci0000:%02x", (i + 0x17) & 0xff);
    d.healthy = true;
    return d;
}

/* test_h100(0) ... test_h100(n - 1) in an array the caller frees; NULL
 * when out of memory. */
static inline struct fakehw_device *test_h100s(size_t n)
{
    struct fakehw_device *d = calloc(n, sizeof(*d));
    for (size_t i = 0; d != NULL && i < n; i++)
        d[i] = test_h100((int)i);
    return d;
}

#endif
