// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the typed claim record (driver/prepare/claim_record.h):
 * the conversion to and from the checkpoint's RECORD is lossless and checked,
 * and the set keyed by uid replaces, finds and removes records and writes
 * only the completed ones into a snapshot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "driver/prepare/checkpoint.h"
#include "driver/prepare/claim_record.h"
#include "prepare_fixture.h"
#include "common/tests/test_main.h"
#include "common/tests/test_json.h"

#define SPEC(uid) "k8s." FIXTURE_DRIVER "-gpu_" uid ".json"
#define META(uid) FIXTURE_DRIVER "_metadata_" uid "_gpus.json"
/* A record with every field: two devices, a shareID, metadata. */
#define FULL(uid)                                                                                  \
    "{\"uid\":\"" uid "\",\"namespace\":\"default\",\"name\":\"c1\","                              \
    "\"state\":\"PrepareCompleted\",\"devices\":["                                                 \
    "{\"requestNames\":[\"gpus\"],\"poolName\":\"node-1\",\"deviceName\":\"gpu-0\","               \
    "\"cdiDeviceIDs\":[\"k8s." FIXTURE_DRIVER "/gpu=" uid "-gpu-0\",\"" FIXTURE_DRIVER             \
    "/metadata=" uid "_gpus\"],\"shareID\":\"s-1\"},"                                              \
    "{\"requestNames\":[\"gpus\"],\"poolName\":\"node-1\",\"deviceName\":\"gpu-1\","               \
    "\"cdiDeviceIDs\":[\"k8s." FIXTURE_DRIVER "/gpu=" uid "-gpu-1\"]}],"                           \
    "\"cdiSpecs\":[\"" META(uid) "\",\"" SPEC(uid) "\"],\"metadataDir\":\"default_c1\"}"

static struct claim_record *from(const char *uid, const char *text)
{
    struct error err;
    json_t *j = test_json(text);
    struct claim_record *r = NULL;
    if (claim_record_from_json(uid, j, &r, &err) < 0)
        fail_msg("claim_record_from_json: %s", err.msg);
    json_decref(j);
    return r;
}

static void test_round_trip(void **state)
{
    (void)state;
    struct error err;
    json_t *want = test_json(FULL(UID1));
    assert_int_equal(checkpoint_check_record(FIXTURE_DRIVER, UID1, want, &err), 0);
    struct claim_record *r = from(UID1, FULL(UID1));
    assert_string_equal(r->ns, "default");
    assert_string_equal(r->name, "c1");
    assert_int_equal(r->state, CLAIM_PREPARE_COMPLETED);
    assert_int_equal(r->devices.n_devices, 2);
    assert_string_equal(r->devices.devices[0].share_id, "s-1");
    assert_null(r->devices.devices[1].share_id);
    assert_int_equal(r->n_cdi_specs, 2);
    assert_string_equal(r->metadata_dir, "default_c1");
    assert_true(claim_record_lists_spec(r, SPEC(UID1)));
    assert_false(claim_record_lists_spec(r, SPEC(UID2)));
    assert_false(claim_record_lists_spec(NULL, SPEC(UID1)));
    assert_true(claim_record_names(r, "default", "c1"));
    assert_false(claim_record_names(r, "default", "c2"));
    json_t *back = claim_record_to_json(r);
    assert_true(json_equal(back, want));
    json_decref(back);
    /* No metadata: no metadataDir field at all. */
    free(r->metadata_dir);
    r->metadata_dir = NULL;
    back = claim_record_to_json(r);
    assert_null(json_object_get(back, "metadataDir"));
    json_decref(back);
    claim_record_free(r);
    json_decref(want);
}

static void test_new_record(void **state)
{
    (void)state;
    const struct claim_ref ref = {"team-a", "c2", UID2};
    struct claim_record *r = claim_record_new(&ref, CLAIM_PREPARE_STARTED);
    claim_record_add_spec(r, SPEC(UID2));
    json_t *j = claim_record_to_json(r);
    assert_string_equal(json_string_value(json_object_get(j, "state")), CHECKPOINT_STARTED);
    assert_int_equal(json_array_size(json_object_get(j, "devices")), 0);
    assert_int_equal(json_array_size(json_object_get(j, "cdiSpecs")), 1);
    struct claim_ref back = claim_record_ref(r);
    assert_string_equal(back.ns, "team-a");
    assert_string_equal(back.name, "c2");
    assert_string_equal(back.uid, UID2);
    json_decref(j);
    claim_record_free(r);
}

static void expect_bad(const char *text, const char *want)
{
    struct error err;
    json_t *j = test_json(text);
    struct claim_record *r = (void *)1;
    assert_int_equal(claim_record_from_json(UID1, j, &r, &err), -1);
    assert_null(r);
    if (strstr(err.msg, want) == NULL)
        fail_msg("error \"%s\" does not say \"%s\"", err.msg, want);
    json_decref(j);
}

static void test_bad_records(void **state)
{
    (void)state;
    expect_bad("{\"namespace\":\"default\",\"name\":\"c1\",\"state\":\"PrepareCompleted\","
               "\"devices\":[]}",
               "are required");
    expect_bad("{\"namespace\":\"default\",\"name\":\"c1\",\"state\":\"Prepared\","
               "\"devices\":[],\"cdiSpecs\":[]}",
               "state must be");
    expect_bad("{\"namespace\":\"default\",\"name\":\"c1\",\"state\":\"PrepareCompleted\","
               "\"devices\":[{}],\"cdiSpecs\":[]}",
               "devices[0].requestNames");
    expect_bad("{\"namespace\":\"default\",\"name\":\"c1\",\"state\":\"PrepareCompleted\","
               "\"devices\":[],\"cdiSpecs\":[7]}",
               "cdiSpecs[0]");
}

static void test_set(void **state)
{
    (void)state;
    struct claim_records t = {0};
    struct claim_record *r1 = from(UID1, FULL(UID1));
    claim_records_put(&t, r1);
    const struct claim_ref c2 = {"default", "c2", UID2};
    claim_records_put(&t, claim_record_new(&c2, CLAIM_PREPARE_STARTED));
    assert_int_equal(t.n, 2);
    assert_ptr_equal(claim_records_find(&t, UID1), r1);
    assert_null(claim_records_find(&t, UID3));

    /* Only completed records go into a snapshot. */
    json_t *snap = claim_records_to_json(&t, true);
    assert_int_equal(json_object_size(snap), 1);
    assert_non_null(json_object_get(snap, UID1));
    json_decref(snap);
    json_t *all = claim_records_to_json(&t, false);
    assert_int_equal(json_object_size(all), 2);

    /* The same uid replaces; remove frees; the JSON reads back the same. */
    claim_records_put(&t, from(UID1, FULL(UID1)));
    assert_int_equal(t.n, 2);
    claim_records_remove(&t, UID2);
    claim_records_remove(&t, UID3);
    assert_int_equal(t.n, 1);
    struct error err;
    assert_int_equal(claim_records_from_json(all, &t, &err), 0);
    assert_int_equal(t.n, 2);
    assert_int_equal(claim_records_find(&t, UID2)->state, CLAIM_PREPARE_STARTED);
    json_t *again = claim_records_to_json(&t, false);
    assert_true(json_equal(again, all));
    json_decref(again);
    json_decref(all);
    claim_records_clear(&t);
    assert_int_equal(t.n, 0);
}

TEST_MAIN("driver/prepare claim_record", test_round_trip, test_new_record, test_bad_records,
          test_set)
