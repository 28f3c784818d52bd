// SPDX-License-Identifier: Apache-2.0
/* Unit tests for driver/health: health classification, taint values and
 * taints, health diffs, and the claim status.devices JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/claims/claim_json.h"
#include "driver/health/claim_status_json.h"
#include "driver/health/device_health.h"
#include "common/tests/check_valid.h"
#include "common/tests/test_main.h"
#include "common/tests/test_json.h"

#define DRIVER "gpu.fakehw.example.com"
#define POOL   "node-1"

static struct fakehw_device gpu(int i, bool healthy, const char *reason)
{
    struct fakehw_device d;
    memset(&d, 0, sizeof(d));
    snprintf(d.name, sizeof(d.name), "gpu-%d", i);
    d.index = i;
    snprintf(d.uuid, sizeof(d.uuid), "GPU-%08d-0000-0000-0000-000000000000", i);
    snprintf(d.product_name, sizeof(d.product_name), "NVIDIA A100-SXM4-40GB");
    d.memory_bytes = 40ULL << 30;
    d.healthy = healthy;
    snprintf(d.health_reason, sizeof(d.health_reason), "%s", reason ? reason : "");
    return d;
}

static void test_parse_effect_and_policy(void **state)
{
    (void)state;
    enum taint_effect e;
    enum unhealthy_policy p;
    struct error err;
    assert_int_equal(taint_effect_parse("NoExecute", &e, &err), 0);
    assert_int_equal(e, TAINT_EFFECT_NO_EXECUTE);
    assert_int_equal(taint_effect_parse("None", &e, &err), 0);
    assert_string_equal(taint_effect_name(e), "None");
    assert_int_equal(taint_effect_parse("PreferNoSchedule", &e, &err), -1);
    assert_string_equal(err.msg,
                        "taint effect \"PreferNoSchedule\" is not one of NoSchedule, NoExecute, "
                        "None");
    assert_int_equal(unhealthy_policy_parse("remove", &p, &err), 0);
    assert_int_equal(p, UNHEALTHY_POLICY_REMOVE);
    assert_int_equal(unhealthy_policy_parse("Taint", &p, &err), -1);
    assert_string_equal(err.msg,
                        "unhealthy device policy \"Taint\" is not one of taint, remove, auto");
}

static void check_value(const char *reason, const char *want)
{
    char buf[LABEL_VALUE_MAX + 1];
    health_taint_value(reason, buf, sizeof(buf));
    assert_string_equal(buf, want);
    assert_true(label_value_valid(buf));
}

static void test_taint_value_sanitizing(void **state)
{
    (void)state;
    check_value("XID 79: GPU has fallen off the bus", "XID-79");
    check_value("xid=48 double bit ECC", "XID-48");
    check_value("NVRM: Xid (PCI:0000:18:00): 31, pid=1", "NVRM-Xid-PCI-0000-18-00-31-pid-1");
    check_value("ECC double-bit error", "ECC-double-bit-error");
    check_value("maxid 5", "maxid-5");
    check_value("", "unhealthy");
    check_value(NULL, "unhealthy");
    check_value("::: /// ...", "unhealthy");
    check_value("--abc--", "abc");
    check_value("  thermal/slowdown. ", "thermal-slowdown");
    char longer[300];
    memset(longer, 'a', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    longer[62] = ' '; /* the cut lands after a separator: trimmed */
    char buf[LABEL_VALUE_MAX + 1];
    health_taint_value(longer, buf, sizeof(buf));
    assert_int_equal(strlen(buf), 62);
    assert_true(label_value_valid(buf));
}

static void test_label_value_and_reason_rules(void **state)
{
    (void)state;
    CHECK_VALID(label_value_valid, OK("", "XID-79"), BAD("-x", "x-", "a b"));
    char s64[65];
    memset(s64, 'a', 64);
    s64[64] = '\0';
    assert_false(label_value_valid(s64));
    s64[63] = '\0';
    assert_true(label_value_valid(s64));
    CHECK_VALID(condition_reason_valid, OK("XID79", "A_b,c:d"),
                BAD("79XID", "", "Device Unhealthy"));
}

