// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the binding-condition JSON: the published device fields,
 * reading what a claim reports, and setting a condition in status.devices
 * without touching anyone else's entries or conditions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "driver/bind/binding_conditions.h"
#include "common/tests/test_main.h"
#include "common/tests/test_json.h"

#define DRIVER "gpu.fakehw.example.com"

static void assert_json(const json_t *got, const char *want_text)
{
    json_t *want = test_json(want_text);
    if (!json_equal((json_t *)got, want)) {
        char *g = json_dumps(got, JSON_SORT_KEYS), *w = json_dumps(want, JSON_SORT_KEYS);
        fail_msg("got  %s\nwant %s", g, w);
    }
    json_decref(want);
}

static void test_names_and_device_fields(void **state)
{
    (void)state;
    struct binding_names n;
    binding_names_make(DRIVER, &n);
    assert_string_equal(n.attached, DRIVER "/attached");
    assert_string_equal(n.failed, DRIVER "/attach-failed");
    json_t *dev = test_json("{\"name\": \"gpu-1\"}");
    assert_int_equal(binding_device_add(dev, &n), 0);
    assert_json(dev, "{\"name\": \"gpu-1\", \"bindsToNode\": true,"
                     " \"bindingConditions\": [\"" DRIVER "/attached\"],"
                     " \"bindingFailureConditions\": [\"" DRIVER "/attach-failed\"]}");
    json_decref(dev);
}

static const char *claim_text =
    "{\"metadata\": {\"name\": \"c1\", \"namespace\": \"ns\", \"uid\": \"u1\", \"generation\": 3},"
    " \"status\": {\"allocation\": {\"allocationTimestamp\": \"2026-11-26T03:00:00Z\","
    "  \"devices\": {\"results\": ["
    "   {\"request\": \"gpu\", \"driver\": \"" DRIVER
    "\", \"pool\": \"node-a\", \"device\": \"gpu-1\","
    "    \"bindingConditions\": [\"" DRIVER "/attached\"],"
    "    \"bindingFailureConditions\": [\"" DRIVER "/attach-failed\"]},"
    "   {\"request\": \"gpu\", \"driver\": \"" DRIVER
    "\", \"pool\": \"node-a\", \"device\": \"gpu-0\"},"
    "   {\"request\": \"gpu\", \"driver\": \"" DRIVER
    "\", \"pool\": \"node-b\", \"device\": \"gpu-7\","
    "    \"bindingConditions\": [\"" DRIVER "/attached\"]},"
    "   {\"request\": \"nic\", \"driver\": \"nic.example.com\", \"pool\": \"node-a\", \"device\": "
    "\"eth0\"}"
    "  ]}},"
    "  \"devices\": ["
    "   {\"driver\": \"nic.example.com\", \"pool\": \"node-a\", \"device\": \"eth0\","
    "    \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]},"
    "   {\"driver\": \"" DRIVER "\", \"pool\": \"node-a\", \"device\": \"gpu-0\","
    "    \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\", \"reason\": "
    "\"DeviceHealthy\"}]}"
    "  ]}}";

struct seen {
    char text[256];
};

static void collect(void *ctx, const char *device, bool has)
{
    struct seen *s = ctx;
    size_t used = strlen(s->text);
    snprintf(s->text + used, sizeof(s->text) - used, "%s%s:%d", used ? " " : "", device, has);
}

static void test_results_of_driver_and_pool(void **state)
{
    (void)state;
    json_t *claim = test_json(claim_text);
    struct seen s = {""};
    binding_claim_results(claim, DRIVER, "node-a", collect, &s);
    assert_string_equal(s.text, "gpu-1:1 gpu-0:0");
    assert_string_equal(binding_allocation_time(claim), "2026-11-26T03:00:00Z");
    json_t *bare = test_json("{\"status\": {}}");
    assert_string_equal(binding_allocation_time(bare), "");
    s.text[0] = '\0';
    binding_claim_results(bare, DRIVER, "node-a", collect, &s);
    assert_string_equal(s.text, "");
    json_decref(bare);
    json_decref(claim);
}

