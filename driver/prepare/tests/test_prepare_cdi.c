// SPDX-License-Identifier: Apache-2.0
/* Unit tests: the exact CDI specs and device metadata of a claim, and that
 * every name in them follows the CDI rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/prepare/cdi_names.h"
#include "driver/prepare/cdi_spec.h"
#include "driver/device/device_attributes.h"
#include "driver/prepare/device_metadata.h"
#include "prepare_fixture.h"
#include "common/tests/test_main.h"
#include "common/tests/test_must.h"

/* Two devices of two requests: gpu-0 with a device node and the claim's
 * TimeSlicing config plus env, gpu-3 without a node, from a subrequest, with
 * a shareID and SpacePartitioning. */
struct two {
    struct fakehw_device d[2];
    struct gpu_config g[2];
    struct cdi_claim_device cd[2];
    struct cdi_claim c;
};

static void two_devices(struct two *t, const char *smi)
{
    memset(t, 0, sizeof(*t));
    snprintf(t->d[0].name, sizeof(t->d[0].name), "gpu-0");
    snprintf(t->d[0].uuid, sizeof(t->d[0].uuid), "GPU-a0a0a0a0-1111-2222-3333-444455556660");
    snprintf(t->d[0].device_path, sizeof(t->d[0].device_path), "/var/run/fakehw-dev/fakegpu0");
    snprintf(t->d[1].name, sizeof(t->d[1].name), "gpu-3");
    snprintf(t->d[1].uuid, sizeof(t->d[1].uuid), "GPU-a0a0a0a3-1111-2222-3333-444455556663");
    t->d[1].index = 3;
    t->d[1].minor = 3;
    t->g[0] = (struct gpu_config){GPU_SHARING_TIME_SLICING, "Long", 0,
                                  json_pack("{s:s, s:s}", "ZED", "z", "ALPHA", "a=b")};
    t->g[1] = (struct gpu_config){GPU_SHARING_SPACE_PARTITIONING, "Default", 4, json_object()};
    t->cd[0] = (struct cdi_claim_device){&t->d[0], "gpus", NULL, &t->g[0], NULL, 0, ""};
    t->cd[1] = (struct cdi_claim_device){&t->d[1], "extra/small", UID3, &t->g[1], NULL, 0, ""};
    t->c = (struct cdi_claim){FIXTURE_DRIVER, "default", "c1", UID1, "/var/run/fakehw", smi,
                              false,          t->cd,     2};
}

static void free_two(struct two *t)
{
    gpu_config_free(t->g, 2);
}

/* The claim's spec, which must be made. */
static json_t *claim_spec(struct cdi_claim *c)
{
    struct error err;
    return MUST(cdi_claim_spec(c, &err), err);
}

/* As compact text: the containerEdits of the spec (device < 0) or of its
 * device-th device; of those, only key when key is not NULL. */
static char *edits_text(const json_t *spec, int device, const char *key)
{
    const json_t *of = device < 0 ? spec : json_array_get(json_object_get(spec, "devices"), device);
    const json_t *edits = json_object_get(of, "containerEdits");
    return json_dumps(key ? json_object_get(edits, key) : edits, JSON_COMPACT);
}

#define MOUNT(host, container)                                                                     \
    "{\"hostPath\":\"" host "\",\"containerPath\":\"" container "\",\"options\":[\"ro\",\"bind\"]" \
    "}"