static void test_classify(void **state)
{
    (void)state;
    struct device_health h;
    struct fakehw_device ok = gpu(0, true, NULL);
    device_health_classify(&ok, true, NULL, &h);
    assert_true(h.healthy);
    assert_string_equal(h.taint_value, "");
    assert_string_equal(h.reason, "DeviceHealthy");
    assert_true(condition_reason_valid(h.reason));

    struct fakehw_device bad = gpu(1, false, "XID 79: GPU has fallen off the bus");
    device_health_classify(&bad, true, NULL, &h);
    assert_false(h.healthy);
    assert_string_equal(h.taint_value, "XID-79");
    assert_string_equal(h.reason, "XID79");
    assert_string_equal(h.message, "XID 79: GPU has fallen off the bus");

    struct fakehw_device quiet = gpu(2, false, "");
    device_health_classify(&quiet, true, NULL, &h);
    assert_string_equal(h.taint_value, "unhealthy");
    assert_string_equal(h.reason, "DeviceUnhealthy");
    assert_string_equal(h.message, "gpu-2 is unhealthy (no reason given)");

    /* Tree gone: unhealthy whatever the device said. */
    device_health_classify(&ok, false, NULL, &h);
    assert_false(h.healthy);
    assert_string_equal(h.taint_value, "fakehw-unavailable");
    assert_string_equal(h.reason, "FakehwUnavailable");

    device_health_removed("gpu-9", &h);
    assert_false(h.healthy);
    assert_string_equal(h.reason, "DeviceRemoved");
    assert_string_equal(h.message, "gpu-9 is no longer in the fakehw inventory");
}

