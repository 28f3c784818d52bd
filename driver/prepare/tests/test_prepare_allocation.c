// SPDX-License-Identifier: Apache-2.0
/* Unit tests for what prepare refuses of an allocation whatever the
 * scheduler decided (allocation_checks.h): shares the device cannot give,
 * MIG partitions overlapping their GPU or each other, in one claim and
 * across the claims prepared on the node. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "prepare_fixture.h"
#include "common/tests/test_main.h"

/* A result of this driver with extra fields (a JSON text after a comma). */
#define RESULT_WITH(req, dev, extra)                                                               \
    "{\"request\":\"" req "\",\"driver\":\"" FIXTURE_DRIVER "\",\"pool\":\"" FIXTURE_NODE          \
    "\",\"device\":\"" dev "\"," extra "}"

/* Puts claim ns/name with results, prepares it and returns the rc; err
 * holds the refusal. */
static int try_prepare(struct fixture *f, struct prepare_state *st, const char *name,
                       const char *uid, const char *results, struct error *err)
{
    fixture_put_claim(f, fixture_claim("default", name, uid, results, NULL, NULL));
    struct prepared_claim out;
    int rc = prepare_claim(st, "default", name, uid, &out, err);
    if (rc == 0)
        prepared_claim_free(&out);
    return rc;
}

static void expect_refused(struct fixture *f, struct prepare_state *st, const char *results,
                           const char *want)
{
    struct error err;
    if (try_prepare(f, st, "c1", UID1, results, &err) == 0)
        fail_msg("prepared: %s", results);
    char full[ERROR_MSG_MAX];
    snprintf(full, sizeof(full), "claim default/c1 (uid " UID1 "): %s", want);
    assert_string_equal(err.msg, full);
}

static void expect_prepared(struct fixture *f, struct prepare_state *st, const char *name,
                            const char *uid, const char *results)
{
    struct error err;
    if (try_prepare(f, st, name, uid, results, &err) < 0)
        fail_msg("%s", err.msg);
}

/* gpu-2 of the fixture is shared by memory: default 10Gi, min 1Gi, step
 * 1Gi, 80Gi in all; gpu-0 is not shared. */
static void test_shares_checked(void **state)
{
    struct fixture *f = *state;
    struct prepare_state *st = fixture_open_state(f);
    expect_refused(f, st, "[" RESULT_WITH("g", "gpu-0", "\"shareID\":\"s-1\"") "]",
                   "allocation result 0 (device gpu-0): shareID: the device is not shared by "
                   "memory (its memorySharing is empty), so it has no shares to give");
    expect_refused(f, st,
                   "[" RESULT_WITH("g", "gpu-0", "\"consumedCapacity\":{\"memory\":\"1Gi\"}") "]",
                   "allocation result 0 (device gpu-0): consumedCapacity.memory: the device is "
                   "not shared by memory (its memorySharing is empty), so it has no shares to "
                   "give");
    expect_refused(
        f, st,
        "[" RESULT_WITH("g", "gpu-2",
                        "\"shareID\":\"s-1\",\"consumedCapacity\":{\"memory\":\"1Pi\"}") "]",
        "allocation result 0 (device gpu-2): consumedCapacity.memory: "
        "1125899906842624 bytes is more than the device's memory of 85899345920 bytes");
    expect_refused(f, st,
                   "[" RESULT_WITH("g", "gpu-2", "\"consumedCapacity\":{\"memory\":\"512Mi\"}") "]",
                   "allocation result 0 (device gpu-2): consumedCapacity.memory: 536870912 bytes "
                   "is less than the device's min (min 1073741824, step 1073741824 bytes)");
    expect_refused(
        f, st, "[" RESULT_WITH("g", "gpu-2", "\"consumedCapacity\":{\"memory\":\"1536Mi\"}") "]",
        "allocation result 0 (device gpu-2): consumedCapacity.memory: 1610612736 bytes "
        "is not the device's min plus a multiple of its step (min 1073741824, step "
        "1073741824 bytes)");
    expect_refused(f, st,
                   "[" RESULT_WITH("g", "gpu-2", "\"consumedCapacity\":{\"cores\":\"1\"}") "]",
                   "allocation result 0 (device gpu-2): consumedCapacity.cores: the device has no "
                   "such capacity (only memory)");
    expect_refused(f, st, "[" RESULT_WITH("g", "gpu-2", "\"shareID\":7") "]",
                   "allocation result 0: shareID is a number, not a string");
    /* Nine shares of 10Gi in one claim are more than gpu-2's 80Gi. */
    char results[4096] = "[";
    for (int i = 0; i < 9; i++) {
        size_t used = strlen(results);
        snprintf(
            results + used, sizeof(results) - used,
            "%s" RESULT_WITH("g", "gpu-2",
                             "\"shareID\":\"s-%d\",\"consumedCapacity\":{\"memory\":\"10Gi\"}"),
            i ? "," : "", i);
    }
    strcat(results, "]");
    expect_refused(f, st, results,
                   "allocation result 8 (device gpu-2): consumedCapacity.memory: the shares of "
                   "GPU gpu-2 in this claim come to 96636764160 bytes with this one, more than its "
                   "memory of 85899345920 bytes");
    /* A whole GPU beside its shares, and the same GPU twice. */
    expect_refused(
        f, st, "[" RESULT_WITH("g", "gpu-2", "\"shareID\":\"s-1\"") "," RESULT("h", "gpu-2") "]",
        "allocation result 1 (device gpu-2): device: GPU gpu-2 is shared by memory "
        "with allocation result 0 (device gpu-2) of this claim; it cannot be held "
        "whole as well");
    expect_refused(f, st, "[" RESULT("g", "gpu-1") "," RESULT("h", "gpu-1") "]",
                   "allocation result 1 (device gpu-1): device: GPU gpu-1 is held by allocation "
                   "result 0 (device gpu-1) of this claim, which takes memory slices this result "
                   "takes too");
    /* What the scheduler writes passes: on the grid, within the memory. */
    expect_prepared(
        f, st, "c1", UID1,
        "[" RESULT_WITH("g", "gpu-2",
                        "\"shareID\":\"s-1\",\"consumedCapacity\":{\"memory\":\"2Gi\"}") "]");
    prepare_state_close(st);
}

