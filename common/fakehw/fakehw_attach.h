// SPDX-License-Identifier: Apache-2.0
/* The names of the attach states and scripted failures of the fakehw tree
 * (enums in fakehw_tree.h): one table for fakehw, which serves them, and the
 * readers, which parse them. */
#ifndef FAKEHW_COMMON_FAKEHW_ATTACH_H
#define FAKEHW_COMMON_FAKEHW_ATTACH_H

#include <stdbool.h>

#include "fakehw_tree.h"

/* "none", "detached", "attaching", "attached", "failed". */
const char *fakehw_attach_name(enum fakehw_attach state);

/* "never", "next", "always". */
const char *fakehw_attach_failure_name(enum fakehw_attach_failure failure);

/* The reverse; false for an unknown name. */
bool fakehw_attach_parse(const char *name, enum fakehw_attach *state);
bool fakehw_attach_failure_parse(const char *name, enum fakehw_attach_failure *failure);

#endif