static void test_taint_json(void **state)
{
    (void)state;
    struct device_health h;
    struct fakehw_device bad = gpu(1, false, "XID 79");
    device_health_classify(&bad, true, NULL, &h);
    json_t *t = device_health_taints_json(DRIVER, &h, TAINT_EFFECT_NO_EXECUTE);
    char *s = json_dumps(t, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(s, "[{\"effect\":\"NoExecute\",\"key\":\"gpu.fakehw.example.com/"
                           "unhealthy\",\"value\":\"XID-79\"}]");
    free(s);
    json_decref(t);
    struct fakehw_device ok = gpu(0, true, NULL);
    device_health_classify(&ok, true, NULL, &h);
    assert_false(device_health_tainted(&h));
    assert_null(device_health_taints_json(DRIVER, &h, TAINT_EFFECT_NO_SCHEDULE));
}

/* XIDs, table-driven: what each personality makes of a device's XID
 * (device_health.h), with NVIDIA's default ignored XIDs or an additional
 * list ("48": XID 48 becomes an application error). */
static void test_classify_xids(void **state)
{
    (void)state;
    const struct {
        enum personality personality;
        const char *additional; /* NULL: the default policy (a NULL xids) */
        bool healthy;           /* the device's health state */
        const char *reason;     /* its healthReason */
        long xid;
        /* what the classification says */
        bool want_healthy;
        const char *want_taint_value; /* of <driver>/unhealthy */
        long want_xid_taint;
        bool want_xid_ignored;
        const char *want_reason, *want_message;
        const char *want_taints; /* device_health_taints_json with NoSchedule, or NULL */
    } rows[] = {
        /* nvidia: NVIDIA's taint <driver>/xid=<code>, NoSchedule when fatal. */
        {PERSONALITY_NVIDIA, NULL, true, "", 79, false, "", 79, false, "XID79",
         "gpu-0 reported XID 79, a fatal XID (not one of the ignored XIDs)",
         "[{\"effect\":\"NoSchedule\",\"key\":\"" DRIVER "/xid\",\"value\":\"79\"}]"},
        /* nvidia: an ignored XID taints with effect None and stays healthy. */
        {PERSONALITY_NVIDIA, NULL, true, "", 43, true, "", 43, true, "DeviceHealthy",
         "gpu-0 is healthy: XID 43 (GPU stopped processing) is an application error, ignored",
         "[{\"effect\":\"None\",\"key\":\"" DRIVER "/xid\",\"value\":\"43\"}]"},
        {PERSONALITY_NVIDIA, NULL, true, "", 13, true, "", 13, true, "DeviceHealthy",
         "gpu-0 is healthy: XID 13 (Graphics Engine Exception) is an application error, ignored",
         "[{\"effect\":\"None\",\"key\":\"" DRIVER "/xid\",\"value\":\"13\"}]"},
        {PERSONALITY_NVIDIA, NULL, true, "", 109, true, "", 109, true, "DeviceHealthy",
         "gpu-0 is healthy: XID 109 (Context Switch Timeout Error) is an application error, "
         "ignored",
         "[{\"effect\":\"None\",\"key\":\"" DRIVER "/xid\",\"value\":\"109\"}]"},
        /* The additional list: 48 ignored, 79 still fatal. */
        {PERSONALITY_NVIDIA, " 48, 63,,", true, "", 48, true, "", 48, true, "DeviceHealthy",
         "gpu-0 is healthy: XID 48 is an application error, ignored",
         "[{\"effect\":\"None\",\"key\":\"" DRIVER "/xid\",\"value\":\"48\"}]"},
        {PERSONALITY_NVIDIA, "48", true, "", 79, false, "", 79, false, "XID79",
         "gpu-0 reported XID 79, a fatal XID (not one of the ignored XIDs)",
         "[{\"effect\":\"NoSchedule\",\"key\":\"" DRIVER "/xid\",\"value\":\"79\"}]"},
        /* Unhealthy by a flip and an XID: both taints, the flip's reason. */
        {PERSONALITY_NVIDIA, NULL, false, "ECC", 31, false, "ECC", 31, true, "DeviceUnhealthy",
         "ECC",
         "[{\"effect\":\"NoSchedule\",\"key\":\"" DRIVER "/unhealthy\",\"value\":\"ECC\"},"
         "{\"effect\":\"None\",\"key\":\"" DRIVER "/xid\",\"value\":\"31\"}]"},
        /* No XID: nothing of it. */
        {PERSONALITY_NVIDIA, NULL, true, "", 0, true, "", 0, false, "DeviceHealthy",
         "gpu-0 is healthy", NULL},
        /* fakehw: a fatal XID is its unhealthy taint, an ignored one nothing. */
        {PERSONALITY_FAKEHW, NULL, true, "", 79, false, "XID-79", 0, false, "XID79",
         "gpu-0 reported XID 79, a fatal XID (not one of the ignored XIDs)",
         "[{\"effect\":\"NoSchedule\",\"key\":\"" DRIVER "/unhealthy\",\"value\":\"XID-79\"}]"},
        {PERSONALITY_FAKEHW, NULL, true, "", 68, true, "", 0, true, "DeviceHealthy",
         "gpu-0 is healthy: XID 68 (Video processor exception) is an application error, ignored",
         NULL},
        {PERSONALITY_FAKEHW, "79", true, "", 79, true, "", 0, true, "DeviceHealthy",
         "gpu-0 is healthy: XID 79 is an application error, ignored", NULL},
        /* fakehw: an unhealthy flip keeps its own value. */
        {PERSONALITY_FAKEHW, NULL, false, "XID 48: DBE", 79, false, "XID-48", 0, false, "XID48",
         "XID 48: DBE",
         "[{\"effect\":\"NoSchedule\",\"key\":\"" DRIVER "/unhealthy\",\"value\":\"XID-48\"}]"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct xid_policy xids;
        struct error err;
        assert_int_equal(xid_policy_init(&xids, rows[i].additional, &err), 0);
        struct health_policy policy = {rows[i].personality, rows[i].additional ? &xids : NULL};
        struct fakehw_device d = gpu(0, rows[i].healthy, rows[i].reason);
        d.xid = rows[i].xid;
        struct device_health h;
        device_health_classify(&d, true, &policy, &h);
        print_message("row %zu: xid %ld\n", i, rows[i].xid);
        assert_int_equal(h.healthy, rows[i].want_healthy);
        assert_string_equal(h.taint_value, rows[i].want_taint_value);
        assert_int_equal(h.xid_taint, rows[i].want_xid_taint);
        assert_int_equal(h.xid_taint > 0 && h.xid_ignored,
                         rows[i].want_xid_taint > 0 && rows[i].want_xid_ignored);
        assert_string_equal(h.reason, rows[i].want_reason);
        assert_string_equal(h.message, rows[i].want_message);
        assert_true(condition_reason_valid(h.reason));
        json_t *t = device_health_taints_json(DRIVER, &h, TAINT_EFFECT_NO_SCHEDULE);
        if (rows[i].want_taints == NULL) {
            assert_null(t);
            assert_false(device_health_tainted(&h));
            continue;
        }
        char *js = json_dumps(t, JSON_SORT_KEYS | JSON_COMPACT);
        assert_string_equal(js, rows[i].want_taints);
        free(js);
        json_decref(t);
        /* The tree gone: no XID is published, whatever the device said. */
        device_health_classify(&d, false, &policy, &h);
        assert_string_equal(h.reason, "FakehwUnavailable");
        assert_int_equal(h.xid_taint, 0);
    }
}

struct names {
    char list[8][64];
    int n;
};

static void collect(void *ctx, const char *name)
{
    struct names *n = ctx;
    assert_true(n->n < 8);
    snprintf(n->list[n->n++], 64, "%s", name);
}

static bool has(const struct names *n, const char *name)
{
    for (int i = 0; i < n->n; i++) {
        if (strcmp(n->list[i], name) == 0)
            return true;
    }
    return false;
}

static void test_health_diff(void **state)
{
    (void)state;
    struct fakehw_device old[3] = {gpu(0, true, NULL), gpu(1, true, NULL), gpu(2, true, NULL)};
    struct fakehw_device cur[3] = {gpu(0, true, NULL), gpu(1, false, "XID 79"), gpu(3, true, NULL)};
    struct names n = {0};
    device_health_diff(old, 3, true, cur, 3, true, NULL, collect, &n);
    assert_int_equal(n.n, 3);
    assert_true(has(&n, "gpu-1")); /* flipped */
    assert_true(has(&n, "gpu-3")); /* added */
    assert_true(has(&n, "gpu-2")); /* removed */

    /* Same snapshot: nothing.  Tree going away: every device. */
    memset(&n, 0, sizeof(n));
    device_health_diff(old, 3, true, old, 3, true, NULL, collect, &n);
    assert_int_equal(n.n, 0);
    device_health_diff(old, 3, true, old, 3, false, NULL, collect, &n);
    assert_int_equal(n.n, 3);

    /* A changed reason is a change; identical unhealthy state is not. */
    struct fakehw_device a = gpu(1, false, "XID 79"), b = gpu(1, false, "XID 48");
    memset(&n, 0, sizeof(n));
    device_health_diff(&a, 1, true, &b, 1, true, NULL, collect, &n);
    assert_int_equal(n.n, 1);
    memset(&n, 0, sizeof(n));
    device_health_diff(&a, 1, true, &a, 1, true, NULL, collect, &n);
    assert_int_equal(n.n, 0);
}

/* An XID reported, changed or cleared is a health change in both
 * personalities: the health stream and claim status follow it. */
static void test_health_diff_xid(void **state)
{
    (void)state;
    const struct health_policy nvidia = {PERSONALITY_NVIDIA, NULL};
    struct fakehw_device a = gpu(0, true, NULL), b = gpu(0, true, NULL);
    struct names n;
    const long changes[][2] = {{0, 79}, {79, 48}, {43, 0}, {13, 31}};
    for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
        a.xid = changes[i][0];
        b.xid = changes[i][1];
        memset(&n, 0, sizeof(n));
        device_health_diff(&a, 1, true, &b, 1, true, &nvidia, collect, &n);
        assert_int_equal(n.n, 1);
        memset(&n, 0, sizeof(n));
        device_health_diff(&a, 1, true, &b, 1, true, NULL, collect, &n);
        assert_int_equal(n.n, 1);
    }
    b.xid = a.xid;
    memset(&n, 0, sizeof(n));
    device_health_diff(&a, 1, true, &b, 1, true, &nvidia, collect, &n);
    assert_int_equal(n.n, 0);
}

/* --- claim status JSON --- */

struct inv {
    struct fakehw_device devs[4];
    size_t n;
};

static const struct fakehw_device *find(void *ctx, const char *name)
{
    struct inv *inv = ctx;
    for (size_t i = 0; i < inv->n; i++) {
        if (strcmp(inv->devs[i].name, name) == 0)
            return &inv->devs[i];
    }
    return NULL;
}

static json_t *claim_json(const char *status_devices)
{
    char text[4096];
    snprintf(text, sizeof(text),
             "{\"metadata\": {\"name\": \"c1\", \"namespace\": \"default\", \"uid\": \"u1\","
             " \"resourceVersion\": \"42\", \"generation\": 3},"
             " \"status\": {\"allocation\": {\"devices\": {\"results\": ["
             "  {\"request\": \"gpu\", \"driver\": \"" DRIVER "\", \"pool\": \"" POOL "\","
             "   \"device\": \"gpu-0\"},"
             "  {\"request\": \"gpu2\", \"driver\": \"" DRIVER "\", \"pool\": \"" POOL "\","
             "   \"device\": \"gpu-0\"},"
             "  {\"request\": \"nic\", \"driver\": \"nic.example.com\", \"pool\": \"" POOL "\","
             "   \"device\": \"eth0\"},"
             "  {\"request\": \"gpu3\", \"driver\": \"" DRIVER "\", \"pool\": \"" POOL "\","
             "   \"device\": \"gpu-1\"}]}}%s%s}}",
             status_devices ? ", \"devices\": " : "", status_devices ? status_devices : "");
    return test_json(text);
}

static const json_t *entry_for(const json_t *devices, const char *driver, const char *device)
{
    size_t i;
    const json_t *e;
    json_array_foreach(devices, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "driver")), driver) == 0 &&
            strcmp(json_string_value(json_object_get(e, "device")), device) == 0)
            return e;
    }
    return NULL;
}

