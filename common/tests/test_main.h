// SPDX-License-Identifier: Apache-2.0
/* For the unit tests: a test program's main(), made from the names of its
 * tests, so a file names each test once and the array and the run call are
 * written here alone.  Include after <cmocka.h>.
 *
 *   TEST_MAIN("fakehw uuid", test_parse, test_format)
 *   TEST_MAIN_FIXTURE("prepare flow", fixture_setup, fixture_teardown, test_a, test_b)
 *
 * A test is reported under its function's name, as by cmocka_unit_test(). */
#ifndef FAKEHW_TESTS_TEST_MAIN_H
#define FAKEHW_TESTS_TEST_MAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Fills tests[0..n) with fns and the names that names ("a, b, c", the
 * stringized list; cut in place) gives them, each run between setup and
 * teardown (either may be NULL).  False, said on stderr, when the list does
 * not hold n names. */
static inline bool test_main_fill(struct CMUnitTest *tests, const CMUnitTestFunction *fns,
                                  char *names, size_t n, CMFixtureFunction setup,
                                  CMFixtureFunction teardown)
{
    char *name = names;
    for (size_t i = 0; i < n; i++) {
        char *comma = strchr(name, ',');
        if ((comma == NULL) != (i + 1 == n)) {
            fprintf(stderr, "test_main: the test list is not %zu names\n", n);
            return false;
        }
        if (comma)
            *comma = '\0';
        tests[i] = (struct CMUnitTest){
            .name = name, .test_func = fns[i], .setup_func = setup, .teardown_func = teardown};
        if (comma)
            name = comma + 1 + strspn(comma + 1, " ");
    }
    return true;
}

/* main(): the tests of the list, each between setup and teardown, the whole
 * group between group_setup and group_teardown. */
#define TEST_MAIN_RUN_(group, setup, teardown, group_setup, group_teardown, ...)                   \
    int main(void)                                                                                 \
    {                                                                                              \
        static const CMUnitTestFunction fns_[] = {__VA_ARGS__};                                    \
        static char names_[] = #__VA_ARGS__;                                                       \
        struct CMUnitTest tests_[sizeof(fns_) / sizeof(fns_[0])];                                  \
        if (!test_main_fill(tests_, fns_, names_, sizeof(fns_) / sizeof(fns_[0]), setup,           \
                            teardown))                                                             \
            return 1;                                                                              \
        return cmocka_run_group_tests_name(group, tests_, group_setup, group_teardown);            \
    }

/* The tests named, as the group `group`. */
#define TEST_MAIN(group, ...) TEST_MAIN_RUN_(group, NULL, NULL, NULL, NULL, __VA_ARGS__)

/* Each test between setup and teardown (cmocka_unit_test_setup_teardown). */
#define TEST_MAIN_FIXTURE(group, setup, teardown, ...)                                             \
    TEST_MAIN_RUN_(group, setup, teardown, NULL, NULL, __VA_ARGS__)

/* The whole group once between setup and teardown. */
#define TEST_MAIN_GROUP_FIXTURE(group, setup, teardown, ...)                                       \
    TEST_MAIN_RUN_(group, NULL, NULL, setup, teardown, __VA_ARGS__)

/* A group whose tests differ in their fixtures: the list is of
 * cmocka_unit_test*() entries. */
#define TEST_MAIN_LIST(group, ...)                                                                 \
    int main(void)                                                                                 \
    {                                                                                              \
        const struct CMUnitTest tests_[] = {__VA_ARGS__};                                          \
        return cmocka_run_group_tests_name(group, tests_, NULL, NULL);                             \
    }

#endif
