// SPDX-License-Identifier: Apache-2.0
/* Unit tests for fakehw-podresources' output: the JSON shape and the table
 * (padding, rows per device, claims without devices, pods left out). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/podresources/podresources_print.h"

static V1__CDIDevice cdi0 = {PROTOBUF_C_MESSAGE_INIT(&v1__cdidevice__descriptor), "k8s.d/gpu=a"};
static V1__CDIDevice cdi1 = {PROTOBUF_C_MESSAGE_INIT(&v1__cdidevice__descriptor), "d/meta=b"};
static V1__CDIDevice *cdis[] = {&cdi0, &cdi1};

static V1__ClaimResource res0 = {PROTOBUF_C_MESSAGE_INIT(&v1__claim_resource__descriptor),
                                 2,
                                 cdis,
                                 "d.example.com",
                                 "node-a",
                                 "gpu-0",
                                 ""};
static V1__ClaimResource res1 = {PROTOBUF_C_MESSAGE_INIT(&v1__claim_resource__descriptor),
                                 0,
                                 NULL,
                                 "d.example.com",
                                 "node-a",
                                 "gpu-12",
                                 "share-1"};
static V1__ClaimResource *resources[] = {&res0, &res1};

static V1__DynamicResource claim = {PROTOBUF_C_MESSAGE_INIT(&v1__dynamic_resource__descriptor),
                                    "c1", "ns", 2, resources};
static V1__DynamicResource empty = {PROTOBUF_C_MESSAGE_INIT(&v1__dynamic_resource__descriptor),
                                    "c2", "ns", 0, NULL};
static V1__DynamicResource *claims[] = {&claim, &empty};

static V1__ContainerResources with = {PROTOBUF_C_MESSAGE_INIT(&v1__container_resources__descriptor),
                                      "main",
                                      0,
                                      NULL,
                                      0,
                                      NULL,
                                      0,
                                      NULL,
                                      2,
                                      claims};
static V1__ContainerResources without = {
    PROTOBUF_C_MESSAGE_INIT(&v1__container_resources__descriptor),
    "side",
    0,
    NULL,
    0,
    NULL,
    0,
    NULL,
    0,
    NULL};
static V1__ContainerResources *ctrs[] = {&with, &without};
static V1__ContainerResources *plain_ctrs[] = {&without};

static V1__PodResources pod = {
    PROTOBUF_C_MESSAGE_INIT(&v1__pod_resources__descriptor), "p1", "ns", 2, ctrs, 0, NULL, 0, NULL};
static V1__PodResources plain = {PROTOBUF_C_MESSAGE_INIT(&v1__pod_resources__descriptor),
                                 "web",
                                 "ns2",
                                 1,
                                 plain_ctrs,
                                 0,
                                 NULL,
                                 0,
                                 NULL};

static char *render(V1__PodResources **pods, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(podres_print_text(f, pods, n), 0);
    fclose(f);
    return buf;
}

static void test_table(void **state)
{
    (void)state;
    V1__PodResources *pods[] = {&plain, &pod};
    char *text = render(pods, 2);
    assert_string_equal(
        text,
        "NAMESPACE  POD  CONTAINER  CLAIM  DRIVER         POOL    DEVICE  CDI-DEVICES\n"
        "ns         p1   main       c1     d.example.com  node-a  gpu-0   k8s.d/gpu=a,d/meta=b\n"
        "ns         p1   main       c1     d.example.com  node-a  gpu-12  -\n"
        "ns         p1   main       c2     -              -       -       -\n");
    free(text);
    V1__PodResources *none[] = {&plain};
    text = render(none, 1);
    assert_string_equal(text, "(no DRA devices)\n");
    free(text);
}

static void test_json(void **state)
{
    (void)state;
    V1__PodResources *pods[] = {&pod, &plain};
    json_t *doc = podres_json(pods, 2);
    assert_non_null(doc);
    char *got = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(
        got, "{\"pods\":[{\"containers\":[{\"claims\":[{\"devices\":[{\"cdiDevices\":[\"k8s.d/"
             "gpu=a\",\"d/meta=b\"],\"device\":\"gpu-0\",\"driver\":\"d.example.com\",\"pool\":"
             "\"node-a\"},{\"cdiDevices\":[],\"device\":\"gpu-12\",\"driver\":\"d.example.com\","
             "\"pool\":\"node-a\",\"shareID\":\"share-1\"}],\"name\":\"c1\",\"namespace\":\"ns\"},"
             "{\"devices\":[],\"name\":\"c2\",\"namespace\":\"ns\"}],\"name\":\"main\"}],\"name\":"
             "\"p1\",\"namespace\":\"ns\"}]}");
    free(got);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