static const json_t *ready_of(const json_t *entry)
{
    const json_t *conds = json_object_get(entry, "conditions");
    size_t i;
    const json_t *c;
    json_array_foreach(conds, i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "type")), "Ready") == 0)
            return c;
    }
    return NULL;
}

static const char *sfield(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* The input of a status build over inv, the tree up, at 05:00. */
static struct claim_status_input input_for(struct inv *inv)
{
    return (struct claim_status_input){.driver = DRIVER,
                                       .pool = POOL,
                                       .find = find,
                                       .find_ctx = inv,
                                       .tree_up = true,
                                       .now = "2025-11-22T05:00:00Z"};
}

/* The status.devices of claim built from in, which must work. */
static json_t *built(json_t *claim, const struct claim_status_input *in)
{
    json_t *devs = NULL;
    struct error err;
    if (claim_status_devices_build(claim, in, &devs, &err) != 0)
        fail_msg("claim_status_devices_build: %s", err.msg);
    return devs;
}

static void test_claim_status_fresh(void **state)
{
    (void)state;
    struct inv inv = {{gpu(0, true, NULL), gpu(1, false, "XID 79: fell off the bus")}, 2};
    struct claim_status_input in = input_for(&inv);
    json_t *claim = claim_json("[{\"driver\": \"nic.example.com\", \"pool\": \"" POOL
                               "\", \"device\": \"eth0\","
                               "  \"networkData\": {\"interfaceName\": \"eth0\"}}]");
    json_t *devs = built(claim, &in);
    /* The NIC driver's entry first and untouched, then gpu-0 once (two
     * requests got it), then gpu-1. */
    assert_int_equal(json_array_size(devs), 3);
    assert_true(json_equal(
        json_array_get(devs, 0),
        json_array_get(json_object_get(json_object_get(claim, "status"), "devices"), 0)));
    const json_t *e0 = entry_for(devs, DRIVER, "gpu-0");
    assert_ptr_equal(e0, json_array_get(devs, 1));
    const json_t *r0 = ready_of(e0);
    assert_string_equal(sfield(r0, "status"), "True");
    assert_string_equal(sfield(r0, "reason"), "DeviceHealthy");
    assert_string_equal(sfield(r0, "lastTransitionTime"), "2025-11-22T05:00:00Z");
    assert_int_equal(json_integer_value(json_object_get(r0, "observedGeneration")), 3);
    const json_t *data = json_object_get(e0, "data");
    assert_string_equal(sfield(data, "uuid"), "GPU-00000000-0000-0000-0000-000000000000");
    assert_string_equal(sfield(data, "productName"), "NVIDIA A100-SXM4-40GB");
    assert_string_equal(sfield(data, "memory"), "40Gi");
    const json_t *r1 = ready_of(entry_for(devs, DRIVER, "gpu-1"));
    assert_string_equal(sfield(r1, "status"), "False");
    assert_string_equal(sfield(r1, "reason"), "XID79");
    assert_string_equal(sfield(r1, "message"), "XID 79: fell off the bus");
    assert_null(json_object_get(entry_for(devs, DRIVER, "gpu-1"), "shareID"));

    json_t *patch = claim_devices_patch(claim, devs);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(patch, "metadata"), "resourceVersion")),
        "42");
    assert_true(json_equal(json_object_get(json_object_get(patch, "status"), "devices"), devs));
    json_decref(patch);
    json_decref(devs);
    json_decref(claim);
}

