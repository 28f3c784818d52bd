// SPDX-License-Identifier: Apache-2.0
/* The statistics of the benchmarks: nearest-rank percentiles and the
 * median and spread over runs.  (Figures themselves are never asserted.) */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bench/stats.h"
#include "test_main.h"

static void percentile_nearest_rank(void **state)
{
    (void)state;
    struct samples s = {0};
    /* 1..100 in reverse: p50 is 50, p99 is 99, p100 is 100. */
    for (int i = 100; i >= 1; i--)
        assert_int_equal(samples_add(&s, i), 0);
    assert_true(samples_percentile(&s, 50) == 50);
    assert_true(samples_percentile(&s, 99) == 99);
    assert_true(samples_percentile(&s, 100) == 100);
    assert_true(samples_percentile(&s, 1) == 1);
    samples_free(&s);

    /* 10 samples: p50 is the 5th, p99 the 10th, p10 the 1st. */
    for (int i = 1; i <= 10; i++)
        samples_add(&s, i * 1.5);
    assert_true(samples_percentile(&s, 50) == 7.5);
    assert_true(samples_percentile(&s, 99) == 15);
    assert_true(samples_percentile(&s, 10) == 1.5);
    samples_free(&s);
}

static void percentile_edges(void **state)
{
    (void)state;
    struct samples s = {0};
    assert_true(isnan(samples_percentile(&s, 50)));
    samples_add(&s, 3);
    assert_true(samples_percentile(&s, 50) == 3);
    assert_true(samples_percentile(&s, 99) == 3);
    assert_true(isnan(samples_percentile(&s, 0)));
    assert_true(isnan(samples_percentile(&s, 101)));
    samples_free(&s);
}

static void grows_merges_clears(void **state)
{
    (void)state;
    struct samples a = {0}, b = {0};
    for (int i = 0; i < 1000; i++)
        samples_add(&a, 1);
    for (int i = 0; i < 500; i++)
        samples_add(&b, 2);
    assert_int_equal(samples_merge(&a, &b), 0);
    assert_int_equal(a.n, 1500);
    assert_true(a.v[999] == 1 && a.v[1000] == 2 && a.v[1499] == 2);
    samples_clear(&a);
    assert_int_equal(a.n, 0);
    samples_free(&a);
    samples_free(&b);
}

static void spread_median_min_max(void **state)
{
    (void)state;
    const double odd[] = {5, 1, 9, 3, 7};
    struct spread s;
    spread_of(odd, 5, &s);
    assert_true(s.median == 5 && s.min == 1 && s.max == 9);
    assert_int_equal(s.runs, 5);
    assert_true(odd[0] == 5); /* the input is left alone */

    const double even[] = {4, 1, 3, 2};
    spread_of(even, 4, &s);
    assert_true(s.median == 2.5 && s.min == 1 && s.max == 4);

    spread_of(NULL, 0, &s);
    assert_true(isnan(s.median) && isnan(s.min) && isnan(s.max));
    assert_int_equal(s.runs, 0);
}

TEST_MAIN("bench_stats", percentile_nearest_rank, percentile_edges, grows_merges_clears,
          spread_median_min_max)
