// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the devices that shape slices beyond health: virtual GPUs
 * (slices of their own with skipNodeOperations) and attachable GPUs (binding
 * conditions on the device). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/device/tests/test_gpus.h"
#include "driver/publish/slice_builder.h"
#include "slice_fixture.h"
#include "common/tests/test_main.h"

static struct fakehw_device gpu(int i, bool virtual_gpu, enum fakehw_attach attach)
{
    struct fakehw_device d = test_h100(i);
    d.virtual_gpu = virtual_gpu;
    d.attach = attach;
    return d;
}

static struct slice_build_result build(const struct fakehw_device *devs, size_t n)
{
    struct slice_build_input in = slice_fixture_input(devs, n);
    struct slice_build_result r;
    struct error err;
    if (slice_build(&in, &r, &err) < 0)
        fail_msg("slice_build: %s", err.msg);
    return r;
}

/* Appends prefix and text to the string in buf (size bytes). */
static void append(char *buf, size_t size, const char *prefix, const char *text)
{
    size_t used = strlen(buf);
    snprintf(buf + used, size - used, "%s%s", prefix, text);
}

/* "gpu-0,gpu-2|*" : the device names of a slice, and its skipNodeOperations. */
static void slice_is(const json_t *slices, size_t i, const char *want)
{
    const json_t *spec = json_object_get(json_array_get(slices, i), "spec");
    char got[1024] = "";
    size_t k;
    const json_t *d;
    json_array_foreach(json_object_get(spec, "devices"), k, d)
        append(got, sizeof(got), k ? "," : "", json_string_value(json_object_get(d, "name")));
    const json_t *skip = json_object_get(spec, "skipNodeOperations");
    if (skip != NULL) {
        append(got, sizeof(got), "|", json_string_value(json_array_get(skip, 0)));
        assert_int_equal(json_array_size(skip), 1);
    }
    assert_string_equal(got, want);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(spec, "pool"), "resourceSliceCount")),
        json_array_size(slices));
}

static void test_virtual_gpus_get_their_own_slices(void **state)
{
    (void)state;
    struct fakehw_device devs[5] = {
        gpu(0, false, FAKEHW_ATTACH_NONE), gpu(1, true, FAKEHW_ATTACH_NONE),
        gpu(2, false, FAKEHW_ATTACH_NONE), gpu(3, true, FAKEHW_ATTACH_NONE),
        gpu(4, false, FAKEHW_ATTACH_NONE)};
    struct slice_build_result r = build(devs, 5);
    assert_int_equal(json_array_size(r.slices), 2);
    slice_is(r.slices, 0, "gpu-0,gpu-2,gpu-4");
    slice_is(r.slices, 1, "gpu-1,gpu-3|*");
    assert_int_equal(r.published, 5);
    slice_build_result_free(&r);

    /* Only virtual ones: one slice, skipping; none at all: one empty slice. */
    r = build(&devs[1], 1);
    assert_int_equal(json_array_size(r.slices), 1);
    slice_is(r.slices, 0, "gpu-1|*");
    slice_build_result_free(&r);
    r = build(devs, 0);
    assert_int_equal(json_array_size(r.slices), 1);
    slice_is(r.slices, 0, "");
    slice_build_result_free(&r);
}

static void test_virtual_gpus_split_by_the_slice_limit(void **state)
{
    (void)state;
    size_t n = SLICE_MAX_DEVICES + 3;
    struct fakehw_device *devs = calloc(n, sizeof(*devs));
    for (size_t i = 0; i < n; i++)
        devs[i] = gpu((int)i, i >= 2, FAKEHW_ATTACH_NONE); /* 2 plain, 129 virtual */
    struct slice_build_result r = build(devs, n);
    assert_int_equal(json_array_size(r.slices), 3);
    slice_is(r.slices, 0, "gpu-0,gpu-1");
    json_t *second =
        json_object_get(json_object_get(json_array_get(r.slices, 1), "spec"), "devices");
    assert_int_equal(json_array_size(second), SLICE_MAX_DEVICES);
    assert_string_equal(json_string_value(json_object_get(json_array_get(second, 0), "name")),
                        "gpu-2");
    slice_is(r.slices, 2, "gpu-130|*");
    slice_build_result_free(&r);
    free(devs);
}

static void test_attachable_gpus_carry_binding_conditions(void **state)
{
    (void)state;
    struct fakehw_device devs[2] = {gpu(0, false, FAKEHW_ATTACH_NONE),
                                    gpu(1, false, FAKEHW_ATTACH_ATTACHING)};
    struct slice_build_result r = build(devs, 2);
    json_t *list = json_object_get(json_object_get(json_array_get(r.slices, 0), "spec"), "devices");
    json_t *plain = json_array_get(list, 0), *attachable = json_array_get(list, 1);
    assert_null(json_object_get(plain, "bindsToNode"));
    assert_null(json_object_get(plain, "bindingConditions"));
    assert_true(json_is_true(json_object_get(attachable, "bindsToNode")));
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(attachable, "bindingConditions"), 0)),
        DRIVER "/attached");
    assert_string_equal(json_string_value(json_array_get(
                            json_object_get(attachable, "bindingFailureConditions"), 0)),
                        DRIVER "/attach-failed");
    assert_int_equal(json_array_size(r.rejected), 0);
    slice_build_result_free(&r);
}

TEST_MAIN("driver/publish slice kinds", test_virtual_gpus_get_their_own_slices,
          test_virtual_gpus_split_by_the_slice_limit, test_attachable_gpus_carry_binding_conditions)
