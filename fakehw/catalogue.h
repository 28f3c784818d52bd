// SPDX-License-Identifier: Apache-2.0
/* The built-in catalogue of real GPU models, so a config can say
 * `profile: H100-SXM5-80GB` and get the figures NVIDIA's driver reports:
 *   product_name        nvidia-smi --query-gpu=name
 *   architecture, brand nvidia-smi -q ("Product Architecture", "Product Brand")
 *   memory_mib          nvidia-smi --query-gpu=memory.total (MiB)
 *   compute_capability  nvidia-smi --query-gpu=compute_cap
 *   pci_device_id       the PCI device ID (lspci -n), "0x2330"
 *   pci_device_name     the PCI ID database's name of it (lspci), "GH100 [H100 SXM5 80GB]"
 * docs/fakehw.md has the same table for people. */
#ifndef FAKEHW_CATALOGUE_H
#define FAKEHW_CATALOGUE_H

#include <stddef.h>
#include <stdint.h>

struct gpu_profile {
    const char *name; /* what `profile:` names, e.g. "A100-SXM4-80GB" */
    const char *product_name;
    const char *architecture;
    const char *brand;
    uint64_t memory_mib;
    const char *compute_capability;
    const char *pci_device_id;
    const char *pci_device_name;
};

/* The profile called name (ASCII case-insensitive), or NULL. */
const struct gpu_profile *catalogue_find(const char *name);

size_t catalogue_size(void);

/* Profile number i (0 <= i < catalogue_size()), in catalogue order. */
const struct gpu_profile *catalogue_at(size_t i);

/* Writes "A100-SXM4-40GB, A100-SXM4-80GB, ..." into buf (cut to fit), for
 * error messages that list the choices. */
void catalogue_names(char *buf, size_t size);

#endif
