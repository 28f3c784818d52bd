// SPDX-License-Identifier: Apache-2.0
/* The built-in GPU catalogue: see catalogue.h.  Figures are what the driver
 * reports on the real boards; memory.total is not the marketing size (that
 * one is in decimal GB and rounded), e.g. an "80GB" H100 reports 81559 MiB. */
#include "catalogue.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct gpu_profile profiles[] = {
    {"A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB", "Ampere", "NVIDIA", 40960, "8.0"},
    {"A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", "Ampere", "NVIDIA", 81920, "8.0"},
    {"A100-PCIE-40GB", "NVIDIA A100-PCIE-40GB", "Ampere", "NVIDIA", 40960, "8.0"},
    {"A100-PCIE-80GB", "NVIDIA A100 80GB PCIe", "Ampere", "NVIDIA", 81920, "8.0"},
    {"A10", "NVIDIA A10", "Ampere", "NVIDIA", 23028, "8.6"},
    {"H100-SXM5-80GB", "NVIDIA H100 80GB HBM3", "Hopper", "NVIDIA", 81559, "9.0"},
    {"H100-PCIE-80GB", "NVIDIA H100 PCIe", "Hopper", "NVIDIA", 81559, "9.0"},
    {"H200", "NVIDIA H200", "Hopper", "NVIDIA", 143771, "9.0"},
    {"B200", "NVIDIA B200", "Blackwell", "NVIDIA", 183359, "10.0"},
    {"GB200", "NVIDIA GB200", "Blackwell", "NVIDIA", 189471, "10.0"},
    {"L40S", "NVIDIA L40S", "Ada Lovelace", "NVIDIA", 46068, "8.9"},
    {"L4", "NVIDIA L4", "Ada Lovelace", "NVIDIA", 23034, "8.9"},
    {"T4", "Tesla T4", "Turing", "NVIDIA", 15360, "7.5"},
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
    size_t used = 0;
    if (size == 0)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < NPROFILES && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", profiles[i].name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}