static void test_claim_spec_exact(void **state)
{
    (void)state;
    struct two t;
    two_devices(&t, "/var/lib/fakehw/bin/fakegpu-smi");
    json_t *spec = claim_spec(&t.c);
    char *text = json_dumps(spec, JSON_COMPACT);
    const char *want =
        "{\"cdiVersion\":\"0.5.0\",\"kind\":\"k8s.gpu.fakehw.example.com/gpu\","
        "\"containerEdits\":{\"env\":["
        "\"DRA_RESOURCE_DRIVER_NAME=gpu.fakehw.example.com\","
        "\"DRA_CLAIM_NAMESPACE=default\",\"DRA_CLAIM_NAME=c1\",\"DRA_CLAIM_UID=" UID1 "\","
        "\"FAKEHW_ROOT=/var/run/fakehw\","
        "\"FAKEHW_VISIBLE_DEVICES=GPU-a0a0a0a0-1111-2222-3333-444455556660,"
        "GPU-a0a0a0a3-1111-2222-3333-444455556663\"],"
        "\"mounts\":[" MOUNT(
            "/var/lib/fakehw/bin/fakegpu-smi",
            "/usr/bin/fakegpu-smi") "]},"
                                    "\"devices\":["
                                    "{\"name\":\"" UID1 "-gpu-0\",\"containerEdits\":{\"env\":["
                                    "\"FAKEHW_DEVICE_0_UUID=GPU-a0a0a0a0-1111-2222-3333-"
                                    "444455556660\","
                                    "\"FAKEHW_DEVICE_0_NAME=gpu-0\",\"FAKEHW_DEVICE_0_REQUEST="
                                    "gpus\","
                                    "\"FAKEHW_DEVICE_0_SHARING_STRATEGY=TimeSlicing\","
                                    "\"FAKEHW_DEVICE_0_TIMESLICE_INTERVAL=Long\","
                                    "\"FAKEHW_SHARING_STRATEGY=TimeSlicing\",\"FAKEHW_TIMESLICE_"
                                    "INTERVAL=Long\","
                                    "\"ALPHA=a=b\",\"ZED=z\"],"
                                    "\"deviceNodes\":[{\"path\":\"/dev/fakegpu0\",\"hostPath\":\"/"
                                    "var/run/fakehw-dev/"
                                    "fakegpu0\"}],"
                                    "\"mounts\":[" MOUNT(
                                        "/var/run/fakehw/devices/gpu-0",
                                        "/var/run/fakehw/devices/gpu-0") "]}},"
                                                                         "{\"name\":\"" UID1
                                                                         "-gpu-3\","
                                                                         "\"containerEdits\":{"
                                                                         "\"env\":["
                                                                         "\"FAKEHW_DEVICE_3_UUID="
                                                                         "GPU-a0a0a0a3-1111-2222-"
                                                                         "3333-444455556663\","
                                                                         "\"FAKEHW_DEVICE_3_NAME="
                                                                         "gpu-3\",\"FAKEHW_DEVICE_"
                                                                         "3_REQUEST=extra/small\","
                                                                         "\"FAKEHW_DEVICE_3_SHARE_"
                                                                         "ID=" UID3 "\","
                                                                         "\"FAKEHW_DEVICE_3_"
                                                                         "SHARING_STRATEGY="
                                                                         "SpacePartitioning\","
                                                                         "\"FAKEHW_DEVICE_3_"
                                                                         "PARTITION_COUNT=4\","
                                                                         "\"FAKEHW_SHARING_"
                                                                         "STRATEGY="
                                                                         "SpacePartitioning\","
                                                                         "\"FAKEHW_PARTITION_COUNT="
                                                                         "4\"],"
                                                                         "\"mounts\":[" MOUNT(
                                                                             "/var/run/fakehw/"
                                                                             "devices/gpu-3",
                                                                             "/var/run/fakehw/"
                                                                             "devices/gpu-3") "]}}"
                                                                                              "]}";
    if (strcmp(text, want) != 0)
        fail_msg("spec\n  got:  %s\n  want: %s", text, want);
    assert_string_equal(t.cd[0].cdi_name, UID1 "-gpu-0");
    assert_string_equal(t.cd[1].cdi_name, UID1 "-gpu-3");

    /* On disk: the same JSON, indented, with a final newline. */
    char *file = cdi_spec_text(spec);
    json_t *back = json_loads(file, 0, NULL);
    assert_true(json_equal(back, spec));
    assert_int_equal(file[strlen(file) - 1], '\n');
    assert_non_null(strstr(file, "\n  \"kind\": \"k8s.gpu.fakehw.example.com/gpu\",\n"));
    json_decref(back);
    free(file);
    free(text);
    json_decref(spec);
    free_two(&t);
}

