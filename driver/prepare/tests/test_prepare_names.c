// SPDX-License-Identifier: Apache-2.0
/* Unit tests: name and path validation, CDI name rules, spec file names,
 * claim checks and result selection, device attributes. */
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
#include "driver/prepare/claim_allocation.h"
#include "driver/prepare/claim_files.h"
#include "driver/device/device_attributes.h"
#include "driver/prepare/k8s_names.h"
#include "prepare_fixture.h"
#include "common/tests/check_valid.h"
#include "common/tests/test_main.h"

static void test_uid_rules(void **state)
{
    (void)state;
    struct error err;
    assert_true(k8s_is_uid(UID1));
    assert_false(k8s_is_uid("../../etc"));
    assert_false(k8s_is_uid("0E0D5E3C-8A53-4A4E-9B5D-1F0C1C2F7A10"));  /* uppercase */
    assert_false(k8s_is_uid("0e0d5e3c-8a53-4a4e-9b5d-1f0c1c2f7a10a")); /* 37 chars */
    assert_false(k8s_is_uid("0e0d5e3c8a53-4a4e-9b5d-1f0c1c2f7a10-"));  /* dash misplaced */
    assert_false(k8s_is_uid("0e0d5e3c-8a53-4a4e-9b5d-1f0c1c2f7a1/"));
    assert_false(k8s_is_uid(""));
    assert_false(k8s_is_uid(NULL));
    assert_int_equal(k8s_check_uid("uid", "../../etc", &err), -1);
    assert_string_equal(err.msg, "uid \"../../etc\": not a UID (want 36 characters: 8-4-4-4-12 "
                                 "lowercase hex digits)");
}

static void test_dns_rules(void **state)
{
    (void)state;
    char long_label[70], long_name[260];
    memset(long_label, 'a', 64);
    long_label[64] = '\0';
    memset(long_name, 'a', 254);
    for (int i = 60; i < 254; i += 61)
        long_name[i] = '.';
    long_name[254] = '\0';
    CHECK_VALID(k8s_is_dns_label, OK("default", "a-1"), BAD("Default", "-a", "a-", "..", "a.b"));
    assert_false(k8s_is_dns_label(long_label));
    long_label[63] = '\0';
    assert_true(k8s_is_dns_label(long_label));
    CHECK_VALID(k8s_is_dns_subdomain, OK("gpu.fakehw.example.com"),
                BAD("a..b", "../etc", "a/b", "Claim"));
    assert_false(k8s_is_dns_subdomain(long_name));
    long_name[253] = '\0';
    assert_true(k8s_is_dns_subdomain(long_name));

    struct error err;
    assert_int_equal(k8s_check_claim_ref("default", "c1", UID1, &err), 0);
    assert_int_equal(k8s_check_claim_ref("Default", "c1", UID1, &err), -1);
    assert_non_null(strstr(err.msg, "namespace \"Default\": not a DNS label"));
    assert_int_equal(k8s_check_claim_ref("default", "../../etc", UID1, &err), -1);
    assert_non_null(strstr(err.msg, "name \"../../etc\": not a DNS subdomain"));
    memset(long_name, 'a', 254);
    long_name[254] = '\0';
    assert_int_equal(k8s_check_claim_ref("default", long_name, UID1, &err), -1);
    assert_non_null(strstr(err.msg, "longer than 253 characters"));
}

