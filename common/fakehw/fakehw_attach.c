// SPDX-License-Identifier: Apache-2.0
/* Attach state names: see fakehw_attach.h. */
#include "fakehw_attach.h"

#include <string.h>

static const char *const states[] = {
    [FAKEHW_ATTACH_NONE] = "none",           [FAKEHW_ATTACH_DETACHED] = "detached",
    [FAKEHW_ATTACH_ATTACHING] = "attaching", [FAKEHW_ATTACH_ATTACHED] = "attached",
    [FAKEHW_ATTACH_FAILED] = "failed",
};

static const char *const failures[] = {
    [FAKEHW_ATTACH_FAIL_NEVER] = "never",
    [FAKEHW_ATTACH_FAIL_NEXT] = "next",
    [FAKEHW_ATTACH_FAIL_ALWAYS] = "always",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const char *fakehw_attach_name(enum fakehw_attach state)
{
    return (unsigned)state < COUNT(states) ? states[state] : "?";
}

const char *fakehw_attach_failure_name(enum fakehw_attach_failure failure)
{
    return (unsigned)failure < COUNT(failures) ? failures[failure] : "?";
}

bool fakehw_attach_parse(const char *name, enum fakehw_attach *state)
{
    for (unsigned i = 0; i < COUNT(states); i++) {
        if (!strcmp(name, states[i])) {
            *state = (enum fakehw_attach)i;
            return true;
        }
    }
    return false;
}

bool fakehw_attach_failure_parse(const char *name, enum fakehw_attach_failure *failure)
{
    for (unsigned i = 0; i < COUNT(failures); i++) {
        if (!strcmp(name, failures[i])) {
            *failure = (enum fakehw_attach_failure)i;
            return true;
        }
    }
    return false;
}
