// SPDX-License-Identifier: Apache-2.0
/* For the unit tests: a validity check, bool fn(const char *), held against
 * the strings it must accept and those it must refuse; a failure names the
 * function and the string.  Include after <cmocka.h>.
 *
 *   CHECK_VALID(dns_label_valid, OK("gpu-0"), BAD("-gpu", "Gpu", ""));
 */
#ifndef FAKEHW_TESTS_CHECK_VALID_H
#define FAKEHW_TESTS_CHECK_VALID_H

#include <stdbool.h>
#include <stddef.h>

static inline void check_valid_list(const char *what, bool (*fn)(const char *), bool want,
                                    const char *const *texts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fn(texts[i]) != want)
            fail_msg("%s(\"%s\") is %s", what, texts[i] ? texts[i] : "(null)",
                     want ? "false" : "true");
}

static inline void check_valid(const char *what, bool (*fn)(const char *), const char *const *good,
                               size_t ngood, const char *const *bad, size_t nbad)
{
    check_valid_list(what, fn, true, good, ngood);
    check_valid_list(what, fn, false, bad, nbad);
}

/* A list of strings as an array and its length, for CHECK_VALID. */
#define VALID_LIST(...)                                                                            \
    ((const char *const[]){__VA_ARGS__}),                                                          \
        (sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))
#define OK(...)  VALID_LIST(__VA_ARGS__)
#define BAD(...) VALID_LIST(__VA_ARGS__)

/* fn accepts every string of good (OK(...)) and refuses every one of bad
 * (BAD(...)). */
#define CHECK_VALID(fn, good, bad) check_valid(#fn, fn, good, bad)

#endif
