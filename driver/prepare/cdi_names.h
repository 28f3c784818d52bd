// SPDX-License-Identifier: Apache-2.0
/* CDI name rules (container-device-interface pkg/parser, SPEC.md), checked
 * before a name is written into a spec, so a runtime never refuses a spec we
 * wrote:
 *   vendor  starts with a letter, ends with a letter or digit, [A-Za-z0-9_.-]
 *   class   starts with a letter, ends with a letter or digit, [A-Za-z0-9_-],
 *           at most 63 characters (a dot would need cdiVersion 0.6.0)
 *   device  starts and ends with a letter or digit, [A-Za-z0-9_.:-]
 *           (a leading digit needs cdiVersion 0.5.0, which we declare)
 * A kind is "vendor/class"; a fully qualified device name "vendor/class=device". */
#ifndef FAKEHW_PREPARE_CDI_NAMES_H
#define FAKEHW_PREPARE_CDI_NAMES_H

#include <stdbool.h>

#include "error.h"

#define CDI_VERSION   "0.5.0"
#define CDI_CLASS_MAX 63

bool cdi_is_vendor(const char *s);
bool cdi_is_class(const char *s);
bool cdi_is_device_name(const char *s);

/* kind "vendor/class": 0, or -1 with err naming the part and the rule. */
int cdi_check_kind(const char *kind, struct error *err);
int cdi_check_device_name(const char *name, struct error *err);

#endif
