// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the fakehw config: good configs resolve as documented, bad
 * ones fail with file, line, column, key and what is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_spec.h"
#include "dns_names.h"
#include "uuid.h"
#include "common/tests/check_valid.h"
#include "common/tests/test_main.h"

#ifndef FAKEHW_TEST_CONFIGS
#error "build.mk defines FAKEHW_TEST_CONFIGS, the directory of the sample configs"
#endif

static const char *sample(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof(path), "%s/%s", FAKEHW_TEST_CONFIGS, name);
    return path;
}

static void load_file(const char *name, const char *node, struct config *c)
{
    struct error err = {{0}};
    if (config_load_file(sample(name), node, c, &err) != 0)
        fail_msg("%s for %s: %s", name, node, err.msg);
}

static void load_text(const char *text, const char *node, struct config *c)
{
    struct error err = {{0}};
    if (config_load_string(text, strlen(text), "t.yaml", node, c, &err) != 0)
        fail_msg("for %s: %s", node, err.msg);
}

static const struct gpu_device *find(const struct config *c, const char *name)
{
    for (size_t i = 0; i < c->ndevices; i++)
        if (!strcmp(c->devices[i].name, name))
            return &c->devices[i];
    fail_msg("no device %s", name);
    return NULL;
}

/* ---- good configs ---- */

static void test_defaults_section(void **state)
{
    (void)state;
    struct config c;
    load_file("good-cluster.yaml", "some-other-node", &c);
    assert_string_equal(c.section, "defaults");
    assert_int_equal(c.ndevices, 2);
    const struct gpu_device *d = &c.devices[1];
    assert_string_equal(d->name, "gpu-1");
    assert_int_equal(d->index, 1);
    assert_int_equal(d->minor, 1);
    assert_string_equal(d->product_name, "NVIDIA A100-SXM4-80GB");
    assert_string_equal(d->architecture, "Ampere");
    assert_string_equal(d->brand, "NVIDIA");
    assert_int_equal(d->memory_bytes, 81920ULL << 20);
    assert_string_equal(d->compute_capability, "8.0");
    assert_string_equal(d->driver_version, GPU_DEFAULT_DRIVER_VERSION);
    assert_string_equal(d->cuda_driver_version, GPU_DEFAULT_CUDA_DRIVER_VERSION);
    assert_string_equal(d->pci_bus_id, "0000:09:00.0");
    assert_string_equal(d->pcie_root, "pci0000:07");
    assert_int_equal(d->numa_node, 0);
    assert_true(d->healthy);
    assert_string_equal(d->health_reason, "");
    /* seed "" means the node name */
    char u[GPU_UUID_SIZE];
    gpu_uuid_derive("some-other-node", "gpu-1", u);
    assert_string_equal(d->uuid, u);
    assert_string_equal(c.seed, "some-other-node");
    /* The top-level flip names gpu-1, which this node has. */
    assert_int_equal(c.nflips, 1);
    assert_string_equal(c.flips[0].device, "gpu-1");
    assert_int_equal(c.flips[0].after_ms, 30000);
    assert_int_equal(c.flips[0].for_ms, 60000);
    assert_false(c.flips[0].healthy);
    assert_string_equal(c.flips[0].reason, "XID 79: GPU has fallen off the bus");
    config_free(&c);
}

static void test_exact_node_section(void **state)
{
    (void)state;
    struct config c;
    load_file("good-cluster.yaml", "kind-worker", &c);
    assert_string_equal(c.section, "nodes[0] (kind-worker)");
    assert_int_equal(c.ndevices, 5);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(c.devices[i].numa_node, 0); /* override for the whole entry */
        assert_string_equal(c.devices[i].product_name, "NVIDIA A100-SXM4-80GB");
    }
    const struct gpu_device *big = find(&c, "big-0");
    assert_int_equal(big->index, 4);
    assert_string_equal(big->product_name, "NVIDIA H100 80GB HBM3");
    assert_int_equal(big->memory_bytes, 96ULL << 30);
    assert_false(big->healthy);
    assert_string_equal(big->health_reason, "XID 79: GPU has fallen off the bus");
    assert_int_equal(big->numa_node, 1); /* computed: 5 GPUs, roots 0,1 on node 0 */
    config_free(&c);
}

