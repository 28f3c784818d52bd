// SPDX-License-Identifier: Apache-2.0
/* Unit tests for fakehw's deterministic UUIDs (SHA-256 itself: test_sha.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uuid.h"
#include "common/tests/check_valid.h"
#include "common/tests/test_main.h"

/* The derivation is a contract (docs/fakehw.md): pinned values, checked
 * independently with Python's hashlib. */
static void test_uuid_pinned(void **state)
{
    (void)state;
    char u[GPU_UUID_SIZE];
    gpu_uuid_derive("kind-worker", "gpu-0", u);
    assert_string_equal(u, "GPU-2a312d10-eabd-7f13-16e4-a4b4590ebf0b");
    gpu_uuid_derive("node-a", "gpu-0", u);
    assert_string_equal(u, "GPU-0f7f8929-e150-1c4d-7649-59de5013d1fd");
}

static void test_uuid_deterministic_and_distinct(void **state)
{
    (void)state;
    char a[GPU_UUID_SIZE], b[GPU_UUID_SIZE];
    gpu_uuid_derive("kind-worker", "gpu-3", a);
    gpu_uuid_derive("kind-worker", "gpu-3", b);
    assert_string_equal(a, b);
    assert_true(gpu_uuid_valid(a));
    gpu_uuid_derive("kind-worker2", "gpu-3", b);
    assert_string_not_equal(a, b);
    gpu_uuid_derive("kind-worker", "gpu-4", b);
    assert_string_not_equal(a, b);
    /* The separator keeps ("ab", "c") and ("a", "bc") apart. */
    gpu_uuid_derive("ab", "c", a);
    gpu_uuid_derive("a", "bc", b);
    assert_string_not_equal(a, b);
}

static int compare_uuid(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void test_uuid_unique_at_scale(void **state)
{
    (void)state;
    const char *seeds[] = {"kind-worker", "kind-worker2", "node-a"};
    size_t n = 3 * 4096;
    char(*all)[GPU_UUID_SIZE] = calloc(n, GPU_UUID_SIZE);
    assert_non_null(all);
    for (size_t s = 0; s < 3; s++) {
        for (size_t i = 0; i < 4096; i++) {
            char name[32];
            snprintf(name, sizeof(name), "gpu-%zu", i);
            gpu_uuid_derive(seeds[s], name, all[s * 4096 + i]);
            assert_true(gpu_uuid_valid(all[s * 4096 + i]));
        }
    }
    qsort(all, n, GPU_UUID_SIZE, compare_uuid);
    for (size_t i = 1; i < n; i++)
        assert_string_not_equal(all[i - 1], all[i]);
    free(all);
}

static void test_uuid_valid(void **state)
{
    (void)state;
    CHECK_VALID(
        gpu_uuid_valid,
        OK("GPU-00000000-1111-2222-3333-444444444444", "GPU-ABCDEF00-1111-2222-3333-44444444444f"),
        BAD("GPU-1234", "gpu-00000000-1111-2222-3333-444444444444",
            "MIG-00000000-1111-2222-3333-444444444444", "GPU-0000000g-1111-2222-3333-444444444444",
            "GPU-00000000-1111-2222-3333-4444444444444", "GPU-00000000_1111-2222-3333-444444444444",
            ""));
}

TEST_MAIN("fakehw uuid", test_uuid_pinned, test_uuid_deterministic_and_distinct,
          test_uuid_unique_at_scale, test_uuid_valid)
