// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the personalities (driver/device/personality.h) and the
 * nvidia personality's attributes (driver/device/nvidia_attributes.h):
 * the flag values, NVIDIA's device names, renaming a snapshot, the
 * attribute set with its names, types and values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "driver/device/nvidia_attributes.h"
#include "driver/device/nvidia_vfio.h"
#include "driver/device/personality.h"
#include "driver/device/tests/test_gpus.h"
#include "common/tests/test_main.h"

/* A GPU of the tests, named name, at PCI 0000:18:00.0 whatever its minor,
 * in dynamic MIG mode on NUMA node 1. */
static struct fakehw_device gpu(const char *name, long minor)
{
    struct fakehw_device d = test_h100((int)minor);
    snprintf(d.name, sizeof(d.name), "%s", name);
    snprintf(d.pci_bus_id, sizeof(d.pci_bus_id), "0000:18:00.0");
    snprintf(d.pcie_root, sizeof(d.pcie_root), "pci0000:17");
    d.numa_node = 1;
    snprintf(d.mig_mode, sizeof(d.mig_mode), "dynamic");
    return d;
}

/* A partition of g: profile, its ID, placement start and size. */
static struct fakehw_device partition(const struct fakehw_device *g, const char *name,
                                      const char *profile, long id, long start, long size)
{
    struct fakehw_device d = *g;
    snprintf(d.name, sizeof(d.name), "%s", name);
    d.index = 100 + start;
    snprintf(d.uuid, sizeof(d.uuid), "MIG-%08lx-1111-2222-3333-444444444444", start);
    d.mig_mode[0] = '\0';
    snprintf(d.parent, sizeof(d.parent), "%s", g->name);
    snprintf(d.mig_profile, sizeof(d.mig_profile), "%s", profile);
    d.mig_profile_id = id;
    d.mig_placement[0] = start;
    d.mig_placement[1] = size;
    return d;
}

/* Renames devs[0..n) for personality p, which must work; their names then
 * are names, space-separated. */
static void expect_renamed(enum personality p, struct fakehw_device *devs, size_t n,
                           const char *names)
{
    struct error err;
    if (personality_rename(p, devs, n, &err) != 0)
        fail_msg("personality_rename: %s", err.msg);
    char got[1024] = "";
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(got);
        snprintf(got + used, sizeof(got) - used, "%s%s", i ? " " : "", devs[i].name);
    }
    assert_string_equal(got, names);
}

static void test_parse(void **state)
{
    (void)state;
    enum personality p = PERSONALITY_NVIDIA;
    struct error err;
    assert_int_equal(personality_parse("fakehw", &p, &err), 0);
    assert_int_equal(p, PERSONALITY_FAKEHW);
    assert_int_equal(personality_parse("nvidia", &p, &err), 0);
    assert_int_equal(p, PERSONALITY_NVIDIA);
    assert_int_equal(personality_parse("NVIDIA", &p, &err), -1);
    assert_string_equal(err.msg, "personality \"NVIDIA\" is not one of fakehw, nvidia");
    assert_int_equal(personality_parse("", &p, &err), -1);
    assert_int_equal(personality_parse(NULL, &p, &err), -1);
    assert_int_equal(p, PERSONALITY_NVIDIA); /* untouched on error */
    assert_string_equal(personality_driver_name(PERSONALITY_FAKEHW), "gpu.fakehw.example.com");
    assert_string_equal(personality_driver_name(PERSONALITY_NVIDIA), "gpu.nvidia.com");
    assert_string_equal(personality_name(PERSONALITY_NVIDIA), "nvidia");
    assert_string_equal(PERSONALITY_DEFAULT_NAME, "fakehw");
}