static void test_glob_and_first_match(void **state)
{
    (void)state;
    struct config c;
    load_file("good-cluster.yaml", "kind-worker3", &c);
    assert_string_equal(c.section, "nodes[1] (kind-worker[2-9])");
    assert_int_equal(c.ndevices, 8);
    assert_string_equal(c.devices[7].product_name, "NVIDIA H200");
    assert_int_equal(c.devices[7].memory_bytes, 143771ULL << 20);
    assert_string_equal(c.devices[0].driver_version, "570.172.08");
    assert_string_equal(c.devices[0].cuda_driver_version, "12.8");
    /* NUMA split: first half of the roots on node 0. */
    for (int i = 0; i < 8; i++)
        assert_int_equal(c.devices[i].numa_node, i < 4 ? 0 : 1);
    /* top-level flip first, then the section's own */
    assert_int_equal(c.nflips, 2);
    assert_string_equal(c.flips[0].device, "gpu-1");
    assert_string_equal(c.flips[1].device, "gpu-7");
    assert_int_equal(c.flips[1].after_ms, 300000);
    assert_int_equal(c.flips[1].for_ms, 0);
    config_free(&c);

    /* "*-l4-*" matches; the top-level flip of gpu-1 does not apply here. */
    load_file("good-cluster.yaml", "pool-l4-7", &c);
    assert_string_equal(c.section, "nodes[2] (*-l4-*)");
    assert_int_equal(c.ndevices, 1);
    assert_int_equal(c.nflips, 0);
    config_free(&c);

    /* The first matching entry wins. */
    load_text("nodes:\n"
              "  - name: \"n*\"\n    devices: [{profile: L4}]\n"
              "  - name: node-1\n    devices: [{profile: T4}]\n",
              "node-1", &c);
    assert_string_equal(c.section, "nodes[0] (n*)");
    assert_string_equal(c.devices[0].product_name, "NVIDIA L4");
    config_free(&c);
}

static void test_no_section(void **state)
{
    (void)state;
    struct config c;
    load_text("nodes:\n  - name: a\n    devices: [{profile: L4}]\n", "b", &c);
    assert_int_equal(c.ndevices, 0);
    assert_null(c.devices);
    assert_string_equal(c.section,
                        "none (no nodes entry matches and there is no defaults section)");
    config_free(&c);
    load_text("defaults: {devices: [{count: 0, profile: L4}]}\n", "b", &c);
    assert_int_equal(c.ndevices, 0);
    config_free(&c);
}

static void test_overrides_and_custom(void **state)
{
    (void)state;
    struct config c;
    load_file("good-custom.yaml", "n", &c);
    assert_string_equal(c.seed, "lab-rack-3");
    assert_int_equal(c.ndevices, 3);
    const struct gpu_device *p = &c.devices[0];
    assert_string_equal(p->name, "proto-0");
    assert_string_equal(p->product_name, "NVIDIA Prototype X1");
    assert_string_equal(p->architecture, "Rubin");
    assert_int_equal(p->memory_bytes, 288000000000ULL);
    assert_string_equal(p->compute_capability, "11.0");
    assert_string_equal(p->uuid, "GPU-00000000-1111-2222-3333-444444444444");
    assert_string_equal(p->pci_bus_id, "0000:c1:00.0"); /* normalised to lowercase */
    assert_string_equal(p->pcie_root, "pci0000:c0");
    assert_int_equal(p->numa_node, 3);
    assert_string_equal(p->driver_version, "550.127.05"); /* top level */
    const struct gpu_device *t = &c.devices[2];
    assert_string_equal(t->name, "gpu-2");
    assert_string_equal(t->product_name, "Tesla T4"); /* profile names are case-insensitive */
    assert_string_equal(t->driver_version, "535.261.03");
    assert_string_equal(t->cuda_driver_version, "12.2");
    char u[GPU_UUID_SIZE];
    gpu_uuid_derive("lab-rack-3", "gpu-2", u);
    assert_string_equal(t->uuid, u);
    config_free(&c);
}

static void test_seeds(void **state)
{
    (void)state;
    const char *text = "defaults: {devices: [{count: 3, profile: L4}]}\n";
    struct config a, b, other;
    load_text(text, "node-a", &a);
    load_text(text, "node-a", &b);
    load_text(text, "node-b", &other);
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal(a.devices[i].uuid, b.devices[i].uuid);
        assert_string_not_equal(a.devices[i].uuid, other.devices[i].uuid);
        assert_true(gpu_uuid_valid(a.devices[i].uuid));
    }
    assert_string_equal(a.devices[0].uuid, "GPU-0f7f8929-e150-1c4d-7649-59de5013d1fd");
    config_free(&a);
    config_free(&b);
    config_free(&other);
    /* A section seed beats the top-level one. */
    load_text("seed: top\nnodes: [{name: x, seed: mine, devices: [{profile: L4}]}]\n", "x", &a);
    assert_string_equal(a.seed, "mine");
    char u[GPU_UUID_SIZE];
    gpu_uuid_derive("mine", "gpu-0", u);
    assert_string_equal(a.devices[0].uuid, u);
    config_free(&a);
}

