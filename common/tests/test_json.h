// SPDX-License-Identifier: Apache-2.0
/* For the unit tests that link jansson: JSON from a text the test wrote.
 * Include after <cmocka.h>. */
#ifndef FAKEHW_TESTS_TEST_JSON_H
#define FAKEHW_TESTS_TEST_JSON_H

#include <jansson.h>

/* text parsed; a text that is not JSON fails the test, saying where and
 * the text.  NULL stays NULL (no JSON given). */
static inline json_t *test_json(const char *text)
{
    if (text == NULL)
        return NULL;
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (j == NULL)
        fail_msg("test JSON, line %d column %d: %s: %s", jerr.line, jerr.column, jerr.text, text);
    return j;
}

#endif