/* A reason with bytes that are not UTF-8 (a hand-made tree): the claim
 * status still says the device is unhealthy, with the bytes cleaned the same
 * way as on the health stream (device_health_classify). */
static void test_claim_status_reason_not_utf8(void **state)
{
    (void)state;
    struct inv inv = {{gpu(0, true, NULL), gpu(1, false, "XID 79: \xff\xfe bus \xe2\x82")}, 2};
    struct device_health h;
    device_health_classify(&inv.devs[1], true, NULL, &h);
    assert_string_equal(h.message, "XID 79: ?? bus ??");
    struct claim_status_input in = input_for(&inv);
    json_t *claim = claim_json(NULL);
    json_t *devs = built(claim, &in);
    const json_t *r1 = ready_of(entry_for(devs, DRIVER, "gpu-1"));
    assert_string_equal(sfield(r1, "status"), "False");
    assert_string_equal(sfield(r1, "reason"), "XID79");
    assert_string_equal(sfield(r1, "message"), "XID 79: ?? bus ??");
    json_decref(devs);
    json_decref(claim);
}

static void test_claim_status_transitions(void **state)
{
    (void)state;
    struct inv inv = {{gpu(0, true, NULL), gpu(1, true, NULL)}, 2};
    struct claim_status_input in = input_for(&inv);
    json_t *claim = claim_json(NULL);
    json_t *first = built(claim, &in);
    /* An extra condition type in our entry survives rebuilds. */
    json_t *e1 = (json_t *)entry_for(first, DRIVER, "gpu-1");
    json_array_append_new(json_object_get(e1, "conditions"),
                          json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "Custom", "status", "True",
                                    "reason", "X", "message", "", "lastTransitionTime",
                                    "2025-01-01T00:00:00Z"));
    json_object_set(json_object_get(claim, "status"), "devices", first);

    /* Later, same health: lastTransitionTime kept, nothing changes. */
    in.now = "2025-11-22T06:00:00Z";
    json_t *second = built(claim, &in);
    assert_true(json_equal(first, second));

    /* gpu-1 flips: its Ready goes False with a new time, gpu-0 keeps its own. */
    inv.devs[1] = gpu(1, false, "ECC double-bit error");
    json_object_set(json_object_get(claim, "status"), "devices", second);
    in.now = "2025-11-22T07:00:00Z";
    json_t *third = built(claim, &in);
    const json_t *r0 = ready_of(entry_for(third, DRIVER, "gpu-0"));
    const json_t *r1 = ready_of(entry_for(third, DRIVER, "gpu-1"));
    assert_string_equal(sfield(r0, "lastTransitionTime"), "2025-11-22T05:00:00Z");
    assert_string_equal(sfield(r1, "status"), "False");
    assert_string_equal(sfield(r1, "reason"), "DeviceUnhealthy");
    assert_string_equal(sfield(r1, "lastTransitionTime"), "2025-11-22T07:00:00Z");
    assert_int_equal(
        json_array_size(json_object_get(entry_for(third, DRIVER, "gpu-1"), "conditions")), 2);

    /* Recovery: back to True, new time. */
    inv.devs[1] = gpu(1, true, NULL);
    json_object_set(json_object_get(claim, "status"), "devices", third);
    in.now = "2025-11-22T08:00:00Z";
    json_t *fourth = built(claim, &in);
    r1 = ready_of(entry_for(fourth, DRIVER, "gpu-1"));
    assert_string_equal(sfield(r1, "status"), "True");
    assert_string_equal(sfield(r1, "lastTransitionTime"), "2025-11-22T08:00:00Z");

    /* Removed from the inventory: False, DeviceRemoved, old data kept. */
    inv.n = 1;
    json_object_set(json_object_get(claim, "status"), "devices", fourth);
    json_t *fifth = built(claim, &in);
    const json_t *e = entry_for(fifth, DRIVER, "gpu-1");
    assert_string_equal(sfield(ready_of(e), "reason"), "DeviceRemoved");
    assert_string_equal(sfield(json_object_get(e, "data"), "memory"), "40Gi");

    /* Tree gone: everything unavailable. */
    inv.n = 2;
    in.tree_up = false;
    json_t *sixth = built(claim, &in);
    assert_string_equal(sfield(ready_of(entry_for(sixth, DRIVER, "gpu-0")), "reason"),
                        "FakehwUnavailable");

    json_decref(first);
    json_decref(second);
    json_decref(third);
    json_decref(fourth);
    json_decref(fifth);
    json_decref(sixth);
    json_decref(claim);
}

