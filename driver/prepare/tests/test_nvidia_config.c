// SPDX-License-Identifier: Apache-2.0
/* Unit tests for NVIDIA's opaque configs (driver/prepare/nvidia_config.h):
 * the three kinds with their defaults, which entry applies to which result,
 * MPS limits per device, and every refusal with the entry and field it
 * names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/prepare/nvidia_config.h"
#include "common/tests/test_main.h"
#include "common/tests/test_json.h"

#define DRIVER "gpu.nvidia.com"
#define PARAMS(kind, body)                                                                         \
    "{\"apiVersion\":\"resource.nvidia.com/v1beta1\",\"kind\":\"" kind "\"" body "}"
#define ENTRY(source, requests, params)                                                            \
    "{\"source\":\"" source "\",\"requests\":" requests ",\"opaque\":{\"driver\":\"" DRIVER        \
    "\",\"parameters\":" params "}}"

/* Two GPUs and a MIG device, for results of requests gpu, gpu and mig. */
static struct fakehw_device devs[3];
static const char *const reqs[] = {"gpu", "gpu", "mig"};

static int setup(void **state)
{
    (void)state;
    memset(devs, 0, sizeof(devs));
    for (int i = 0; i < 3; i++) {
        snprintf(devs[i].name, sizeof(devs[i].name), "gpu-%d", i);
        snprintf(devs[i].uuid, sizeof(devs[i].uuid), "GPU-%d0000000-0000-0000-0000-000000000000",
                 2 - i); /* sorted backwards: index 0 is the last device */
    }
    snprintf(devs[2].name, sizeof(devs[2].name), "gpu-0-mig-1g10gb-19-0");
    snprintf(devs[2].uuid, sizeof(devs[2].uuid), "MIG-00000000-0000-0000-0000-000000000000");
    snprintf(devs[2].parent, sizeof(devs[2].parent), "gpu-0");
    return 0;
}

static int resolve(const char *config, struct nvidia_config *out, struct error *err)
{
    json_t *c = test_json(config);
    int rc = nvidia_config_resolve(DRIVER, c, (const char *const *)reqs, devs, 3, out, err);
    json_decref(c);
    return rc;
}

/* The error of one entry with these parameters. */
static const char *refusal(const char *params)
{
    static char buf[8192];
    static struct error err;
    char config[4096];
    snprintf(config, sizeof(config),
             "[{\"source\":\"FromClaim\",\"requests\":[],\"opaque\":{\"driver\":\"" DRIVER
             "\",\"parameters\":%s}}]",
             params);
    struct nvidia_config out[3];
    if (resolve(config, out, &err) == 0)
        fail_msg("accepted: %s", params);
    snprintf(buf, sizeof(buf), "%s", err.msg);
    return buf;
}

static void test_defaults(void **state)
{
    (void)state;
    struct nvidia_config c[3];
    struct error err;
    assert_int_equal(resolve(NULL, c, &err), 0);
    assert_int_equal(c[0].kind, NVIDIA_GPU_CONFIG);
    assert_int_equal(c[2].kind, NVIDIA_MIG_DEVICE_CONFIG);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(c[i].entry, -1);
        assert_int_equal(c[i].sharing, NVIDIA_SHARING_NONE);
    }
    /* Another driver's entry is skipped. */
    assert_int_equal(resolve("[{\"source\":\"FromClaim\",\"opaque\":{\"driver\":\"x.example.com\","
                             "\"parameters\":{\"anything\":1}}}]",
                             c, &err),
                     0);
    assert_int_equal(c[0].entry, -1);
}

static void test_time_slicing(void **state)
{
    (void)state;
    struct nvidia_config c[3];
    struct error err;
    /* No interval: Default, as the real driver normalizes it. */
    assert_int_equal(resolve("[" ENTRY("FromClaim", "[]",
                                       PARAMS("GpuConfig", ",\"sharing\":{\"strategy\":"
                                                           "\"TimeSlicing\"}")) "]",
                             c, &err),
                     0);
    assert_int_equal(c[0].sharing, NVIDIA_SHARING_TIME_SLICING);
    assert_string_equal(c[0].interval, "Default");
    assert_int_equal(c[1].entry, 0);
    /* A GpuConfig without requests leaves MIG devices to their default. */
    assert_int_equal(c[2].entry, -1);
    assert_int_equal(
        resolve(
            "[" ENTRY("FromClaim", "[]",
                      PARAMS("GpuConfig", ",\"sharing\":{\"strategy\":\"TimeSlicing\","
                                          "\"timeSlicingConfig\":{\"interval\":\"Long\"}}")) "]",
            c, &err),
        0);
    assert_string_equal(c[1].interval, "Long");
}