static void test_cdi_rules(void **state)
{
    (void)state;
    struct error err;
    char kind[CDI_NAME_MAX];
    assert_int_equal(cdi_claim_kind("gpu.fakehw.example.com", kind, sizeof(kind), &err), 0);
    assert_string_equal(kind, "k8s.gpu.fakehw.example.com/gpu");
    assert_int_equal(cdi_claim_kind("gpu.nvidia.com", kind, sizeof(kind), &err), 0);
    assert_string_equal(kind, "k8s.gpu.nvidia.com/gpu");
    assert_int_equal(cdi_metadata_kind("gpu.nvidia.com", kind, sizeof(kind), &err), 0);
    assert_string_equal(kind, "gpu.nvidia.com/metadata");
    /* A DNS name may start with a digit; a CDI vendor may not. */
    assert_int_equal(cdi_metadata_kind("1gpu.example.com", kind, sizeof(kind), &err), -1);
    assert_non_null(strstr(err.msg, "vendor \"1gpu.example.com\" must start with a letter"));
    assert_int_equal(cdi_claim_kind("1gpu.example.com", kind, sizeof(kind), &err), 0);
    assert_int_equal(cdi_check_kind("vendor.com/cl.ass", &err), -1);
    assert_non_null(strstr(err.msg, "class \"cl.ass\""));
    assert_int_equal(cdi_check_kind("vendor.com", &err), -1);
    assert_int_equal(cdi_check_kind("vendor.com-/gpu", &err), -1);

    assert_true(cdi_is_device_name(UID1 "-gpu-0"));
    assert_true(cdi_is_device_name(UID1 "-gpu-0_1"));
    assert_true(cdi_is_device_name(UID1 "_gpu"));
    assert_true(cdi_is_device_name("a:b.c"));
    assert_false(cdi_is_device_name("-gpu"));
    assert_false(cdi_is_device_name("gpu-"));
    assert_false(cdi_is_device_name("gpu/0"));
    assert_false(cdi_is_device_name("gpu=0"));
    assert_false(cdi_is_device_name(""));
    assert_true(cdi_is_vendor("k8s.gpu.nvidia.com"));
    assert_false(cdi_is_class("metadata.x"));
}

static void test_spec_file_names(void **state)
{
    (void)state;
    struct error err;
    char name[256], uid[K8S_UID_LEN + 1], req[K8S_DNS_LABEL_MAX + 1];
    assert_int_equal(claim_spec_name(FIXTURE_DRIVER, UID1, name, sizeof(name), &err), 0);
    assert_string_equal(name, "k8s.gpu.fakehw.example.com-gpu_" UID1 ".json");
    assert_int_equal(claim_file_kind(FIXTURE_DRIVER, name, uid, req), CLAIM_FILE_CLAIM_SPEC);
    assert_string_equal(uid, UID1);
    assert_int_equal(
        claim_metadata_spec_name(FIXTURE_DRIVER, UID1, "gpus", name, sizeof(name), &err), 0);
    assert_string_equal(name, "gpu.fakehw.example.com_metadata_" UID1 "_gpus.json");
    assert_int_equal(claim_file_kind(FIXTURE_DRIVER, name, uid, req), CLAIM_FILE_METADATA_SPEC);
    assert_string_equal(req, "gpus");
    assert_true(claim_owns_spec(FIXTURE_DRIVER, UID1, name));
    assert_false(claim_owns_spec(FIXTURE_DRIVER, UID2, name));
    /* Another driver's names, and look-alikes, are not ours. */
    assert_int_equal(
        claim_file_kind(FIXTURE_DRIVER, "k8s.gpu.nvidia.com-gpu_" UID1 ".json", uid, req),
        CLAIM_FILE_OTHER);
    assert_int_equal(
        claim_file_kind("gpu.nvidia.com", "k8s.gpu.nvidia.com.x-gpu_" UID1 ".json", uid, req),
        CLAIM_FILE_OTHER);
    assert_int_equal(claim_file_kind(FIXTURE_DRIVER,
                                     "k8s.gpu.fakehw.example.com-gpu_" UID1 ".json.bak", uid, req),
                     CLAIM_FILE_OTHER);
    assert_int_equal(claim_file_kind(FIXTURE_DRIVER,
                                     "gpu.fakehw.example.com_metadata_" UID1 "_../x.json", uid,
                                     req),
                     CLAIM_FILE_OTHER);
    assert_int_equal(
        claim_file_kind(FIXTURE_DRIVER, "k8s.gpu.fakehw.example.com-gpu_../../etc.json", uid, req),
        CLAIM_FILE_OTHER);
}