static void test_device_names(void **state)
{
    (void)state;
    char buf[FAKEHW_NAME_MAX];
    struct error err;
    struct fakehw_device g = gpu("big-0", 3);
    assert_int_equal(personality_device_name(PERSONALITY_FAKEHW, &g, buf, sizeof(buf), &err), 0);
    assert_string_equal(buf, "big-0");
    /* NVIDIA names GPUs by minor, whatever fakehw called them. */
    assert_int_equal(personality_device_name(PERSONALITY_NVIDIA, &g, buf, sizeof(buf), &err), 0);
    assert_string_equal(buf, "gpu-3");
    struct fakehw_device m = partition(&g, "big-0-mig-3g40gb-4", "3g.40gb", 9, 4, 4);
    assert_int_equal(personality_device_name(PERSONALITY_NVIDIA, &m, buf, sizeof(buf), &err), 0);
    assert_string_equal(buf, "gpu-3-mig-3g40gb-9-4");
    m = partition(&g, "p", "7g.80gb", 0, 0, 8);
    assert_int_equal(personality_device_name(PERSONALITY_NVIDIA, &m, buf, sizeof(buf), &err), 0);
    assert_string_equal(buf, "gpu-3-mig-7g80gb-0-0");
    /* Other characters become dashes, as in the real driver's names. */
    m = partition(&g, "p", "1g.10gb+me", 20, 6, 1);
    assert_int_equal(personality_device_name(PERSONALITY_NVIDIA, &m, buf, sizeof(buf), &err), 0);
    assert_string_equal(buf, "gpu-3-mig-1g10gb-me-20-6");
    /* A name past 63 characters is refused, naming the device. */
    m = partition(&g, "p", "1g.10gbxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 19, 0, 1);
    assert_int_equal(personality_device_name(PERSONALITY_NVIDIA, &m, buf, sizeof(buf), &err), -1);
    assert_string_equal(err.msg, "device p: its nvidia name would not be a DNS label of at most "
                                 "63 characters");
}

static void test_rename(void **state)
{
    (void)state;
    struct fakehw_device d[3];
    d[0] = gpu("big-0", 0);
    d[1] = partition(&d[0], "big-0-mig-3g40gb-0", "3g.40gb", 9, 0, 4);
    d[2] = partition(&d[0], "big-0-mig-3g40gb-4", "3g.40gb", 9, 4, 4);
    /* fakehw keeps the tree's names and sets no dir. */
    expect_renamed(PERSONALITY_FAKEHW, d, 3, "big-0 big-0-mig-3g40gb-0 big-0-mig-3g40gb-4");
    assert_string_equal(d[1].dir, "");
    assert_string_equal(fakehw_device_dir(&d[1]), "big-0-mig-3g40gb-0");
    assert_string_equal(fakehw_device_parent_dir(&d[1]), "big-0");

    expect_renamed(PERSONALITY_NVIDIA, d, 3, "gpu-0 gpu-0-mig-3g40gb-9-0 gpu-0-mig-3g40gb-9-4");
    /* The parent follows its GPU; the tree's names stay for paths. */
    assert_string_equal(d[2].parent, "gpu-0");
    assert_string_equal(fakehw_device_dir(&d[0]), "big-0");
    assert_string_equal(fakehw_device_dir(&d[2]), "big-0-mig-3g40gb-4");
    assert_string_equal(fakehw_device_parent_dir(&d[2]), "big-0");
    assert_string_equal(fakehw_device_parent_dir(&d[0]), "");
}

static void test_rename_refuses_a_clash(void **state)
{
    (void)state;
    /* Two GPUs with one minor would both be gpu-1: nothing is renamed. */
    struct fakehw_device d[2] = {gpu("a", 1), gpu("b", 1)};
    struct error err;
    assert_int_equal(personality_rename(PERSONALITY_NVIDIA, d, 2, &err), -1);
    assert_string_equal(err.msg, "two devices would both be published as gpu-1 (nvidia "
                                 "personality)");
    assert_string_equal(d[0].name, "a");
    assert_string_equal(d[1].name, "b");
    assert_string_equal(d[0].dir, "");
}

static const char *attr(const json_t *a, const char *name, const char *type)
{
    return json_string_value(json_object_get(json_object_get(a, name), type));
}

static void test_gpu_attributes(void **state)
{
    (void)state;
    struct fakehw_device g = gpu("gpu-0", 0);
    struct error err;
    json_t *a = nvidia_attributes_json(&g, &err);
    assert_non_null(a);
    /* Exactly the real driver's set for a GPU without coherent memory. */
    assert_int_equal(json_object_size(a), 11);
    assert_string_equal(attr(a, "type", "string"), "gpu");
    assert_string_equal(attr(a, "uuid", "string"), g.uuid);
    assert_string_equal(attr(a, "productName", "string"), "NVIDIA H100 80GB HBM3");
    assert_string_equal(attr(a, "brand", "string"), "Nvidia");
    assert_string_equal(attr(a, "architecture", "string"), "Hopper");
    assert_string_equal(attr(a, "cudaComputeCapability", "version"), "9.0.0");
    assert_string_equal(attr(a, "driverVersion", "version"), "580.95.5");
    assert_string_equal(attr(a, "cudaDriverVersion", "version"), "13.0.0");
    assert_string_equal(attr(a, "resource.kubernetes.io/pciBusID", "string"), "0000:18:00.0");
    assert_string_equal(attr(a, "resource.kubernetes.io/pcieRoot", "string"), "pci0000:17");
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(a, "resource.kubernetes.io/numaNode"), "int")),
                     1);
    /* None of fakehw's own: index, numaNode in the driver's domain. */
    assert_null(json_object_get(a, "index"));
    assert_null(json_object_get(a, "numaNode"));
    assert_null(json_object_get(a, "addressingMode"));
    json_decref(a);

    /* No NUMA node and no PCIe root: left out, as the real driver does. */
    g.numa_node = -1;
    g.pcie_root[0] = '\0';
    a = nvidia_attributes_json(&g, &err);
    assert_non_null(a);
    assert_int_equal(json_object_size(a), 9);
    json_decref(a);
}