/* Every name and env entry follows the CDI rules, for both driver names. */
static void check_valid(const json_t *spec)
{
    struct error err;
    const char *kind = json_string_value(json_object_get(spec, "kind"));
    if (cdi_check_kind(kind, &err) < 0)
        fail_msg("%s", err.msg);
    size_t i, k;
    json_t *d, *e;
    json_array_foreach(json_object_get(spec, "devices"), i, d)
    {
        if (cdi_check_device_name(json_string_value(json_object_get(d, "name")), &err) < 0)
            fail_msg("%s", err.msg);
        json_array_foreach(json_object_get(json_object_get(d, "containerEdits"), "env"), k, e)
        {
            const char *s = json_string_value(e);
            const char *eq = strchr(s, '=');
            assert_non_null(eq);
            assert_true(eq > s);
            for (const char *p = s; p < eq; p++)
                assert_true(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'));
        }
    }
}

/* The nvidia personality: NVIDIA's config as env, no fakehw GpuConfig
 * variables, and fakegpu-smi also as nvidia-smi. */
static void test_claim_spec_nvidia(void **state)
{
    (void)state;
    struct two t;
    two_devices(&t, "/var/lib/fakehw/bin/fakegpu-smi");
    struct nvidia_config mps = {.kind = NVIDIA_GPU_CONFIG,
                                .entry = 0,
                                .sharing = NVIDIA_SHARING_MPS,
                                .active_thread_percentage = 30,
                                .pinned_limit_mib = 512,
                                .pinned_limits = "GPU-a0a0a0a0-1111-2222-3333-444455556660=512M"};
    struct nvidia_config ts = {.kind = NVIDIA_GPU_CONFIG,
                               .entry = 1,
                               .sharing = NVIDIA_SHARING_TIME_SLICING,
                               .interval = "Short",
                               .active_thread_percentage = -1};
    t.cd[0].nvidia = &mps;
    t.cd[1].nvidia = &ts;
    t.c.nvidia_smi = true;
    json_t *spec = claim_spec(&t.c);
    json_t *mounts = json_object_get(json_object_get(spec, "containerEdits"), "mounts");
    assert_int_equal(json_array_size(mounts), 2);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(mounts, 1), "containerPath")),
        "/usr/bin/nvidia-smi");
    char *env0 = edits_text(spec, 0, "env"), *env1 = edits_text(spec, 1, "env");
    assert_string_equal(env0, "[\"FAKEHW_DEVICE_0_UUID=GPU-a0a0a0a0-1111-2222-3333-444455556660\","
                              "\"FAKEHW_DEVICE_0_NAME=gpu-0\",\"FAKEHW_DEVICE_0_REQUEST=gpus\","
                              "\"FAKEHW_DEVICE_0_SHARING_STRATEGY=MPS\","
                              "\"CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps\","
                              "\"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=30\","
                              "\"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=GPU-a0a0a0a0-1111-2222-3333-"
                              "444455556660=512M\","
                              "\"FAKEHW_DEVICE_0_MPS_PINNED_DEVICE_MEM_LIMIT=512M\"]");
    assert_non_null(strstr(env1, "\"FAKEHW_DEVICE_3_SHARING_STRATEGY=TimeSlicing\","
                                 "\"FAKEHW_DEVICE_3_TIMESLICE_INTERVAL=Short\"]"));
    /* The fakehw GpuConfig's env is not there. */
    assert_null(strstr(env0, "ZED="));
    assert_null(strstr(env1, "PARTITION_COUNT"));
    free(env0);
    free(env1);
    json_decref(spec);
    free_two(&t);
}

