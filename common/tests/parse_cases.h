// SPDX-License-Identifier: Apache-2.0
/* For the unit tests of a parser of texts into numbers: tables of texts
 * with the number each gives, or the error, checked by one loop whose
 * failures name the text.  Include after <cmocka.h>.
 *
 *   static const struct parse_good good[] = {{"30s", 30000}, {"1m", 60000}};
 *   CHECK_PARSE_GOOD(duration_parse_ms, good);
 */
#ifndef FAKEHW_TESTS_PARSE_CASES_H
#define FAKEHW_TESTS_PARSE_CASES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "error.h"

/* A text and the value it gives. */
struct parse_good {
    const char *text;
    int64_t value;
};

/* A text and the error it gives, the output left alone. */
struct parse_bad {
    const char *text, *msg;
};

/* 0 and *value, or -1 with err and *value untouched. */
typedef int (*parse_fn)(const char *text, int64_t *value, struct error *err);

static inline void check_parse_good(parse_fn parse, const struct parse_good *c)
{
    int64_t v = INT64_MIN;
    struct error err = {{0}};
    if (parse(c->text, &v, &err) != 0)
        fail_msg("\"%s\": %s", c->text, err.msg);
    if (v != c->value)
        fail_msg("\"%s\": %lld, not %lld", c->text, (long long)v, (long long)c->value);
}

static inline void check_parse_bad(parse_fn parse, const struct parse_bad *c)
{
    int64_t v = INT64_MIN; /* what an untouched output still holds */
    struct error err = {{0}};
    if (parse(c->text, &v, &err) != -1)
        fail_msg("\"%s\": accepted as %lld", c->text, (long long)v);
    if (strcmp(err.msg, c->msg) != 0)
        fail_msg("\"%s\":\n got  %s\n want %s", c->text, err.msg, c->msg);
    if (v != INT64_MIN)
        fail_msg("\"%s\": the output was changed on error", c->text);
}

/* Every row of the table cases (an array) by check_parse_good or _bad. */
#define CHECK_PARSE_CASES_(check, parse, cases)                                                    \
    do {                                                                                           \
        for (size_t i_ = 0; i_ < sizeof(cases) / sizeof((cases)[0]); i_++)                         \
            check(parse, &(cases)[i_]);                                                            \
    } while (0)
#define CHECK_PARSE_GOOD(parse, cases) CHECK_PARSE_CASES_(check_parse_good, parse, cases)
#define CHECK_PARSE_BAD(parse, cases)  CHECK_PARSE_CASES_(check_parse_bad, parse, cases)

#endif