static void test_set_and_read_back(void **state)
{
    (void)state;
    struct binding_names n;
    binding_names_make(DRIVER, &n);
    json_t *claim = test_json(claim_text);
    assert_int_equal(binding_claim_reported(claim, DRIVER, "node-a", "gpu-1", &n),
                     BINDING_REPORTED_NOTHING);

    /* A new entry for gpu-1; the others stay as they were, in order. */
    json_t *devices =
        binding_status_set(claim, DRIVER, "node-a", "gpu-1", n.attached, BINDING_REASON_ATTACHED,
                           "fakehw attached gpu-1", "2026-11-26T03:00:05Z");
    assert_non_null(devices);
    assert_json(
        devices,
        "[{\"driver\": \"nic.example.com\", \"pool\": \"node-a\", \"device\": \"eth0\","
        "  \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]},"
        " {\"driver\": \"" DRIVER "\", \"pool\": \"node-a\", \"device\": \"gpu-0\","
        "  \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\", \"reason\": "
        "\"DeviceHealthy\"}]},"
        " {\"driver\": \"" DRIVER "\", \"pool\": \"node-a\", \"device\": \"gpu-1\","
        "  \"conditions\": [{\"type\": \"" DRIVER "/attached\", \"status\": \"True\","
        "   \"reason\": \"Attached\", \"message\": \"fakehw attached gpu-1\","
        "   \"lastTransitionTime\": \"2026-11-26T03:00:05Z\", \"observedGeneration\": 3}]}]");
    json_object_set_new(json_object_get(claim, "status"), "devices", devices);
    assert_int_equal(binding_claim_reported(claim, DRIVER, "node-a", "gpu-1", &n),
                     BINDING_REPORTED_ATTACHED);
    assert_int_equal(binding_claim_reported(claim, DRIVER, "node-b", "gpu-1", &n),
                     BINDING_REPORTED_NOTHING);

    /* Setting it again keeps its transition time; a failure wins over it. */
    devices = binding_status_set(claim, DRIVER, "node-a", "gpu-1", n.attached,
                                 BINDING_REASON_ATTACHED, "again", "2026-11-26T04:00:00Z");
    json_t *entry = json_array_get(devices, 2);
    json_t *cond = json_array_get(json_object_get(entry, "conditions"), 0);
    assert_string_equal(json_string_value(json_object_get(cond, "lastTransitionTime")),
                        "2026-11-26T03:00:05Z");
    assert_int_equal(json_array_size(json_object_get(entry, "conditions")), 1);
    json_object_set_new(json_object_get(claim, "status"), "devices", devices);
    devices = binding_status_set(claim, DRIVER, "node-a", "gpu-1", n.failed, BINDING_REASON_FAILED,
                                 "fakehw could not attach gpu-1", "2026-11-26T04:00:00Z");
    json_object_set_new(json_object_get(claim, "status"), "devices", devices);
    assert_int_equal(binding_claim_reported(claim, DRIVER, "node-a", "gpu-1", &n),
                     BINDING_REPORTED_FAILED);
    entry = json_array_get(devices, 2);
    assert_int_equal(json_array_size(json_object_get(entry, "conditions")), 2);
    json_decref(claim);
}

static void test_false_conditions_report_nothing(void **state)
{
    (void)state;
    struct binding_names n;
    binding_names_make(DRIVER, &n);
    json_t *claim = test_json("{\"status\": {\"devices\": [{\"driver\": \"" DRIVER "\", \"pool\": "
                              "\"p\", \"device\": \"gpu-1\", \"conditions\": [{\"type\": \"" DRIVER
                              "/attached\", \"status\": \"False\"}, {\"type\": \"" DRIVER
                              "/attach-failed\", \"status\": \"Unknown\"}]}]}}");
    assert_int_equal(binding_claim_reported(claim, DRIVER, "p", "gpu-1", &n),
                     BINDING_REPORTED_NOTHING);
    json_decref(claim);
}

TEST_MAIN("driver/bind binding_conditions", test_names_and_device_fields,
          test_results_of_driver_and_pool, test_set_and_read_back,
          test_false_conditions_report_nothing)
