// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the built-in GPU catalogue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <strings.h>

#include "catalogue.h"
#include "config_spec.h"
#include "common/tests/test_main.h"

static void expect(const char *profile, const char *product, const char *arch, uint64_t mib,
                   const char *cc)
{
    const struct gpu_profile *p = catalogue_find(profile);
    if (p == NULL)
        fail_msg("profile %s missing", profile);
    assert_string_equal(p->product_name, product);
    assert_string_equal(p->architecture, arch);
    assert_string_equal(p->brand, "NVIDIA");
    assert_int_equal(p->memory_mib, mib);
    assert_string_equal(p->compute_capability, cc);
}

/* The figures nvidia-smi reports on the real boards. */
static void test_real_figures(void **state)
{
    (void)state;
    expect("A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB", "Ampere", 40960, "8.0");
    expect("A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", "Ampere", 81920, "8.0");
    expect("H100-SXM5-80GB", "NVIDIA H100 80GB HBM3", "Hopper", 81559, "9.0");
    expect("H200", "NVIDIA H200", "Hopper", 143771, "9.0");
    expect("GB200", "NVIDIA GB200", "Blackwell", 189471, "10.0");
    expect("B200", "NVIDIA B200", "Blackwell", 183359, "10.0");
    expect("L40S", "NVIDIA L40S", "Ada Lovelace", 46068, "8.9");
    expect("L4", "NVIDIA L4", "Ada Lovelace", 23034, "8.9");
    expect("T4", "Tesla T4", "Turing", 15360, "7.5");
}

static void test_lookup(void **state)
{
    (void)state;
    assert_ptr_equal(catalogue_find("h100-sxm5-80gb"), catalogue_find("H100-SXM5-80GB"));
    assert_null(catalogue_find("A100-SXM4-96GB"));
    assert_null(catalogue_find(""));
    assert_null(catalogue_at(catalogue_size()));
}

static void test_entries_well_formed(void **state)
{
    (void)state;
    assert_true(catalogue_size() >= 8);
    for (size_t i = 0; i < catalogue_size(); i++) {
        const struct gpu_profile *p = catalogue_at(i);
        assert_non_null(p);
        assert_ptr_equal(catalogue_find(p->name), p); /* names unique */
        assert_true(strlen(p->product_name) > 0 && strlen(p->product_name) < FAKEHW_TEXT_MAX);
        assert_true(strlen(p->architecture) > 0);
        assert_true(config_valid_version(p->compute_capability));
        assert_true(p->memory_mib >= 1024);
        for (size_t j = 0; j < i; j++)
            assert_true(strcasecmp(catalogue_at(j)->name, p->name) != 0);
    }
}

static void test_names_list(void **state)
{
    (void)state;
    char buf[1024];
    catalogue_names(buf, sizeof(buf));
    for (size_t i = 0; i < catalogue_size(); i++)
        assert_non_null(strstr(buf, catalogue_at(i)->name));
    char small[8];
    catalogue_names(small, sizeof(small));
    assert_true(strlen(small) < sizeof(small));
}

TEST_MAIN("fakehw catalogue", test_real_figures, test_lookup, test_entries_well_formed,
          test_names_list)