/* A claim and what claim_allocation_parse made of it (borrowing from it). */
struct parsed {
    json_t *claim;
    struct claim_allocation a;
};

static int parse(struct parsed *p, const char *results, const char *annotations, struct error *err)
{
    p->claim = fixture_claim("default", "c1", UID1, results, NULL, annotations);
    return claim_allocation_parse(p->claim, UID1, FIXTURE_DRIVER, FIXTURE_NODE, &p->a, err);
}

static void free_parse(struct parsed *p)
{
    claim_allocation_free(&p->a);
    json_decref(p->claim);
}

static void test_result_selection(void **state)
{
    (void)state;
    struct error err;
    struct parsed p;
    const struct claim_allocation *a = &p.a;
    assert_int_equal(
        parse(
            &p,
            "[" RESULT(
                "gpus",
                "gpu-1") ","
                         "{\"request\":\"gpus\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"node-1\","
                         "\"device\":\"gpu-0\"},"
                         "{\"request\":\"alt/big\",\"driver\":\"" FIXTURE_DRIVER
                         "\",\"pool\":\"" FIXTURE_NODE "\",\"device\":\"gpu-2\",\"shareID\":\"" UID3
                         "\"}]",
            "{\"resource.kubernetes.io/pod-claim-name\":\"my-gpu\"}", &err),
        0);
    assert_int_equal(a->n_results, 2);
    assert_string_equal(a->results[0].request, "gpus");
    assert_string_equal(a->results[0].base_request, "gpus");
    assert_string_equal(a->results[0].device, "gpu-1");
    assert_null(a->results[0].share_id);
    assert_string_equal(a->results[1].request, "alt/big");
    assert_string_equal(a->results[1].base_request, "alt");
    assert_string_equal(a->results[1].share_id, UID3);
    assert_string_equal(a->pod_claim_name, "my-gpu");
    free_parse(&p);

    assert_int_equal(parse(&p,
                           "[{\"request\":\"gpus\",\"driver\":\"" FIXTURE_DRIVER
                           "\",\"pool\":\"node-2\",\"device\":\"gpu-0\"}]",
                           NULL, &err),
                     -1);
    assert_string_equal(err.msg, "allocation result 0 (device gpu-0): pool \"node-2\" is not this "
                                 "node's pool \"node-1\"");
    free_parse(&p);
    assert_int_equal(parse(&p, "[" RESULT("gpus", "../gpu-0") "]", NULL, &err), -1);
    assert_non_null(strstr(err.msg, "allocation result 0: device \"../gpu-0\""));
    free_parse(&p);
    assert_int_equal(parse(&p, "[" RESULT("Gpus/x", "gpu-0") "]", NULL, &err), -1);
    assert_non_null(strstr(err.msg, "request \"Gpus/x\" is not a request name"));
    free_parse(&p);
    assert_int_equal(parse(&p, "[" RESULT("gpus", "gpu-0") "]",
                           "{\"resource.kubernetes.io/pod-claim-name\":\"../x\"}", &err),
                     -1);
    assert_non_null(strstr(err.msg, "pod-claim-name \"../x\""));
    free_parse(&p);
}

static void test_claim_checks(void **state)
{
    (void)state;
    struct error err;
    struct claim_allocation a;
    json_t *claim = fixture_claim("default", "c1", UID2, "[]", NULL, NULL);
    assert_int_equal(claim_allocation_parse(claim, UID1, FIXTURE_DRIVER, FIXTURE_NODE, &a, &err),
                     -1);
    assert_string_equal(err.msg, "got replaced: the API server has it with uid " UID2);
    json_decref(claim);
    claim = json_pack("{s:{s:s, s:s, s:s}, s:{}}", "metadata", "name", "c1", "namespace", "default",
                      "uid", UID1, "status");
    assert_int_equal(claim_allocation_parse(claim, UID1, FIXTURE_DRIVER, FIXTURE_NODE, &a, &err),
                     -1);
    assert_string_equal(err.msg, "not allocated");
    json_decref(claim);
}

