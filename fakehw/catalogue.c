// SPDX-License-Identifier: Apache-2.0
/* The built-in GPU catalogue: see catalogue.h.  Figures are what the driver
 * reports on the real boards; memory.total is not the marketing size (that
 * one is in decimal GB and rounded), e.g. an "80GB" H100 reports 81559 MiB.
 * The PCI device IDs and their names are the PCI ID database's as go-nvlib
 * v0.12.0 embeds it (pkg/pciids/default_pci.ids), which NVIDIA's DRA driver
 * publishes for a GPU bound to vfio-pci. */
#include "catalogue.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "text_list.h"

static const struct gpu_profile profiles[] = {
    {"A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB", "Ampere", "NVIDIA", 40960, "8.0", "0x20b0",
     "GA100 [A100 SXM4 40GB]"},
    {"A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", "Ampere", "NVIDIA", 81920, "8.0", "0x20b2",
     "GA100 [A100 SXM4 80GB]"},
    {"A100-PCIE-40GB", "NVIDIA A100-PCIE-40GB", "Ampere", "NVIDIA", 40960, "8.0", "0x20f1",
     "GA100 [A100 PCIe 40GB]"},
    {"A100-PCIE-80GB", "NVIDIA A100 80GB PCIe", "Ampere", "NVIDIA", 81920, "8.0", "0x20b5",
     "GA100 [A100 PCIe 80GB]"},
    {"A10", "NVIDIA A10", "Ampere", "NVIDIA", 23028, "8.6", "0x2236", "GA102GL [A10]"},
    {"H100-SXM5-80GB", "NVIDIA H100 80GB HBM3", "Hopper", "NVIDIA", 81559, "9.0", "0x2330",
     "GH100 [H100 SXM5 80GB]"},
    {"H100-PCIE-80GB", "NVIDIA H100 PCIe", "Hopper", "NVIDIA", 81559, "9.0", "0x2331",
     "GH100 [H100 PCIe]"},
    {"H200", "NVIDIA H200", "Hopper", "NVIDIA", 143771, "9.0", "0x2335", "GH100 [H200 SXM 141GB]"},
    {"B200", "NVIDIA B200", "Blackwell", "NVIDIA", 183359, "10.0", "0x2901", "GB100 [B200]"},
    {"GB200", "NVIDIA GB200", "Blackwell", "NVIDIA", 189471, "10.0", "0x2941", "GB100 [HGX GB200]"},
    {"L40S", "NVIDIA L40S", "Ada Lovelace", "NVIDIA", 46068, "8.9", "0x26b9", "AD102GL [L40S]"},
    {"L4", "NVIDIA L4", "Ada Lovelace", "NVIDIA", 23034, "8.9", "0x27b8", "AD104GL [L4]"},
    {"T4", "Tesla T4", "Turing", "NVIDIA", 15360, "7.5", "0x1eb8", "TU104GL [Tesla T4]"},
};

#define NPROFILES (sizeof(profiles) / sizeof(profiles[0]))

const struct gpu_profile *catalogue_find(const char *name)
{
    for (size_t i = 0; i < NPROFILES; i++)
        if (!strcasecmp(profiles[i].name, name))
            return &profiles[i];
    return NULL;
}

size_t catalogue_size(void)
{
    return NPROFILES;
}

const struct gpu_profile *catalogue_at(size_t i)
{
    return i < NPROFILES ? &profiles[i] : NULL;
}

void catalogue_names(char *buf, size_t size)
{
    struct text_list l = text_list_start(buf, size);
    for (size_t i = 0; i < NPROFILES; i++)
        text_list_add(&l, "%s", profiles[i].name);
}