/* A VFIO device and a whole GPU in one claim: the VFIO device gets its
 * group's /dev/vfio node and nothing of the GPU driver's; the claim gets
 * NVIDIA_VISIBLE_DEVICES=void, /dev/vfio/vfio with enableAPIDevice, and
 * the smi mounts only for the GPU. */
static void test_claim_spec_vfio(void **state)
{
    (void)state;
    struct two t;
    two_devices(&t, "/var/lib/fakehw/bin/fakegpu-smi");
    t.d[1].vfio = true;
    t.cd[1].share_id = NULL; /* VFIO devices are not shared */
    t.d[1].iommu_group = 3;
    snprintf(t.d[1].vfio_device_path, sizeof(t.d[1].vfio_device_path),
             "/var/run/fakehw-dev/vfio/3");
    snprintf(t.d[1].device_path, sizeof(t.d[1].device_path), "/var/run/fakehw-dev/fakegpu3");
    struct nvidia_config gpu = {.kind = NVIDIA_GPU_CONFIG, .entry = -1};
    struct nvidia_config vfio = {.kind = NVIDIA_VFIO_DEVICE_CONFIG,
                                 .entry = 0,
                                 .iommu_backend = "LegacyOnly",
                                 .iommu_api_device = true};
    t.cd[0].nvidia = &gpu;
    t.cd[1].nvidia = &vfio;
    t.c.nvidia_smi = true;
    json_t *spec = claim_spec(&t.c);
    char *claim = edits_text(spec, -1, NULL), *dev = edits_text(spec, 1, NULL);
    assert_non_null(strstr(claim, "\"NVIDIA_VISIBLE_DEVICES=void\""));
    assert_non_null(strstr(claim, "\"deviceNodes\":[{\"path\":\"/dev/vfio/vfio\",\"hostPath\":"
                                  "\"/var/run/fakehw-dev/vfio/vfio\"}]"));
    assert_non_null(strstr(claim, "/usr/bin/nvidia-smi")); /* for gpu-0 */
    assert_string_equal(dev, "{\"env\":[\"FAKEHW_DEVICE_3_UUID=GPU-a0a0a0a3-1111-2222-3333-"
                             "444455556663\",\"FAKEHW_DEVICE_3_NAME=gpu-3\",\"FAKEHW_DEVICE_3_"
                             "REQUEST=extra/small\"],\"deviceNodes\":[{\"path\":\"/dev/vfio/3\","
                             "\"hostPath\":\"/var/run/fakehw-dev/vfio/3\"}]}");
    free(claim);
    free(dev);
    json_decref(spec);

    /* Only the VFIO device, without the API device: no smi, no claim node. */
    vfio.iommu_api_device = false;
    t.c.devices = &t.cd[1];
    t.c.n_devices = 1;
    spec = claim_spec(&t.c);
    claim = edits_text(spec, -1, NULL);
    assert_null(strstr(claim, "mounts"));
    assert_null(strstr(claim, "deviceNodes"));
    assert_non_null(strstr(claim, "\"NVIDIA_VISIBLE_DEVICES=void\""));
    free(claim);
    json_decref(spec);
    free_two(&t);
}

static void test_names_valid(void **state)
{
    (void)state;
    const char *drivers[] = {"gpu.fakehw.example.com", "gpu.nvidia.com"};
    for (size_t i = 0; i < 2; i++) {
        struct two t;
        struct error err;
        two_devices(&t, "");
        t.c.driver = drivers[i];
        /* The same device twice (two shares of it) gets distinct names. */
        t.cd[1].dev = &t.d[0];
        json_t *spec = claim_spec(&t.c);
        check_valid(spec);
        assert_string_equal(t.cd[0].cdi_name, UID1 "-gpu-0");
        assert_string_equal(t.cd[1].cdi_name, UID1 "-gpu-0_1");
        /* fakegpu-smi "" is not mounted. */
        assert_null(json_object_get(json_object_get(spec, "containerEdits"), "mounts"));
        json_decref(spec);
        json_t *md = cdi_metadata_spec(drivers[i], UID1, "gpus", "/h", "/c", &err);
        assert_non_null(md);
        check_valid(md);
        json_decref(md);
        free_two(&t);
    }
}