static void test_claim_status_drops_stale_and_errors(void **state)
{
    (void)state;
    struct inv inv = {{gpu(0, true, NULL), gpu(1, true, NULL)}, 2};
    /* An entry of ours for a device no longer allocated goes; one of another
     * pool of ours is not ours to manage and stays. */
    json_t *claim = claim_json("[{\"driver\": \"" DRIVER "\", \"pool\": \"" POOL "\", \"device\":"
                               " \"gpu-7\"}, {\"driver\": \"" DRIVER "\", \"pool\": \"node-2\","
                               " \"device\": \"gpu-0\"}]");
    struct claim_status_input in = input_for(&inv);
    json_t *devs = built(claim, &in);
    assert_null(entry_for(devs, DRIVER, "gpu-7"));
    assert_int_equal(json_array_size(devs), 3);
    assert_string_equal(sfield(json_array_get(devs, 0), "pool"), "node-2");
    json_decref(devs);
    json_decref(claim);

    json_t *unallocated =
        test_json("{\"metadata\": {\"name\": \"c2\", \"namespace\": \"ns\"}, \"status\": {}}");
    struct error err;
    assert_int_equal(claim_status_devices_build(unallocated, &in, &devs, &err), -1);
    assert_string_equal(err.msg, "claim ns/c2: not allocated");
    assert_false(claim_has_results(unallocated, DRIVER, POOL));
    json_decref(unallocated);

    json_t *bad = test_json("{\"metadata\": {\"name\": \"c3\", \"namespace\": \"ns\"},"
                            " \"status\": {\"allocation\": {\"devices\": {\"results\": ["
                            "{\"driver\": \"" DRIVER "\", \"pool\": \"" POOL "\"}]}}}}");
    assert_true(claim_has_results(bad, DRIVER, POOL));
    assert_int_equal(claim_status_devices_build(bad, &in, &devs, &err), -1);
    assert_string_equal(err.msg, "claim ns/c3: status.allocation.devices.results[0]: no device");
    json_decref(bad);

    char when[32];
    claim_format_time(0, when, sizeof(when));
    assert_string_equal(when, "1970-01-01T00:00:00Z");
}