static int compare_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static void test_4096_unique(void **state)
{
    (void)state;
    struct config c;
    load_file("good-4096.yaml", "bench", &c);
    assert_int_equal(c.ndevices, 4096);
    const char **keys = calloc(c.ndevices, sizeof(*keys));
    assert_non_null(keys);
    for (int field = 0; field < 3; field++) {
        for (size_t i = 0; i < c.ndevices; i++) {
            const struct gpu_device *d = &c.devices[i];
            keys[i] = field == 0 ? d->name : field == 1 ? d->uuid : d->pci_bus_id;
            assert_true(config_valid_pci_bus_id(d->pci_bus_id));
            assert_true(config_valid_pcie_root(d->pcie_root));
            assert_true(d->numa_node == (i < 2048 ? 0 : 1));
        }
        qsort(keys, c.ndevices, sizeof(*keys), compare_str);
        for (size_t i = 1; i < c.ndevices; i++)
            assert_string_not_equal(keys[i - 1], keys[i]);
    }
    free((void *)keys);
    assert_string_equal(c.devices[4095].pci_bus_id, "007f:f9:00.0");
    assert_string_equal(c.devices[4095].pcie_root, "pci007f:f7");
    config_free(&c);
}

static void test_value_checks(void **state)
{
    (void)state;
    CHECK_VALID(dns_label_valid, OK("gpu-0"), BAD("-gpu", "gpu-", "Gpu", ""));
    assert_false(
        dns_label_valid("a234567890123456789012345678901234567890123456789012345678901234"));
    assert_true(config_valid_pci_bus_id("0000:08:00.0"));
    assert_true(config_valid_pci_bus_id("0001:ff:1f.7"));
    assert_false(config_valid_pci_bus_id("0000:08:20.0")); /* device is 5 bits */
    assert_false(config_valid_pci_bus_id("0000:08:00.8")); /* function is 3 bits */
    assert_false(config_valid_pci_bus_id("00000000:08:00.0"));
    assert_true(config_valid_pcie_root("pci0000:07"));
    assert_false(config_valid_pcie_root("pci0000:7"));
    CHECK_VALID(config_valid_version, OK("580.95.05", "13.0"),
                BAD("13", "13..0", "13.0.", "v13.0"));
}

/* ---- bad configs: every one names file:line:column: key: what ---- */

