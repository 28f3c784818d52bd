// SPDX-License-Identifier: Apache-2.0
/* For fakehw's unit tests of the live inventory: a healthy H100 as the
 * catalogue describes it, and a check of one file the inventory serves.
 * Include after <cmocka.h>. */
#ifndef FAKEHW_TESTS_INVENTORY_HELPERS_H
#define FAKEHW_TESTS_INVENTORY_HELPERS_H

#include <stdio.h>
#include <string.h>

#include "gpu.h"
#include "inventory.h"
#include "uuid.h"

/* A healthy H100 with the name and index a test gives it. */
static inline void make_h100(struct gpu_device *d, long index, const char *name)
{
    memset(d, 0, sizeof(*d));
    snprintf(d->name, sizeof(d->name), "%s", name);
    d->index = d->minor = index;
    gpu_uuid_derive("test-node", name, d->uuid);
    snprintf(d->product_name, sizeof(d->product_name), "NVIDIA H100 80GB HBM3");
    snprintf(d->architecture, sizeof(d->architecture), "Hopper");
    snprintf(d->brand, sizeof(d->brand), "NVIDIA");
    d->memory_bytes = 81559ULL << 20;
    snprintf(d->compute_capability, sizeof(d->compute_capability), "9.0");
    snprintf(d->driver_version, sizeof(d->driver_version), "580.95.05");
    snprintf(d->cuda_driver_version, sizeof(d->cuda_driver_version), "13.0");
    snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "0000:%02lx:00.0", 8 + index);
    snprintf(d->pcie_root, sizeof(d->pcie_root), "pci0000:07");
    d->healthy = true;
}

/* The inventory serves want as dev/file (the tree's top when dev is NULL). */
static inline void expect_file(struct live_inventory *inv, const char *dev, const char *file,
                               const char *want)
{
    char buf[INVENTORY_FILE_MAX];
    size_t len;
    int64_t mtime;
    uint64_t gen;
    struct error err;
    if (inventory_read_file(inv, dev, file, buf, sizeof(buf), &len, &mtime, &gen, &err) != 0)
        fail_msg("%s/%s: %s", dev ? dev : "", file, err.msg);
    assert_string_equal(buf, want);
    assert_int_equal(len, strlen(want));
}

#endif
