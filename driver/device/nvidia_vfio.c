// SPDX-License-Identifier: Apache-2.0
/* VFIO devices of the nvidia personality: see nvidia_vfio.h. */
#include "nvidia_vfio.h"

#include <stdio.h>
#include <string.h>

#include "device_attributes.h"
#include "quantity.h"
#include "sha1.h"

/* RFC 9562's DNS namespace, 6ba7b810-9dad-11d1-80b4-00c04fd430c8. */
static const uint8_t dns_namespace[16] = {0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1,
                                          0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8};

bool nvidia_is_vfio(const struct fakehw_device *d)
{
    return d->vfio && d->parent[0] == '\0';
}

void nvidia_vfio_uuid(const char *pci_bus_id, char *buf)
{
    struct sha1 h;
    uint8_t digest[SHA1_DIGEST_LEN];
    sha1_init(&h);
    sha1_update(&h, dns_namespace, sizeof(dns_namespace));
    sha1_update(&h, pci_bus_id, strlen(pci_bus_id));
    sha1_final(&h, digest);
    digest[6] = (uint8_t)((digest[6] & 0x0f) | 0x50); /* version 5 */
    digest[8] = (uint8_t)((digest[8] & 0x3f) | 0x80); /* the RFC variant */
    char *p = buf;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *p++ = '-';
        p += sprintf(p, "%02x", digest[i]);
    }
}

static uint64_t next_power_of_two(uint64_t v)
{
    uint64_t p = 1;
    while (p < v && p < (UINT64_C(1) << 63))
        p <<= 1;
    return p;
}

uint64_t nvidia_vfio_addressable_memory(uint64_t memory)
{
    const uint64_t bar3 = UINT64_C(32) << 20;
    return next_power_of_two(next_power_of_two(memory) + bar3);
}

static int vfio_attributes(json_t *a, const struct fakehw_device *d, struct error *err)
{
    char uuid[NVIDIA_VFIO_UUID_SIZE];
    nvidia_vfio_uuid(d->pci_bus_id, uuid);
    const char *product = d->pci_device_name[0] ? d->pci_device_name : d->product_name;
    if (device_attribute_add_string(a, "type", NVIDIA_VFIO_TYPE, err) < 0 ||
        device_attribute_add_string(a, "uuid", uuid, err) < 0 ||
        (d->pci_device_id[0] &&
         device_attribute_add_string(a, "deviceID", d->pci_device_id, err) < 0) ||
        device_attribute_add_string(a, "vendorID", NVIDIA_PCI_VENDOR_ID, err) < 0 ||
        device_attribute_add_string(a, "productName", product, err) < 0 ||
        device_attribute_add(a, "iommuFDEnabled", "bool", json_false(), err) < 0 ||
        device_attribute_add_string(a, "resource.kubernetes.io/pciBusID", d->pci_bus_id, err) < 0 ||
        (d->pcie_root[0] &&
         device_attribute_add_string(a, "resource.kubernetes.io/pcieRoot", d->pcie_root, err) < 0))
        return -1;
    if (d->numa_node >= 0 && device_attribute_add(a, "resource.kubernetes.io/numaNode", "int",
                                                  json_integer(d->numa_node), err) < 0)
        return -1;
    return 0;
}

json_t *nvidia_vfio_attributes_json(const struct fakehw_device *d, struct error *err)
{
    return device_attributes_build(d, vfio_attributes, err);
}

json_t *nvidia_vfio_capacity_json(const struct fakehw_device *d, struct error *err)
{
    char q[QUANTITY_STR_MAX];
    if (quantity_format_bytes(nvidia_vfio_addressable_memory(d->memory_bytes), q, sizeof(q)) < 0) {
        error_set(err, "device %s: addressable memory cannot be formatted as a quantity", d->name);
        return NULL;
    }
    json_t *c = json_pack("{s:{s:s}}", "addressableMemory", "value", q);
    if (c == NULL)
        error_set(err, "device %s: out of memory", d->name);
    return c;
}