static const struct {
    const char *file;
    const char *msg; /* after "<dir>/" */
} bad_files[] = {
    {"bad-unknown-key.yaml",
     "bad-unknown-key.yaml:5:7: defaults.devices[0].colour: unknown key (known keys here: count, "
     "name, profile, productName, architecture, brand, memory, computeCapability, driverVersion, "
     "cudaDriverVersion, uuid, pciBusID, pcieRoot, numaNode, health, healthReason, attach, "
     "virtual, vfio, mig, sharing)"},
    {"bad-negative-count.yaml",
     "bad-negative-count.yaml:6:16: nodes[0].devices[1].count: -3 is not a valid count (0..4096)"},
    {"bad-absurd-count.yaml",
     "bad-absurd-count.yaml:3:14: defaults.devices[0].count: 100000 is not a valid count "
     "(0..4096)"},
    {"bad-too-many-devices.yaml",
     "bad-too-many-devices.yaml:5:7: defaults.devices[1]: this brings the node to 4097 devices, "
     "more than 4096"},
    {"bad-count-type.yaml",
     "bad-count-type.yaml:3:14: defaults.devices[0].count: \"four\" is not an integer"},
    {"bad-count-quoted.yaml", "bad-count-quoted.yaml:3:14: defaults.devices[0].count: \"4\" is "
                              "quoted, so it is a string, not an integer"},
    {"bad-devices-type.yaml", "bad-devices-type.yaml:3:5: defaults.devices: expected a list (\"- "
                              "\" items), got a mapping"},
    {"bad-duplicate-name.yaml",
     "bad-duplicate-name.yaml:5:13: defaults.devices[1].name: duplicate device name \"gpu-1\": "
     "device 1 from defaults.devices[0] (line 3) has it too"},
    {"bad-unknown-profile.yaml",
     "bad-unknown-profile.yaml:4:16: defaults.devices[0].profile: unknown profile "
     "\"A100-SXM4-96GB\" (known: A100-SXM4-40GB, A100-SXM4-80GB, A100-PCIE-40GB, A100-PCIE-80GB, "
     "A10, H100-SXM5-80GB, H100-PCIE-80GB, H200, B200, GB200, L40S, L4, T4)"},
    {"bad-quantity.yaml",
     "bad-quantity.yaml:5:15: defaults.devices[0].memory: \"80Gx\" is not a valid quantity: "
     "unknown suffix \"Gx\" (use Ki, Mi, Gi, Ti, Pi, Ei, k, M, G, T, P, E or an exponent like e9)"},
    {"bad-duplicate-key.yaml",
     "bad-duplicate-key.yaml:5:7: defaults.devices[0].count: duplicate key (first at line 3)"},
    {"bad-syntax.yaml", "bad-syntax.yaml:4:6: YAML syntax error: did not find expected '-' "
                        "indicator while parsing a block collection"},
    {"bad-empty.yaml",
     "bad-empty.yaml:1:1: the config is empty (fakehw.md of the fakehw-dra documentation "
     "describes it)"},
    {"bad-flip-device.yaml", "bad-flip-device.yaml:7:17: nodes[0].flips[0].device: no device "
                             "\"gpu-2\" in nodes[0] (kind-worker) (2 devices)"},
    {"bad-flip-duration.yaml",
     "bad-flip-duration.yaml:7:12: flips[0].after: \"30\" is not a valid duration: a unit is "
     "missing (e.g. 30s, 500ms, 1m30s)"},
    {"bad-flip-state-missing.yaml",
     "bad-flip-state-missing.yaml:6:5: flips[0]: state (healthy or unhealthy) or xid is required: "
     "what the flip changes"},
    {"bad-flip-xid.yaml", "bad-flip-xid.yaml:7:10: flips[0].xid: 0 is not a valid XID (1..99999)"},
    {"bad-flip-reason-without-state.yaml",
     "bad-flip-reason-without-state.yaml:6:5: flips[0]: reason needs a state (it is the "
     "healthReason set with it)"},
    {"bad-health.yaml", "bad-health.yaml:5:15: defaults.devices[0].health: \"sick\" is not a "
                        "health state (healthy or unhealthy)"},
    {"bad-name-with-count.yaml",
     "bad-name-with-count.yaml:4:13: defaults.devices[0].name: name is for a single device, but "
     "count is 2 (split the entry, or drop name)"},
    {"bad-no-profile.yaml",
     "bad-no-profile.yaml:3:7: defaults.devices[0]: without a profile, productName, "
     "architecture, memory and computeCapability must be set (missing: memory, "
     "computeCapability)"},
    {"bad-pci-duplicate.yaml",
     "bad-pci-duplicate.yaml:5:17: defaults.devices[1].pciBusID: duplicate pciBusID "
     "\"0000:08:00.0\": device 0 from defaults.devices[0] (line 3) has it too"},
    {"bad-node-without-name.yaml", "bad-node-without-name.yaml:2:5: nodes[0]: name is required "
                                   "(a node name or a glob like gpu-*)"},
    {"bad-other-node.yaml", "bad-other-node.yaml:14:19: nodes[1].devices[0].numaNode: 2000 is "
                            "not a valid NUMA node (-1..1023)"},
    {"bad-top-flip-device.yaml", "bad-top-flip-device.yaml:6:13: flips[0].device: no device "
                                 "\"gpu-7\" in any section of the config"},
    {"bad-root-list.yaml",
     "bad-root-list.yaml:1:1: the config must be a mapping with the keys seed, driverVersion, "
     "cudaDriverVersion, defaults, nodes and flips, got a list"},
    {"bad-device-name.yaml",
     "bad-device-name.yaml:3:13: defaults.devices[0].name: \"GPU_0\" is not a valid device name "
     "(a DNS label: lowercase letters, digits and '-', at most 63)"},
    {"bad-uuid.yaml", "bad-uuid.yaml:5:13: defaults.devices[0].uuid: \"GPU-1234\" is not a GPU "
                      "UUID (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)"},
};

static void test_bad_files(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
        struct config c;
        memset(&c, 0x5a, sizeof(c));
        struct error err = {{0}};
        /* node-a: bad-other-node.yaml's mistake is in node-b's section. */
        if (config_load_file(sample(bad_files[i].file), "node-a", &c, &err) != -1)
            fail_msg("%s was accepted", bad_files[i].file);
        char want[ERROR_MSG_MAX];
        snprintf(want, sizeof(want), "%s/%s", FAKEHW_TEST_CONFIGS, bad_files[i].msg);
        assert_string_equal(err.msg, want);
        assert_int_equal(c.ndevices, 0x5a5a5a5a5a5a5a5aULL); /* untouched */
    }
}

static void expect_error(const char *text, const char *msg)
{
    struct config c;
    struct error err = {{0}};
    if (config_load_string(text, strlen(text), "t.yaml", "n", &c, &err) != -1)
        fail_msg("accepted: %s", text);
    assert_string_equal(err.msg, msg);
}