/* gpu-1 and gpu-3 become partitions of gpu-0: 4g at slices 0-3 and 2g at
 * slices 2-3, which overlap each other and their GPU. */
static void make_partitions(struct fixture *f)
{
    struct fakehw_device *p4 = &f->devs[1], *p2 = &f->devs[3];
    snprintf(p4->name, sizeof(p4->name), "gpu-0-mig-4g40gb-0");
    snprintf(p4->parent, sizeof(p4->parent), "gpu-0");
    p4->mig_placement[0] = 0;
    p4->mig_placement[1] = 4;
    snprintf(p2->name, sizeof(p2->name), "gpu-0-mig-2g20gb-2");
    snprintf(p2->parent, sizeof(p2->parent), "gpu-0");
    p2->mig_placement[0] = 2;
    p2->mig_placement[1] = 2;
}

static void test_mig_overlaps_in_claim(void **state)
{
    struct fixture *f = *state;
    make_partitions(f);
    struct prepare_state *st = fixture_open_state(f);
    expect_refused(f, st, "[" RESULT("g", "gpu-0") "," RESULT("p", "gpu-0-mig-4g40gb-0") "]",
                   "allocation result 1 (device gpu-0-mig-4g40gb-0): device: GPU gpu-0 is held by "
                   "allocation result 0 (device gpu-0) of this claim, which takes memory slices "
                   "this result takes too");
    expect_refused(f, st,
                   "[" RESULT("p", "gpu-0-mig-4g40gb-0") "," RESULT("q", "gpu-0-mig-2g20gb-2") "]",
                   "allocation result 1 (device gpu-0-mig-2g20gb-2): device: GPU gpu-0 is held by "
                   "allocation result 0 (device gpu-0-mig-4g40gb-0) of this claim, which takes "
                   "memory slices this result takes too");
    /* An admin claim may see everything at once. */
    expect_prepared(f, st, "c1", UID1,
                    "[" RESULT_WITH("g", "gpu-0", "\"adminAccess\":true") "," RESULT_WITH(
                        "p", "gpu-0-mig-4g40gb-0", "\"adminAccess\":true") "]");
    prepare_state_close(st);
}

static void test_mig_overlaps_on_node(void **state)
{
    struct fixture *f = *state;
    make_partitions(f);
    struct prepare_state *st = fixture_open_state(f);
    struct error err;
    expect_prepared(f, st, "c2", UID2, "[" RESULT("p", "gpu-0-mig-4g40gb-0") "]");
    expect_refused(f, st, "[" RESULT("g", "gpu-0") "]",
                   "allocation result 0 (device gpu-0): device: GPU gpu-0 is held by device "
                   "gpu-0-mig-4g40gb-0 of claim default/c2 (uid " UID2
                   "), prepared on this node, which takes memory slices this result takes too");
    expect_refused(f, st, "[" RESULT("q", "gpu-0-mig-2g20gb-2") "]",
                   "allocation result 0 (device gpu-0-mig-2g20gb-2): device: GPU gpu-0 is held by "
                   "device gpu-0-mig-4g40gb-0 of claim default/c2 (uid " UID2
                   "), prepared on this node, which takes memory slices this result takes too");
    /* An admin claim is not held to it, nor counted against others. */
    expect_prepared(f, st, "c3", UID3, "[" RESULT_WITH("g", "gpu-0", "\"adminAccess\":true") "]");
    /* Once c2 is unprepared, its partition is free again. */
    assert_int_equal(unprepare_claim(st, "default", "c2", UID2, &err), 0);
    expect_prepared(f, st, "c1", UID1, "[" RESULT("q", "gpu-0-mig-2g20gb-2") "]");
    prepare_state_close(st);
}

TEST_MAIN_FIXTURE("prepare allocation", fixture_setup, fixture_teardown, test_shares_checked,
                  test_mig_overlaps_in_claim, test_mig_overlaps_on_node)