static void test_metadata_spec_exact(void **state)
{
    (void)state;
    struct error err;
    json_t *spec =
        cdi_metadata_spec(FIXTURE_DRIVER, UID1, "gpus", "/p/metadata.json", "/c/gpu.json", &err);
    assert_non_null(spec);
    char *text = json_dumps(spec, JSON_COMPACT);
    assert_string_equal(
        text, "{\"cdiVersion\":\"0.5.0\",\"kind\":\"gpu.fakehw.example.com/"
              "metadata\",\"devices\":[{\"name\":\"" UID1 "_gpus\","
              "\"containerEdits\":{\"mounts\":[" MOUNT("/p/metadata.json", "/c/gpu.json") "]}}]}");
    free(text);
    json_decref(spec);
}

static void test_metadata_file(void **state)
{
    struct fixture *f = *state;
    struct error err;
    char path[512];
    struct device_metadata_claim c = {FIXTURE_DRIVER, "default", "c1", UID1, NULL};
    assert_int_equal(device_metadata_container_path(&c, "gpus", path, sizeof(path), &err), 0);
    assert_string_equal(path, "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/c1/"
                              "gpus/gpu.fakehw.example.com-metadata.json");
    c.pod_claim_name = "my-gpu";
    assert_int_equal(device_metadata_container_path(&c, "gpus", path, sizeof(path), &err), 0);
    assert_string_equal(path, "/var/run/kubernetes.io/dra-device-attributes/"
                              "resourceclaimtemplates/my-gpu/gpus/"
                              "gpu.fakehw.example.com-metadata.json");

    json_t *devices = json_array();
    assert_int_equal(device_metadata_add_device(devices, FIXTURE_DRIVER, FIXTURE_NODE, "gpu-1",
                                                device_attributes_json(&f->devs[1], &err), &err),
                     0);
    char *text = device_metadata_stream(&c, "gpus/big", devices, &err);
    assert_non_null(text);
    /* A JSON stream: one object, then a newline. */
    assert_int_equal(text[strlen(text) - 1], '\n');
    json_error_t jerr;
    json_t *obj = json_loads(text, JSON_DISABLE_EOF_CHECK, &jerr);
    assert_non_null(obj);
    char *compact = json_dumps(obj, JSON_COMPACT);
    json_t *attrs_obj = device_attributes_json(&f->devs[1], &err);
    char *attrs = json_dumps(attrs_obj, JSON_COMPACT);
    json_decref(attrs_obj);
    char *want = NULL;
    assert_true(asprintf(&want,
                         "{\"apiVersion\":\"metadata.resource.k8s.io/v1alpha1\","
                         "\"kind\":\"DeviceMetadata\",\"metadata\":{\"name\":\"c1\","
                         "\"namespace\":\"default\",\"uid\":\"" UID1 "\",\"generation\":1},"
                         "\"podClaimName\":\"my-gpu\",\"requests\":[{\"name\":\"gpus/big\","
                         "\"devices\":[{\"driver\":\"" FIXTURE_DRIVER "\",\"pool\":\"" FIXTURE_NODE
                         "\",\"name\":\"gpu-1\",\"attributes\":%s}]}]}",
                         attrs) > 0);
    assert_string_equal(compact, want);
    free(want);
    free(attrs);
    free(compact);
    json_decref(obj);
    free(text);
    json_decref(devices);
}

TEST_MAIN_LIST("prepare CDI specs", cmocka_unit_test(test_claim_spec_exact),
               cmocka_unit_test(test_claim_spec_nvidia), cmocka_unit_test(test_claim_spec_vfio),
               cmocka_unit_test(test_names_valid), cmocka_unit_test(test_metadata_spec_exact),
               cmocka_unit_test_setup_teardown(test_metadata_file, fixture_setup, fixture_teardown))