static void test_device_attributes(void **state)
{
    struct fixture *f = *state;
    struct error err;
    json_t *a = device_attributes_json(&f->devs[1], &err);
    assert_non_null(a);
    char *text = json_dumps(a, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(
        text, "{\"architecture\":{\"string\":\"Ampere\"},\"brand\":{\"string\":\"Nvidia\"},"
              "\"cudaComputeCapability\":{\"version\":\"8.0.0\"},"
              "\"cudaDriverVersion\":{\"version\":\"12.4.0\"},"
              "\"driverVersion\":{\"version\":\"550.127.5\"},\"index\":{\"int\":1},"
              "\"numaNode\":{\"int\":0},\"productName\":{\"string\":\"NVIDIA A100-SXM4-80GB\"},"
              "\"resource.kubernetes.io/numaNode\":{\"int\":0},"
              "\"resource.kubernetes.io/pciBusID\":{\"string\":\"0000:19:00.0\"},"
              "\"resource.kubernetes.io/pcieRoot\":{\"string\":\"pci0000:18\"},"
              "\"type\":{\"string\":\"gpu\"},"
              "\"uuid\":{\"string\":\"GPU-a0a0a0a1-1111-2222-3333-444455556661\"}}");
    free(text);
    json_decref(a);

    struct fakehw_device d = f->devs[0];
    d.architecture[0] = d.compute_capability[0] = d.pcie_root[0] = '\0';
    d.numa_node = -1;
    a = device_attributes_json(&d, &err);
    assert_non_null(a);
    assert_null(json_object_get(a, "architecture"));
    assert_null(json_object_get(a, "cudaComputeCapability"));
    assert_null(json_object_get(a, "numaNode"));
    assert_null(json_object_get(a, "resource.kubernetes.io/numaNode"));
    assert_null(json_object_get(a, "resource.kubernetes.io/pcieRoot"));
    json_decref(a);

    snprintf(d.driver_version, sizeof(d.driver_version), "550.127.05.1");
    assert_null(device_attributes_json(&d, &err));
    assert_string_equal(err.msg, "device gpu-0: attribute driverVersion: \"550.127.05.1\" is not "
                                 "a version (want 1 to 3 dot-separated numbers)");
    snprintf(d.driver_version, sizeof(d.driver_version), "550");
    memset(d.product_name, 'x', 65);
    d.product_name[65] = '\0';
    assert_null(device_attributes_json(&d, &err));
    assert_non_null(strstr(err.msg, "attribute productName"));
    assert_non_null(strstr(err.msg, "longer than 64 characters"));

    char v[80];
    assert_int_equal(device_attributes_semver("9", v, sizeof(v), &err), 0);
    assert_string_equal(v, "9.0.0");
    assert_int_equal(device_attributes_semver("007.00.10", v, sizeof(v), &err), 0);
    assert_string_equal(v, "7.0.10");
    assert_int_equal(device_attributes_semver("1.", v, sizeof(v), &err), -1);
    assert_int_equal(device_attributes_semver("1.a", v, sizeof(v), &err), -1);
    assert_int_equal(device_attributes_semver("", v, sizeof(v), &err), -1);
}

TEST_MAIN_LIST("prepare names", cmocka_unit_test(test_uid_rules), cmocka_unit_test(test_dns_rules),
               cmocka_unit_test(test_cdi_rules), cmocka_unit_test(test_spec_file_names),
               cmocka_unit_test(test_result_selection), cmocka_unit_test(test_claim_checks),
               cmocka_unit_test_setup_teardown(test_device_attributes, fixture_setup,
                                               fixture_teardown))
