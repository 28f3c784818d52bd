// SPDX-License-Identifier: Apache-2.0
/* The Kubernetes API's rules for the names and values this driver publishes
 * in ResourceSlices (resource.k8s.io/v1), as validation does on the server:
 *
 *   DNS label       device names, and DNS subdomain (driver, node): the one
 *                   check of common/base/dns_names.h
 *   C identifier    [A-Za-z_][A-Za-z0-9_]*, at most 32 (attribute names)
 *   qualified name  C identifier, or DNS subdomain (at most 63) "/" C identifier
 *   semver          semantic version 2.0.0, no leading zeros in numbers
 *   attribute       exactly one of int, bool, string, version; strings and
 *                   versions at most 64 characters
 *   device          attributes + capacity at most 32 entries together
 *
 * Each check returns true/false, or 0/-1 with err saying what is wrong. */
#ifndef FAKEHW_DRIVER_API_NAMES_H
#define FAKEHW_DRIVER_API_NAMES_H

#include <jansson.h>
#include <stdbool.h>

#include "error.h"

#define API_C_IDENTIFIER_MAX     32
#define API_QUALIFIED_PREFIX_MAX 63
#define API_ATTR_STRING_MAX      64
#define API_DEVICE_ATTRS_MAX     32 /* attributes + capacity */
/* Digits of a number in a version value (MAJOR, MINOR, PATCH and all-digit
 * pre-release identifiers): 18, so that it fits in an int64, as the API
 * server checks from 1.38 on. */
#define API_SEMVER_NUMBER_DIGITS_MAX 18

bool api_c_identifier_valid(const char *s);
bool api_qualified_name_valid(const char *s);
bool api_semver_valid(const char *s);

/* Checks one device of a slice: name a DNS label; attributes a map of
 * qualified names to values with exactly one of int/bool/string/version
 * (string and version at most 64 characters, version semver); capacity a map
 * of qualified names to {"value": <non-empty string>}; at most 32 entries
 * together.  err names the device and the attribute:
 * "device gpu-0: attribute \"driverVersion\": version \"580.95.05\" is not semver". */
int api_device_validate(const json_t *device, struct error *err);

#endif
