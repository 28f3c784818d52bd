// SPDX-License-Identifier: Apache-2.0
/* Kubernetes name rules for everything of a claim that reaches a file path:
 * claim UIDs, names, namespaces, request and device names.  Each check
 * fails with a sentence naming the field and the rule it breaks, e.g.
 *   claim uid "../../etc": not a UID (want 36 characters: 8-4-4-4-12 lowercase hex digits)
 * so a caller only adds where the value came from. */
#ifndef FAKEHW_PREPARE_K8S_NAMES_H
#define FAKEHW_PREPARE_K8S_NAMES_H

#include <stdbool.h>

#include "error.h"

#define K8S_UID_LEN           36  /* "0e0d5e3c-8a53-4a4e-9b5d-1f0c1c2f7a10" */
#define K8S_DNS_LABEL_MAX     63  /* namespaces, request names, device names */
#define K8S_DNS_SUBDOMAIN_MAX 253 /* object names */

/* A UID as the API server makes them (RFC 4122 text form, lowercase). */
bool k8s_is_uid(const char *s);
/* RFC 1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters. */
bool k8s_is_dns_label(const char *s);
/* RFC 1123 subdomain: dot-separated labels, at most 253 characters. */
bool k8s_is_dns_subdomain(const char *s);

/* The same checks with an error: what names the value ("claim uid",
 * "namespace", "request", ...). */
int k8s_check_uid(const char *what, const char *s, struct error *err);
int k8s_check_dns_label(const char *what, const char *s, struct error *err);
int k8s_check_dns_subdomain(const char *what, const char *s, struct error *err);

/* Checks a claim reference (namespace, name, uid) from the kubelet before it
 * is used for anything. */
int k8s_check_claim_ref(const char *ns, const char *name, const char *uid, struct error *err);

#endif