static void test_bad_inline(void **state)
{
    (void)state;
    expect_error("colour: red\n", "t.yaml:1:1: colour: unknown key (known keys here: seed, "
                                  "driverVersion, cudaDriverVersion, defaults, nodes, flips)");
    expect_error("defaults: {devices: [{count: [1], profile: L4}]}\n",
                 "t.yaml:1:30: defaults.devices[0].count: expected a single value, got a list");
    expect_error("defaults: {devices: [{count: ~, profile: L4}]}\n",
                 "t.yaml:1:30: defaults.devices[0].count: needs a value");
    expect_error("defaults: {devices: [{profile: L4, memory: 0}]}\n",
                 "t.yaml:1:44: defaults.devices[0].memory: 0 is not a valid GPU memory size (more "
                 "than 0, at most 1Pi)");
    expect_error("defaults: {devices: [{profile: L4, memory: 2Pi}]}\n",
                 "t.yaml:1:44: defaults.devices[0].memory: 2Pi is not a valid GPU memory size "
                 "(more than 0, at most 1Pi)");
    expect_error("defaults: {devices: [{profile: L4, computeCapability: nine}]}\n",
                 "t.yaml:1:55: defaults.devices[0].computeCapability: \"nine\" is not a compute "
                 "capability (like 9.0)");
    expect_error("defaults: {devices: [{profile: L4, driverVersion: latest}]}\n",
                 "t.yaml:1:51: defaults.devices[0].driverVersion: \"latest\" is not a version "
                 "(digits and dots, like 580.95.05)");
    expect_error("defaults: {devices: [{profile: L4, pcieRoot: pci0:1}]}\n",
                 "t.yaml:1:46: defaults.devices[0].pcieRoot: \"pci0:1\" is not a PCIe root (like "
                 "pci0000:07)");
    expect_error("defaults: {devices: [{name: all, profile: L4}]}\n",
                 "t.yaml:1:29: defaults.devices[0].name: \"all\" is reserved (flips use it for "
                 "every device)");
    expect_error("defaults: {devices: [{count: 2, uuid: GPU-00000000-1111-2222-3333-444444444444, "
                 "profile: L4}]}\n",
                 "t.yaml:1:39: defaults.devices[0].uuid: uuid is for a single device, but count "
                 "is 2 (split the entry, or drop uuid)");
    expect_error("defaults:\n  devices:\n    - {name: a, profile: L4, uuid: "
                 "GPU-00000000-1111-2222-3333-444444444444}\n    - {name: b, profile: L4, uuid: "
                 "GPU-00000000-1111-2222-3333-444444444444}\n",
                 "t.yaml:4:36: defaults.devices[1].uuid: duplicate uuid "
                 "\"GPU-00000000-1111-2222-3333-444444444444\": device 0 from defaults.devices[0] "
                 "(line 3) has it too");
    expect_error("defaults: {devices: [{profile: L4, healthReason: \"a\\nb\"}]}\n",
                 "t.yaml:1:50: defaults.devices[0].healthReason: must be one line of text "
                 "without control characters");
    expect_error("flips: [{device: all, state: unhealthy, for: 0s}]\n",
                 "t.yaml:1:46: flips[0].for: must be longer than 0 (leave it out for a lasting "
                 "flip)");
    expect_error("defaults: {devices: [{profile: L4}]}\nflips: [{device: gpu-0, xid: \"79\"}]\n",
                 "t.yaml:2:30: flips[0].xid: \"79\" is quoted, so it is a string, not an integer");
    expect_error("defaults: {devices: [{profile: L4}]}\nflips: [{device: gpu-0, xid: 100000}]\n",
                 "t.yaml:2:30: flips[0].xid: 100000 is not a valid XID (1..99999)");
    expect_error("flips: [{state: unhealthy}]\n",
                 "t.yaml:1:9: flips[0]: device is required (a device name or \"all\")");
    expect_error("nodes: [{name: a, colour: red}]\n",
                 "t.yaml:1:19: nodes[0].colour: unknown key (known keys here: name, seed, "
                 "driverVersion, cudaDriverVersion, devices, flips)");
    expect_error("defaults: {}\n---\ndefaults: {}\n",
                 "t.yaml:3:1: a second YAML document; the config is one document");
    expect_error("defaults: {devices: [{profile: L4}]}\nnodes: [{name: x, devices: [{profile: L4, "
                 "count: 5000}]}]\n",
                 "t.yaml:2:50: nodes[0].devices[0].count: 5000 is not a valid count (0..4096)");
}

/* vfio: a GPU bound to vfio-pci, its IOMMU group and PCI identity; it
 * cannot have its driver's features too. */
