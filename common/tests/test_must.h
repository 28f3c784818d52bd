// SPDX-License-Identifier: Apache-2.0
/* For the unit tests: a call that must give a non-NULL result, and fails
 * the test with the call and its error when it does not.  Include after
 * <cmocka.h>.
 *
 *   struct error err;
 *   char *text = MUST(checkpoint_encode(claims, &err), err);
 */
#ifndef FAKEHW_TESTS_TEST_MUST_H
#define FAKEHW_TESTS_TEST_MUST_H

#include "error.h"

static inline void *test_must(void *result, const char *call, const struct error *err)
{
    if (result == NULL)
        fail_msg("%s: %s", call, err->msg);
    return result;
}

/* call's result; err is the struct error call fills in. */
#define MUST(call, err) test_must((call), #call, &(err))

#endif