static void test_mig_attributes(void **state)
{
    (void)state;
    struct fakehw_device g = gpu("gpu-0", 0);
    struct fakehw_device m = partition(&g, "gpu-0-mig-1g10gb-19-6", "1g.10gb", 19, 6, 1);
    struct error err;
    json_t *a = nvidia_attributes_json(&m, &err);
    assert_non_null(a);
    assert_string_equal(attr(a, "type", "string"), "mig");
    assert_string_equal(attr(a, "uuid", "string"), m.uuid);
    assert_string_equal(attr(a, "productName", "string"), "NVIDIA H100 80GB HBM3");
    json_decref(a);
}

static void test_attribute_errors(void **state)
{
    (void)state;
    struct fakehw_device g = gpu("gpu-0", 0);
    struct error err;
    snprintf(g.driver_version, sizeof(g.driver_version), "580.x");
    assert_null(nvidia_attributes_json(&g, &err));
    assert_string_equal(err.msg, "device gpu-0: attribute driverVersion: \"580.x\" is not a "
                                 "version (want 1 to 3 dot-separated numbers)");
    g = gpu("gpu-0", 0);
    memset(g.product_name, 'x', 70);
    g.product_name[70] = '\0';
    assert_null(nvidia_attributes_json(&g, &err));
    assert_non_null(strstr(err.msg, "device gpu-0: attribute productName: "));
    assert_non_null(strstr(err.msg, "is longer than 64 characters"));
}

/* A GPU bound to vfio-pci: NVIDIA's VFIO device, named by its place in
 * PCI order among all GPUs; the fakehw personality keeps the tree's name. */
static void test_vfio_names(void **state)
{
    (void)state;
    struct fakehw_device devs[4] = {gpu("gpu-0", 0), gpu("gpu-1", 1), gpu("gpu-2", 2)};
    devs[3] = partition(&devs[2], "gpu-2-mig-7g80gb-0", "7g.80gb", 0, 0, 8);
    /* PCI order is 2, 0, 1; the partition shares its GPU's bus id. */
    snprintf(devs[0].pci_bus_id, sizeof(devs[0].pci_bus_id), "0000:28:00.0");
    snprintf(devs[1].pci_bus_id, sizeof(devs[1].pci_bus_id), "0000:c1:00.0");
    snprintf(devs[2].pci_bus_id, sizeof(devs[2].pci_bus_id), "0000:08:00.0");
    snprintf(devs[3].pci_bus_id, sizeof(devs[3].pci_bus_id), "0000:08:00.0");
    devs[0].vfio = devs[1].vfio = true;
    struct fakehw_device same[4];
    memcpy(same, devs, sizeof(same));
    expect_renamed(PERSONALITY_FAKEHW, same, 4, "gpu-0 gpu-1 gpu-2 gpu-2-mig-7g80gb-0");
    expect_renamed(PERSONALITY_NVIDIA, devs, 4, "gpu-vfio-1 gpu-vfio-2 gpu-2 gpu-2-mig-7g80gb-0-0");
    assert_string_equal(fakehw_device_dir(&devs[0]), "gpu-0");
}

