// SPDX-License-Identifier: Apache-2.0
/* RFC 1123 DNS label and subdomain names, the rule Kubernetes applies to
 * namespaces, object names, device and request names, driver and node names,
 * and fakehw to device names (fakehw_tree.h).  One implementation for the
 * whole project; each module words its own error messages around it.
 *
 *   label      [a-z0-9]([-a-z0-9]*[a-z0-9])?, 1 to 63 characters
 *   subdomain  labels joined by ".", 1 to 253 characters in all */
#ifndef FAKEHW_COMMON_DNS_NAMES_H
#define FAKEHW_COMMON_DNS_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define DNS_LABEL_MAX     63
#define DNS_SUBDOMAIN_MAX 253

/* NULL is not a name. */
bool dns_label_valid(const char *s);
bool dns_subdomain_valid(const char *s);

/* The same for the n characters at s (a part of a longer string, e.g. the
 * prefix of a qualified name); s need not be NUL-terminated. */
bool dns_label_valid_n(const char *s, size_t n);
bool dns_subdomain_valid_n(const char *s, size_t n);

#endif