static void test_vfio(void **state)
{
    (void)state;
    struct config c;
    load_text("defaults:\n  devices:\n    - {profile: H100-SXM5-80GB}\n"
              "    - {profile: T4, vfio: true}\n    - {name: own, productName: X, architecture: Y,"
              " memory: 1Gi, computeCapability: \"9.0\", vfio: false}\n",
              "n", &c);
    assert_int_equal(c.ndevices, 3);
    const struct gpu_device *h100 = find(&c, "gpu-0"), *t4 = find(&c, "gpu-1");
    const struct gpu_device *own = find(&c, "own");
    assert_false(h100->vfio);
    assert_true(t4->vfio);
    assert_int_equal(t4->iommu_group, 1);
    assert_int_equal(h100->iommu_group, 0);
    assert_string_equal(h100->pci_device_id, "0x2330");
    assert_string_equal(h100->pci_device_name, "GH100 [H100 SXM5 80GB]");
    assert_string_equal(t4->pci_device_id, "0x1eb8");
    assert_string_equal(t4->pci_device_name, "TU104GL [Tesla T4]");
    assert_false(own->vfio);
    assert_string_equal(own->pci_device_id, ""); /* no profile: not known */
    config_free(&c);
    const char *with[][2] = {
        {"mig: {mode: dynamic}", "mig"},
        {"sharing: {memory: {default: 1Gi}}", "sharing"},
        {"attach: {delay: 1s}", "attach"},
        {"virtual: true", "virtual"},
    };
    for (size_t i = 0; i < sizeof(with) / sizeof(with[0]); i++) {
        char text[256], msg[256];
        snprintf(text, sizeof(text),
                 "defaults: {devices: [{profile: A100-SXM4-80GB, vfio: true, %s}]}\n", with[i][0]);
        snprintf(msg, sizeof(msg),
                 "t.yaml:1:54: defaults.devices[0].vfio: a GPU bound to vfio-pci is passed through "
                 "whole; it cannot have %s too",
                 with[i][1]);
        expect_error(text, msg);
    }
    expect_error("defaults: {devices: [{profile: L4, vfio: \"true\"}]}\n",
                 "t.yaml:1:42: defaults.devices[0].vfio: \"true\" is quoted, so it is a string, "
                 "not a boolean (write it without quotes)");
}

/* XID flips: with or without a state, cleared with `for`. */
static void test_xid_flips(void **state)
{
    (void)state;
    struct config c;
    load_text("defaults: {devices: [{count: 2, profile: L4}]}\n"
              "flips:\n"
              "  - {device: gpu-0, after: 1s, xid: 79, for: 30s}\n"
              "  - {device: all, xid: 43}\n"
              "  - {device: gpu-1, state: unhealthy, reason: XID 48, xid: 48}\n",
              "n", &c);
    assert_int_equal(c.nflips, 3);
    assert_false(c.flips[0].has_state);
    assert_int_equal(c.flips[0].xid, 79);
    assert_int_equal(c.flips[0].after_ms, 1000);
    assert_int_equal(c.flips[0].for_ms, 30000);
    assert_string_equal(c.flips[1].device, "all");
    assert_int_equal(c.flips[1].xid, 43);
    assert_true(c.flips[2].has_state);
    assert_false(c.flips[2].healthy);
    assert_int_equal(c.flips[2].xid, 48);
    assert_string_equal(c.flips[2].reason, "XID 48");
    config_free(&c);
}

/* Bounds over the whole file: aliases or long lists cannot blow it up. */
static void test_whole_file_bounds(void **state)
{
    (void)state;
    size_t size = 1 << 20, used = 0;
    char *text = malloc(size);
    assert_non_null(text);
    used += (size_t)snprintf(text + used, size - used, "nodes:\n");
    for (int i = 0; i < 17; i++)
        used += (size_t)snprintf(text + used, size - used,
                                 "  - name: n%d\n    devices: [{count: 4096, profile: L4}]\n", i);
    expect_error(text, "t.yaml:35:15: nodes[16].devices[0]: the config has more than 65536 "
                       "devices (GPUs and MIG partitions) over all sections; use globs");

    used = (size_t)snprintf(text, size, "nodes:\n");
    for (int i = 0; i < 5; i++) {
        used += (size_t)snprintf(text + used, size - used, "  - name: n%d\n    devices:\n", i);
        for (int j = 0; j < 4000; j++)
            used += (size_t)snprintf(text + used, size - used, "      - {count: 0, profile: L4}\n");
    }
    assert_true(used < size);
    expect_error(text, "t.yaml:16012:7: nodes[4].devices: the config has more than 16384 device "
                       "entries over all sections; use counts and globs");
    free(text);
}