static void test_vfio_attributes(void **state)
{
    (void)state;
    struct fakehw_device g = gpu("gpu-vfio-0", 0);
    g.vfio = true;
    snprintf(g.pci_device_id, sizeof(g.pci_device_id), "0x2330");
    snprintf(g.pci_device_name, sizeof(g.pci_device_name), "GH100 [H100 SXM5 80GB]");
    struct error err;
    json_t *a = nvidia_attributes_json(&g, &err);
    assert_non_null(a);
    /* The real driver's VfioDeviceInfo.GetDevice set. */
    assert_int_equal(json_object_size(a), 9);
    assert_string_equal(attr(a, "type", "string"), "vfio");
    /* uuid.NewSHA1(uuid.NameSpaceDNS, "0000:18:00.0"), as Python's uuid5 gives it too. */
    assert_string_equal(attr(a, "uuid", "string"), "8bb2ceb2-c757-577e-8ee3-7b2dfc594cc6");
    assert_string_equal(attr(a, "deviceID", "string"), "0x2330");
    assert_string_equal(attr(a, "vendorID", "string"), "0x10de");
    assert_string_equal(attr(a, "productName", "string"), "GH100 [H100 SXM5 80GB]");
    assert_false(json_boolean_value(json_object_get(json_object_get(a, "iommuFDEnabled"), "bool")));
    assert_true(json_is_false(json_object_get(json_object_get(a, "iommuFDEnabled"), "bool")));
    assert_string_equal(attr(a, "resource.kubernetes.io/pciBusID", "string"), "0000:18:00.0");
    assert_string_equal(attr(a, "resource.kubernetes.io/pcieRoot", "string"), "pci0000:17");
    assert_null(json_object_get(a, "driverVersion"));
    assert_null(json_object_get(a, "brand"));
    json_decref(a);
    /* Without the catalogue's PCI identity: no deviceID, the product name. */
    g.pci_device_id[0] = g.pci_device_name[0] = '\0';
    g.numa_node = -1;
    a = nvidia_attributes_json(&g, &err);
    assert_non_null(a);
    assert_int_equal(json_object_size(a), 7);
    assert_string_equal(attr(a, "productName", "string"), "NVIDIA H100 80GB HBM3");
    json_decref(a);
    /* A partition of a vfio GPU (fakehw makes none) stays a MIG device. */
    struct fakehw_device m = partition(&g, "gpu-0-mig-7g80gb-0-0", "7g.80gb", 0, 0, 8);
    assert_false(nvidia_is_vfio(&m));
    /* BAR1 the next power of two of the memory, and 32 MiB of BAR3. */
    assert_int_equal(nvidia_vfio_addressable_memory(UINT64_C(81559) << 20), UINT64_C(256) << 30);
    assert_int_equal(nvidia_vfio_addressable_memory(UINT64_C(15360) << 20), UINT64_C(32) << 30);
    char uuid[NVIDIA_VFIO_UUID_SIZE];
    nvidia_vfio_uuid("0000:08:00.0", uuid);
    assert_string_equal(uuid, "a360e723-c504-5ac5-abf8-194f78d52ec1");
}

static void test_brands(void **state)
{
    (void)state;
    assert_string_equal(nvidia_brand("NVIDIA"), "Nvidia");
    assert_string_equal(nvidia_brand("GeForce RTX"), "GeForceRTX");
    assert_string_equal(nvidia_brand("NVIDIA RTX"), "NvidiaRTX");
    assert_string_equal(nvidia_brand("Tesla"), "Tesla");
    assert_string_equal(nvidia_brand("Acme"), "Acme");
}

TEST_MAIN("driver/device personality", test_parse, test_device_names, test_rename,
          test_rename_refuses_a_clash, test_gpu_attributes, test_mig_attributes,
          test_attribute_errors, test_brands, test_vfio_names, test_vfio_attributes)
