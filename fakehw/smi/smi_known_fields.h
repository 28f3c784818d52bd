// SPDX-License-Identifier: Apache-2.0
/* The names nvidia-smi's --query-gpu takes (the list its --help-query-gpu
 * prints), so fakegpu-smi can tell a field nvidia-smi has and it does not
 * implement from a name that is no field at all. */
#ifndef FAKEHW_SMI_SMI_KNOWN_FIELDS_H
#define FAKEHW_SMI_SMI_KNOWN_FIELDS_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the len bytes at name are one of nvidia-smi's --query-gpu names
 * or aliases. */
bool smi_known_field(const char *name, size_t len);

#endif