/* A growing text for the generated configs below. */
struct text {
    char *p;
    size_t len, cap;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        assert_true(n >= 0);
        if (t->p != NULL && (size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        t->cap = t->cap ? t->cap * 2 : 1 << 16;
        t->p = realloc(t->p, t->cap);
        assert_non_null(t->p);
    }
}

/* head, then piece count times, then tail: a generated config.  Each %d of
 * piece (at most two) is the repeat's index, from 0.  The caller frees it. */
static char *repeated(const char *head, int count, const char *piece, const char *tail)
{
    struct text t = {0};
    add(&t, "%s", head);
    for (int i = 0; i < count; i++)
        add(&t, piece, i, i);
    add(&t, "%s", tail);
    return t.p;
}

/* expect_error on a generated text, which it frees. */
static void expect_error_of(char *text, const char *msg)
{
    expect_error(text, msg);
    free(text);
}

/* YAML aliases do not multiply flips past the limits: one anchored list of
 * 1,000 flips used by 17 node sections is 17,000 flips, more than 16,384.
 * The position is the anchored list's (3:12), the path the alias's use. */
static void test_flips_bounded_after_aliases(void **state)
{
    (void)state;
    char *first = repeated("nodes:\n  - name: first\n    flips: &f\n", 1000,
                           "      - {device: all, state: unhealthy}\n", "");
    expect_error_of(repeated(first, 19, "  - name: n%d\n    flips: *f\n", ""),
                    "t.yaml:3:12: nodes[16].flips: the config has more than 16384 flips over all "
                    "sections (an alias counts each time it is used)");
    free(first);

    /* One list: at most 1,024. */
    expect_error_of(repeated("flips:\n", 1025, "  - {device: all, state: unhealthy}\n", ""),
                    "t.yaml:2:3: flips: 1025 flips, more than the 1024 one flips list may have");
}

/* Nesting is checked before libyaml builds the document (it is quadratic
 * in flow nesting depth): level 65 is refused where it opens. */
static void test_yaml_nesting_limit(void **state)
{
    (void)state;
    char *open = repeated("defaults: ", 100000, "[", "");
    expect_error_of(repeated(open, 100000, "]", "\n"),
                    "t.yaml:1:74: YAML nested deeper than 64 levels of mappings and lists (a "
                    "config needs 5)");
    free(open);
    /* Block nesting counts the same. */
    expect_error_of(repeated("", 70, "- ", "x\n"),
                    "t.yaml:1:129: YAML nested deeper than 64 levels of mappings and lists (a "
                    "config needs 5)");
}

/* libyaml's loader compares every anchor with every earlier one and every
 * alias with every anchor, so both are counted first; so are its nodes. */
static void test_yaml_anchor_limits(void **state)
{
    (void)state;
    expect_error_of(repeated("flips: [", 129, "&a%d {device: all, state: healthy}, ", "]\n"),
                    "t.yaml:1:4635: more than 128 YAML anchors (&name)");
    expect_error_of(
        repeated("defaults: {devices: [{profile: L4}], flips: [&a {device: all, state: healthy}",
                 16385, ", *a", "]}\n"),
        "t.yaml:1:65616: more than 16384 YAML aliases (*name)");
    expect_error_of(repeated("defaults: {devices: [{profile: L4}], flips: [&", 65, "a",
                             " {device: all, state: healthy}]}\n"),
                    "t.yaml:1:46: a YAML anchor name longer than 64 bytes");
    /* libyaml's loader holds every node (about 100 bytes each): a 2 MB
     * flow list of a million values would take 100 MB before any check. */
    expect_error_of(repeated("flips: [", 1 << 20, "x,", "]\n"),
                    "t.yaml:1:2097155: more than 1048576 YAML nodes (keys, values, lists, "
                    "mappings)");
}

/* YAML typing: tags are refused, integers have no leading zeros. */
static void test_yaml_typing(void **state)
{
    (void)state;
    expect_error("defaults: {devices: [{count: !!str 2, profile: L4}]}\n",
                 "t.yaml:1:30: a YAML tag (!!str): the config uses none (write integers plainly, "
                 "text plainly or quoted)");
    expect_error("defaults: {devices: [{count: !!int 2, profile: L4}]}\n",
                 "t.yaml:1:30: a YAML tag (!!int): the config uses none (write integers plainly, "
                 "text plainly or quoted)");
    expect_error("defaults: !mine {devices: [{profile: L4}]}\n",
                 "t.yaml:1:11: a YAML tag (!mine): the config uses none (write integers plainly, "
                 "text plainly or quoted)");
    expect_error("defaults: {devices: [{count: 010, profile: L4}]}\n",
                 "t.yaml:1:30: defaults.devices[0].count: \"010\" has a leading zero (YAML 1.1 "
                 "reads it as octal, YAML 1.2 as decimal); write it without");
    expect_error("defaults: {devices: [{profile: L4, numaNode: -01}]}\n",
                 "t.yaml:1:46: defaults.devices[0].numaNode: \"-01\" has a leading zero (YAML 1.1 "
                 "reads it as octal, YAML 1.2 as decimal); write it without");
    expect_error("defaults: {devices: [{count: 0x2, profile: L4}]}\n",
                 "t.yaml:1:30: defaults.devices[0].count: \"0x2\" is not an integer");
    /* Booleans follow the same rule as integers: quoted, they are strings. */
    expect_error("defaults: {devices: [{profile: L4, virtual: \"true\"}]}\n",
                 "t.yaml:1:45: defaults.devices[0].virtual: \"true\" is quoted, so it is a string, "
                 "not a boolean (write it without quotes)");
    expect_error("defaults: {devices: [{profile: L4, virtual: 'false'}]}\n",
                 "t.yaml:1:45: defaults.devices[0].virtual: \"false\" is quoted, so it is a "
                 "string, not a boolean (write it without quotes)");
    expect_error("defaults: {devices: [{profile: L4, virtual: yes}]}\n",
                 "t.yaml:1:45: defaults.devices[0].virtual: \"yes\" is not a boolean (true or "
                 "false)");
    struct config c;
    load_text("defaults: {devices: [{count: 0, profile: L4}, {count: +2, profile: L4, numaNode: "
              "-0}]}\n",
              "n", &c);
    assert_int_equal(c.ndevices, 2);
    config_free(&c);
}

/* Two node sections with the same name: an error naming both. */
static void test_duplicate_node_sections(void **state)
{
    (void)state;
    expect_error("nodes:\n  - name: a\n  - name: b\n  - name: a\n",
                 "t.yaml:4:11: nodes[2].name: \"a\" is also the name of nodes[0] (line 2); each "
                 "node section needs its own name or glob");
    expect_error_of(repeated("nodes:\n", 10000, "  - name: same\n", ""),
                    "t.yaml:3:11: nodes[1].name: \"same\" is also the name of nodes[0] (line "
                    "2); each node section needs its own name or glob");
    expect_error_of(repeated("nodes:\n", 10001, "  - name: n%d\n", ""),
                    "t.yaml:2:3: nodes: 10001 node sections, more than 10000 (use globs)");
}

/* Matching top-level flips with the devices of every section costs one
 * lookup per device and per flip, not one per flip and section: 1,000
 * sections and 1,000 top-level flips need about 2,000 lookups, not
 * 1,000,000. */
static void test_top_flips_linear(void **state)
{
    (void)state;
    char *sections = repeated("nodes:\n", 1000,
                              "  - {name: n%d, devices: [{name: d%d, profile: L4}]}\n", "flips:\n");
    char *text = repeated(sections, 1000, "  - {device: d%d, state: unhealthy, after: 1s}\n", "");
    free(sections);
    struct config c;
    load_text(text, "n7", &c);
    assert_int_equal(c.nflips, 1);
    assert_string_equal(c.flips[0].device, "d7");
    size_t lookups = config_resolve_flip_lookups();
    if (lookups > 4000)
        fail_msg("%zu lookups for 1000 sections and 1000 flips", lookups);
    config_free(&c);
    free(text);

    /* The error still names the first flip (in file order) without a device. */
    expect_error("nodes: [{name: a, devices: [{name: x, profile: L4}]}]\nflips:\n"
                 "  - {device: x, state: unhealthy}\n  - {device: zz, state: unhealthy}\n"
                 "  - {device: yy, state: unhealthy}\n",
                 "t.yaml:4:14: flips[1].device: no device \"zz\" in any section of the config");
}

static void test_missing_file(void **state)
{
    (void)state;
    struct config c;
    struct error err;
    assert_int_equal(config_load_file("/nonexistent/fakehw.yaml", "n", &c, &err), -1);
    assert_string_equal(err.msg, "reading config /nonexistent/fakehw.yaml: No such file or "
                                 "directory");
}

TEST_MAIN("fakehw config", test_defaults_section, test_exact_node_section,
          test_glob_and_first_match, test_no_section, test_overrides_and_custom, test_seeds,
          test_4096_unique, test_value_checks, test_bad_files, test_bad_inline, test_xid_flips,
          test_vfio, test_whole_file_bounds, test_missing_file, test_flips_bounded_after_aliases,
          test_yaml_nesting_limit, test_yaml_anchor_limits, test_yaml_typing,
          test_duplicate_node_sections, test_top_flips_linear)
