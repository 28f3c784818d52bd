// SPDX-License-Identifier: Apache-2.0
/* Why the kubelet's PodResources socket did not answer, in words that say
 * what to check, instead of grpc's "failed to connect to all addresses".
 * Looked at only after a call failed with UNAVAILABLE. */
#ifndef FAKEHW_PODRESOURCES_REACH_H
#define FAKEHW_PODRESOURCES_REACH_H

#include <stdbool.h>
#include <stddef.h>

/* Looks at socket_path (stat, then a connect) and writes why nothing
 * answers there into buf: no such file, not a socket, nothing listening,
 * no permission.  false when a connect succeeds (the socket answers: the
 * call failed for another reason, which grpc's text says better). */
bool podres_explain_unreachable(const char *socket_path, char *buf, size_t size);

#endif