static void test_precedence(void **state)
{
    (void)state;
    struct nvidia_config c[3];
    struct error err;
    /* The claim's entries come after the class's wherever they stand; the
     * last entry that applies wins, and one of the other kind does not
     * apply when it names no request. */
#define MPS_FOR_GPU                                                                                \
    ENTRY("FromClaim", "[\"gpu\"]", PARAMS("GpuConfig", ",\"sharing\":{\"strategy\":\"MPS\"}"))
#define TS_FOR_ALL                                                                                 \
    ENTRY("FromClass", "[]", PARAMS("GpuConfig", ",\"sharing\":{\"strategy\":\"TimeSlicing\"}"))
#define MIG_TS                                                                                     \
    ENTRY("FromClaim", "[]",                                                                       \
          PARAMS("MigDeviceConfig", ",\"sharing\":{\"strategy\":\"TimeSlicing\"}"))
    const char *config = "[" MPS_FOR_GPU "," TS_FOR_ALL "," MIG_TS "]";
    assert_int_equal(resolve(config, c, &err), 0);
    assert_int_equal(c[0].sharing, NVIDIA_SHARING_MPS);
    assert_int_equal(c[0].entry, 0);
    assert_string_equal(c[0].source, "FromClaim");
    assert_int_equal(c[2].kind, NVIDIA_MIG_DEVICE_CONFIG);
    assert_int_equal(c[2].sharing, NVIDIA_SHARING_TIME_SLICING);
    assert_null(c[2].interval); /* a MIG device keeps its GPU's time slice */
    assert_int_equal(c[2].entry, 2);
}

