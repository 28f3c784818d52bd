// SPDX-License-Identifier: Apache-2.0
/* The nvidia personality's device attributes: see nvidia_attributes.h. */
#include "nvidia_attributes.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "device_attributes.h"
#include "nvidia_vfio.h"

/* nvidia-smi's "Product Brand" -> go-nvlib's GetBrandAsString. */
static const struct {
    const char *smi;
    const char *nvlib;
} brands[] = {
    {"NVIDIA", "Nvidia"},
    {"NVIDIA RTX", "NvidiaRTX"},
    {"Tesla", "Tesla"},
    {"Quadro", "Quadro"},
    {"Quadro RTX", "QuadroRTX"},
    {"GeForce", "GeForce"},
    {"GeForce RTX", "GeForceRTX"},
    {"Titan", "Titan"},
    {"Titan RTX", "TitanRTX"},
    {"NVS", "NVS"},
    {"GRID", "Grid"},
    {"NVIDIA Virtual Applications", "NvidiaVApps"},
    {"NVIDIA Virtual PC", "NvidiaVPC"},
    {"NVIDIA Virtual Compute Server", "NvidiaVCS"},
    {"NVIDIA RTX Virtual Workstation", "NvidiaVWS"},
    {"NVIDIA Cloud Gaming", "NvidiaCloudGaming"},
};

const char *nvidia_brand(const char *smi_brand)
{
    for (size_t i = 0; i < sizeof(brands) / sizeof(brands[0]); i++)
        if (!strcasecmp(brands[i].smi, smi_brand))
            return brands[i].nvlib;
    return smi_brand;
}

/* How a row reads its value from struct fakehw_device. */
enum value_kind {
    V_TYPE,   /* "gpu" or "mig" */
    V_BRAND,  /* nvidia_brand of the text */
    V_STRING, /* text, always */
    V_STRING_NONEMPTY,
    V_VERSION, /* text as a semantic version, when not empty */
    V_INT_NONNEG,
};

/* The attributes, in the order NVIDIA's driver builds them. */
static const struct {
    const char *name;
    enum value_kind kind;
    size_t offset;
} rows[] = {
    {"type", V_TYPE, 0},
    {"uuid", V_STRING, offsetof(struct fakehw_device, uuid)},
    {"productName", V_STRING, offsetof(struct fakehw_device, product_name)},
    {"brand", V_BRAND, offsetof(struct fakehw_device, brand)},
    {"architecture", V_STRING_NONEMPTY, offsetof(struct fakehw_device, architecture)},
    {"cudaComputeCapability", V_VERSION, offsetof(struct fakehw_device, compute_capability)},
    {"driverVersion", V_VERSION, offsetof(struct fakehw_device, driver_version)},
    {"cudaDriverVersion", V_VERSION, offsetof(struct fakehw_device, cuda_driver_version)},
    {"resource.kubernetes.io/pciBusID", V_STRING, offsetof(struct fakehw_device, pci_bus_id)},
    {"resource.kubernetes.io/pcieRoot", V_STRING_NONEMPTY,
     offsetof(struct fakehw_device, pcie_root)},
    {"resource.kubernetes.io/numaNode", V_INT_NONNEG, offsetof(struct fakehw_device, numa_node)},
};

static int add_row(json_t *attrs, size_t r, const struct fakehw_device *d, struct error *err)
{
    const char *name = rows[r].name;
    const char *text = (const char *)d + rows[r].offset;
    switch (rows[r].kind) {
    case V_TYPE:
        return device_attribute_add_string(attrs, name, d->parent[0] ? "mig" : "gpu", err);
    case V_BRAND:
        return text[0] ? device_attribute_add_string(attrs, name, nvidia_brand(text), err) : 0;
    case V_STRING:
        return device_attribute_add_string(attrs, name, text, err);
    case V_STRING_NONEMPTY:
        return text[0] ? device_attribute_add_string(attrs, name, text, err) : 0;
    case V_VERSION:
        if (text[0] == '\0')
            return 0;
        return device_attribute_add_version(attrs, name, text, err);
    case V_INT_NONNEG: {
        long n = *(const long *)(const void *)text;
        return n < 0 ? 0 : device_attribute_add(attrs, name, "int", json_integer(n), err);
    }
    }
    return error_set(err, "attribute %s: unknown kind", name);
}

static int add_rows(json_t *attrs, const struct fakehw_device *d, struct error *err)
{
    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
        if (add_row(attrs, r, d, err) < 0)
            return -1;
    return 0;
}

json_t *nvidia_attributes_json(const struct fakehw_device *d, struct error *err)
{
    if (nvidia_is_vfio(d))
        return nvidia_vfio_attributes_json(d, err);
    return device_attributes_build(d, add_rows, err);
}
