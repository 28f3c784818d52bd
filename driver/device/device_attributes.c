// SPDX-License-Identifier: Apache-2.0
#include "device_attributes.h"

#include <stdio.h>
#include <string.h>

#define ATTR_PCI_BUS_ID "resource.kubernetes.io/pciBusID"
#define ATTR_PCIE_ROOT  "resource.kubernetes.io/pcieRoot"
#define ATTR_NUMA_NODE  "resource.kubernetes.io/numaNode"

int device_attributes_semver(const char *text, char *buf, size_t size, struct error *err)
{
    const char *parts[3] = {"0", "0", "0"};
    size_t lens[3] = {1, 1, 1};
    int n = 0;
    const char *p = text;
    for (;;) {
        size_t len = strspn(p, "0123456789");
        if (len == 0 || len > 18 || n == 3)
            return error_set(err, "\"%s\" is not a version (want 1 to 3 dot-separated numbers)",
                             text);
        /* Drop leading zeros but keep one digit: semver forbids "05". */
        const char *start = p;
        size_t digits = len;
        while (digits > 1 && *start == '0') {
            start++;
            digits--;
        }
        parts[n] = start;
        lens[n] = digits;
        n++;
        p += len;
        if (*p == '\0')
            break;
        if (*p != '.')
            return error_set(err, "\"%s\" is not a version (want 1 to 3 dot-separated numbers)",
                             text);
        p++;
    }
    int w = snprintf(buf, size, "%.*s.%.*s.%.*s", (int)lens[0], parts[0], (int)lens[1], parts[1],
                     (int)lens[2], parts[2]);
    if (w < 0 || (size_t)w >= size || w > DEVICE_ATTRIBUTE_VALUE_MAX)
        return error_set(err, "version \"%s\" is longer than %d characters", text,
                         DEVICE_ATTRIBUTE_VALUE_MAX);
    return 0;
}

static int add(json_t *attrs, const char *name, const char *type, json_t *value, struct error *err)
{
    json_t *wrapped = json_object();
    if (wrapped == NULL || value == NULL || json_object_set_new(wrapped, type, value) < 0) {
        json_decref(wrapped);
        return error_set(err, "attribute %s: out of memory", name);
    }
    if (json_object_set_new(attrs, name, wrapped) < 0)
        return error_set(err, "attribute %s: out of memory", name);
    return 0;
}

static int add_string(json_t *attrs, const char *name, const char *value, struct error *err)
{
    if (strlen(value) > DEVICE_ATTRIBUTE_VALUE_MAX)
        return error_set(err, "attribute %s: \"%s\" is longer than %d characters", name, value,
                         DEVICE_ATTRIBUTE_VALUE_MAX);
    return add(attrs, name, "string", json_string(value), err);
}

static int add_version(json_t *attrs, const char *name, const char *text, struct error *err)
{
    char v[DEVICE_ATTRIBUTE_VALUE_MAX + 1];
    if (device_attributes_semver(text, v, sizeof(v), err) < 0)
        return error_prefix(err, "attribute %s", name);
    return add(attrs, name, "version", json_string(v), err);
}

json_t *device_attributes_json(const struct fakehw_device *d, struct error *err)
{
    json_t *a = json_object();
    if (a == NULL) {
        error_set(err, "device %s: out of memory", d->name);
        return NULL;
    }
    if (add_string(a, "type", d->parent[0] ? "mig" : "gpu", err) < 0 ||
        add_string(a, "uuid", d->uuid, err) < 0 ||
        add_string(a, "productName", d->product_name, err) < 0 ||
        (d->architecture[0] && add_string(a, "architecture", d->architecture, err) < 0) ||
        (d->brand[0] && add_string(a, "brand", d->brand, err) < 0) ||
        add(a, "index", "int", json_integer(d->index), err) < 0 ||
        add_version(a, "driverVersion", d->driver_version, err) < 0 ||
        (d->compute_capability[0] &&
         add_version(a, "cudaComputeCapability", d->compute_capability, err) < 0) ||
        (d->cuda_driver_version[0] &&
         add_version(a, "cudaDriverVersion", d->cuda_driver_version, err) < 0) ||
        (d->numa_node >= 0 && add(a, "numaNode", "int", json_integer(d->numa_node), err) < 0) ||
        (d->numa_node >= 0 && add(a, ATTR_NUMA_NODE, "int", json_integer(d->numa_node), err) < 0) ||
        add_string(a, ATTR_PCI_BUS_ID, d->pci_bus_id, err) < 0 ||
        (d->pcie_root[0] && add_string(a, ATTR_PCIE_ROOT, d->pcie_root, err) < 0)) {
        error_prefix(err, "device %s", d->name);
        json_decref(a);
        return NULL;
    }
    return a;
}