static void test_mps(void **state)
{
    (void)state;
    struct nvidia_config c[3];
    struct error err;
    /* Index 0 is the first of the sorted UUIDs: gpu-1's. */
    const char *config =
        "[" ENTRY("FromClaim", "[\"gpu\"]",
                  PARAMS("GpuConfig", ",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":{"
                                      "\"defaultActiveThreadPercentage\":50,"
                                      "\"defaultPinnedDeviceMemoryLimit\":\"2Gi\","
                                      "\"defaultPerDevicePinnedMemoryLimit\":{\"0\":\"512Mi\"},"
                                      "\"multiUser\":true}}")) "]";
    assert_int_equal(resolve(config, c, &err), 0);
    assert_int_equal(c[0].active_thread_percentage, 50);
    assert_true(c[0].multi_user);
    assert_int_equal(c[0].pinned_limit_mib, 2048);
    assert_int_equal(c[1].pinned_limit_mib, 512);
    assert_string_equal(c[0].pinned_limits, "GPU-10000000-0000-0000-0000-000000000000=512M,"
                                            "GPU-20000000-0000-0000-0000-000000000000=2048M");
    assert_string_equal(c[1].pinned_limits, c[0].pinned_limits);
    /* By UUID, without a default: only that device. */
    config =
        "[" ENTRY("FromClaim", "[\"gpu\"]",
                  PARAMS("GpuConfig", ",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":{"
                                      "\"defaultPerDevicePinnedMemoryLimit\":{\"GPU-"
                                      "20000000-0000-0000-0000-000000000000\":1073741824}}}")) "]";
    assert_int_equal(resolve(config, c, &err), 0);
    assert_int_equal(c[0].pinned_limit_mib, 1024);
    assert_int_equal(c[1].pinned_limit_mib, 0);
    assert_int_equal(c[0].active_thread_percentage, -1);
    /* A key that names no device of the entry. */
    config = "[" ENTRY("FromClaim", "[\"gpu\"]",
                       PARAMS("GpuConfig", ",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":{"
                                           "\"defaultPerDevicePinnedMemoryLimit\":{\"2\":\"1Gi\""
                                           "}}}")) "]";
    assert_int_equal(resolve(config, c, &err), -1);
    assert_string_equal(err.msg, "config[0] (FromClaim): parameters: field "
                                 "\"sharing.mpsConfig.defaultPerDevicePinnedMemoryLimit\": \"2\" "
                                 "is neither the UUID nor the index (0..1) of a device it applies "
                                 "to");
}

static void test_vfio(void **state)
{
    (void)state;
    struct nvidia_config c[3];
    struct error err;
    /* Parsed, and applied to no GPU or MIG device. */
    assert_int_equal(resolve("[" ENTRY("FromClass", "[]",
                                       PARAMS("VfioDeviceConfig",
                                              ",\"iommu\":{\"backendPolicy\":\"PreferIommuFD\","
                                              "\"enableAPIDevice\":true}")) "]",
                             c, &err),
                     0);
    assert_int_equal(c[0].entry, -1);
    assert_int_equal(c[2].entry, -1);
    /* Named for a GPU's request: refused. */
    assert_int_equal(
        resolve("[" ENTRY("FromClaim", "[\"gpu\"]", PARAMS("VfioDeviceConfig", "")) "]", c, &err),
        -1);
    assert_string_equal(err.msg, "config[0] (FromClaim): a VfioDeviceConfig cannot apply to device "
                                 "gpu-0 of type gpu (request gpu)");
}

/* VFIO devices: the default config (LegacyOnly, no API device), an entry
 * by kind, a GpuConfig named for them refused, and one group per claim. */
static void test_vfio_devices(void **state)
{
    (void)state;
    struct fakehw_device v[3];
    memset(v, 0, sizeof(v));
    for (int i = 0; i < 3; i++) {
        snprintf(v[i].name, sizeof(v[i].name), i < 2 ? "gpu-vfio-%d" : "gpu-%d", i);
        snprintf(v[i].uuid, sizeof(v[i].uuid), "GPU-%d0000000-0000-0000-0000-000000000000", i);
        v[i].vfio = i < 2;
    }
    const char *const r[] = {"vfio", "vfio2", "gpu"};
    struct nvidia_config c[3];
    struct error err;
    assert_int_equal(nvidia_config_resolve(DRIVER, NULL, r, v, 3, c, &err), 0);
    assert_int_equal(c[0].kind, NVIDIA_VFIO_DEVICE_CONFIG);
    assert_int_equal(c[2].kind, NVIDIA_GPU_CONFIG);
    assert_string_equal(c[0].iommu_backend, "LegacyOnly");
    assert_false(c[0].iommu_api_device);
    json_t *status = nvidia_config_json(&c[0]);
    char *text = json_dumps(status, JSON_COMPACT);
    assert_string_equal(text, "{\"kind\":\"VfioDeviceConfig\",\"iommu\":{\"backendPolicy\":"
                              "\"LegacyOnly\",\"enableAPIDevice\":false}}");
    free(text);
    json_decref(status);

    /* An entry for every VFIO device: one group. */
    json_t *cfg = json_loads(
        "[" ENTRY("FromClaim", "[]",
                  PARAMS("VfioDeviceConfig", ",\"iommu\":{\"enableAPIDevice\":true}")) "]",
        0, NULL);
    assert_int_equal(nvidia_config_resolve(DRIVER, cfg, r, v, 3, c, &err), 0);
    assert_true(c[0].iommu_api_device && c[1].iommu_api_device);
    assert_string_equal(c[1].iommu_backend, "LegacyOnly");
    json_decref(cfg);

    /* One VFIO device gets an entry, the other the default: two groups. */
    cfg = json_loads("[" ENTRY("FromClaim", "[\"vfio2\"]", PARAMS("VfioDeviceConfig", "")) "]", 0,
                     NULL);
    assert_int_equal(nvidia_config_resolve(DRIVER, cfg, r, v, 3, c, &err), -1);
    assert_string_equal(err.msg, "it contains 2 VFIO device groups (its VFIO devices, from "
                                 "gpu-vfio-0 on, get different VfioDeviceConfigs), but at most one "
                                 "is supported per claim");
    json_decref(cfg);

    /* A GpuConfig named for a VFIO device's request. */
    cfg = json_loads("[" ENTRY("FromClass", "[\"vfio\"]", PARAMS("GpuConfig", "")) "]", 0, NULL);
    assert_int_equal(nvidia_config_resolve(DRIVER, cfg, r, v, 3, c, &err), -1);
    assert_string_equal(err.msg, "config[0] (FromClass): a GpuConfig cannot apply to device "
                                 "gpu-vfio-0 of type vfio (request vfio)");
    json_decref(cfg);
}

static void test_kind_mismatch(void **state)
{
    (void)state;
    struct nvidia_config c[3];
    struct error err;
    assert_int_equal(
        resolve("[" ENTRY("FromClaim", "[\"mig\"]", PARAMS("GpuConfig", "")) "]", c, &err), -1);
    assert_string_equal(err.msg, "config[0] (FromClaim): a GpuConfig cannot apply to device "
                                 "gpu-0-mig-1g10gb-19-0 of type mig (request mig)");
}

static void test_refusals(void **state)
{
    (void)state;
    /* The entry's kind and what follows it, or (kind NULL) its whole text. */
    static const struct {
        const char *kind, *body, *msg;
    } cases[] = {
        {NULL, "{\"kind\":\"GpuConfig\"}",
         "field \"apiVersion\" is required (want "
         "resource.nvidia.com/v1beta1)"},
        {NULL, "{\"apiVersion\":\"resource.nvidia.com/v1\",\"kind\":\"GpuConfig\"}",
         "apiVersion \"resource.nvidia.com/v1\" is not supported (want "
         "resource.nvidia.com/v1beta1)"},
        {"ComputeDomainChannelConfig", "",
         "kind \"ComputeDomainChannelConfig\" is not supported (want GpuConfig, MigDeviceConfig "
         "or VfioDeviceConfig)"},
        {"GpuConfig", ",\"shared\":true", "unknown field \"shared\""},
        {"GpuConfig", ",\"sharing\":{}",
         "field \"sharing.strategy\" is required (TimeSlicing or MPS)"},
        {"GpuConfig", ",\"sharing\":{\"strategy\":\"SpacePartitioning\"}",
         "field \"sharing.strategy\": \"SpacePartitioning\" is not one of TimeSlicing, MPS"},
        {"GpuConfig", ",\"sharing\":{\"strategy\":\"TimeSlicing\",\"timeSlicing\":{}}",
         "unknown field \"sharing.timeSlicing\""},
        {"GpuConfig",
         ",\"sharing\":{\"strategy\":\"TimeSlicing\",\"timeSlicingConfig\":{"
         "\"interval\":\"Forever\"}}",
         "field \"sharing.timeSlicingConfig.interval\": \"Forever\" is not one of Default, Short, "
         "Medium, Long"},
        {"GpuConfig", ",\"sharing\":{\"strategy\":\"TimeSlicing\",\"mpsConfig\":{}}",
         "field \"sharing.mpsConfig\" is not allowed with strategy TimeSlicing"},
        {"GpuConfig", ",\"sharing\":{\"strategy\":\"MPS\",\"timeSlicingConfig\":{}}",
         "field \"sharing.timeSlicingConfig\" is not allowed with strategy MPS"},
        {"GpuConfig",
         ",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":{"
         "\"defaultActiveThreadPercentage\":101}}",
         "field \"sharing.mpsConfig.defaultActiveThreadPercentage\": 101 is not between 0 and "
         "100"},
        {"GpuConfig",
         ",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":{"
         "\"defaultActiveThreadPercentage\":\"50\"}}",
         "field \"sharing.mpsConfig.defaultActiveThreadPercentage\" must be an integer"},
        {"GpuConfig",
         ",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":{"
         "\"defaultPinnedDeviceMemoryLimit\":\"512Ki\"}}",
         "field \"sharing.mpsConfig.defaultPinnedDeviceMemoryLimit\": 512Ki is below 1Mi "
         "(limits are whole MiB)"},
        {"GpuConfig",
         ",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":{"
         "\"defaultPerDevicePinnedMemoryLimit\":[]}}",
         "field \"sharing.mpsConfig.defaultPerDevicePinnedMemoryLimit\" must be an object "
         "(device UUID or index: quantity)"},
        {"GpuConfig",
         ",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":{"
         "\"multiUser\":\"yes\"}}",
         "field \"sharing.mpsConfig.multiUser\" must be true or false"},
        {"GpuConfig", ",\"sharing\":{\"strategy\":\"MPS\",\"mpsConfig\":{\"pipe\":1}}",
         "unknown field \"sharing.mpsConfig.pipe\""},
        {"MigDeviceConfig",
         ",\"sharing\":{\"strategy\":\"TimeSlicing\","
         "\"timeSlicingConfig\":{}}",
         "unknown field \"sharing.timeSlicingConfig\""},
        {"VfioDeviceConfig", ",\"iommu\":{\"backendPolicy\":\"Iommufd\"}",
         "field \"iommu.backendPolicy\": \"Iommufd\" is not one of LegacyOnly, PreferIommuFD"},
        {"VfioDeviceConfig", ",\"iommu\":{\"enableAPIDevice\":1}",
         "field \"iommu.enableAPIDevice\" must be true or false"},
        {"VfioDeviceConfig", ",\"sharing\":{}", "unknown field \"sharing\""},
        {NULL, "[]", "must be a JSON object"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char params[1024], want[1024];
        if (cases[i].kind != NULL)
            snprintf(params, sizeof(params), PARAMS("%s", "%s"), cases[i].kind, cases[i].body);
        else
            snprintf(params, sizeof(params), "%s", cases[i].body);
        snprintf(want, sizeof(want), "config[0] (FromClaim): parameters: %s", cases[i].msg);
        const char *got = refusal(params);
        if (strcmp(got, want) != 0)
            fail_msg("case %zu:\n got  %s\n want %s", i, got, want);
    }
}

static void test_entry_errors(void **state)
{
    (void)state;
    struct nvidia_config c[3];
    struct error err;
    assert_int_equal(resolve("[{\"source\":\"FromClaim\",\"requests\":[]}]", c, &err), -1);
    assert_string_equal(err.msg, "config[0]: only opaque parameters are supported by this driver");
    assert_int_equal(resolve("[{\"source\":\"FromPod\",\"opaque\":{\"driver\":\"" DRIVER
                             "\",\"parameters\":{}}}]",
                             c, &err),
                     -1);
    assert_string_equal(err.msg, "config[0]: source must be FromClass or FromClaim");
    assert_int_equal(resolve("{}", c, &err), -1);
    assert_string_equal(err.msg, "status.allocation.devices.config must be a list");
}

static const struct fakehw_device *find(void *ctx, const char *name)
{
    (void)ctx;
    for (int i = 0; i < 3; i++)
        if (!strcmp(devs[i].name, name))
            return &devs[i];
    return NULL;
}

/* The device status data: the real API's words, per result of the claim. */
static void test_status_data(void **state)
{
    (void)state;
    const char *claim_text =
        "{\"status\":{\"allocation\":{\"devices\":{\"results\":["
        "{\"request\":\"other\",\"driver\":\"x.example.com\",\"pool\":\"n\",\"device\":\"d\"},"
        "{\"request\":\"gpu\",\"driver\":\"" DRIVER "\",\"pool\":\"n\",\"device\":\"gpu-0\"},"
        "{\"request\":\"gpu\",\"driver\":\"" DRIVER "\",\"pool\":\"n\",\"device\":\"gpu-1\"},"
        "{\"request\":\"mig\",\"driver\":\"" DRIVER "\",\"pool\":\"n\",\"device\":"
        "\"gpu-0-mig-1g10gb-19-0\"}],"
        "\"config\":[" ENTRY("FromClaim", "[\"gpu\"]",
                             PARAMS("GpuConfig",
                                    ",\"sharing\":{\"strategy\":\"MPS\","
                                    "\"mpsConfig\":{\"defaultActiveThreadPercentage\":"
                                    "25,\"defaultPinnedDeviceMemoryLimit\":\"1Gi\"}}")) "]"
                                                                                        "}}}}";
    json_t *claim = test_json(claim_text);
    json_t *d = nvidia_config_claim_data(DRIVER, "n", claim, 2, find, NULL);
    char *text = json_dumps(d, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(text, "{\"entry\":0,\"kind\":\"GpuConfig\",\"sharing\":{\"mpsConfig\":"
                              "{\"defaultActiveThreadPercentage\":25,\"multiUser\":false,"
                              "\"pinnedDeviceMemoryLimit\":\"1024M\"},\"strategy\":\"MPS\"},"
                              "\"source\":\"FromClaim\"}");
    free(text);
    json_decref(d);
    /* The MIG device: the default MigDeviceConfig. */
    d = nvidia_config_claim_data(DRIVER, "n", claim, 3, find, NULL);
    text = json_dumps(d, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(text, "{\"kind\":\"MigDeviceConfig\"}");
    free(text);
    json_decref(d);
    /* Another driver's result, and another pool: nothing. */
    assert_null(nvidia_config_claim_data(DRIVER, "n", claim, 0, find, NULL));
    assert_null(nvidia_config_claim_data(DRIVER, "other", claim, 1, find, NULL));
    json_decref(claim);
}

TEST_MAIN_LIST("driver/prepare nvidia_config", cmocka_unit_test_setup(test_defaults, setup),
               cmocka_unit_test_setup(test_time_slicing, setup),
               cmocka_unit_test_setup(test_precedence, setup),
               cmocka_unit_test_setup(test_mps, setup), cmocka_unit_test_setup(test_vfio, setup),
               cmocka_unit_test(test_vfio_devices),
               cmocka_unit_test_setup(test_kind_mismatch, setup),
               cmocka_unit_test_setup(test_refusals, setup),
               cmocka_unit_test_setup(test_entry_errors, setup),
               cmocka_unit_test_setup(test_status_data, setup))