static void test_share_id_keys(void **state)
{
    (void)state;
    struct inv inv = {{gpu(0, true, NULL)}, 1};
    struct claim_status_input in = input_for(&inv);
    json_t *claim = json_loads(
        "{\"metadata\": {\"name\": \"c\", \"namespace\": \"ns\"}, \"status\": {\"allocation\":"
        " {\"devices\": {\"results\": [{\"driver\": \"" DRIVER "\", \"pool\": \"" POOL "\","
        " \"device\": \"gpu-0\", \"shareID\": \"11111111-1111-1111-1111-111111111111\"},"
        " {\"driver\": \"" DRIVER "\", \"pool\": \"" POOL "\", \"device\": \"gpu-0\","
        " \"shareID\": \"22222222-2222-2222-2222-222222222222\"}]}}}}",
        0, NULL);
    json_t *devs = built(claim, &in);
    assert_int_equal(json_array_size(devs), 2);
    assert_string_equal(sfield(json_array_get(devs, 1), "shareID"),
                        "22222222-2222-2222-2222-222222222222");
    json_decref(devs);
    json_decref(claim);
}

TEST_MAIN("driver/health", test_parse_effect_and_policy, test_taint_value_sanitizing,
          test_label_value_and_reason_rules, test_classify, test_taint_json, test_classify_xids,
          test_health_diff, test_health_diff_xid, test_claim_status_fresh,
          test_claim_status_reason_not_utf8, test_claim_status_transitions,
          test_claim_status_drops_stale_and_errors, test_share_id_keys)
