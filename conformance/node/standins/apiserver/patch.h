// SPDX-License-Identifier: Apache-2.0
/* PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902), and the
 * strategic-merge-patch directives the stand-in refuses. */
#ifndef APISERVER_STANDIN_PATCH_H
#define APISERVER_STANDIN_PATCH_H

#include <jansson.h>
#include <stddef.h>

/* Applies patch to target and returns the result; target is consumed (it may
 * be modified in place and returned), patch is borrowed. */
json_t *merge_patch(json_t *target, const json_t *patch);

/* Applies the operations (add, remove, replace, move, copy, test) to *doc in
 * order; *doc may be replaced.  -1 with msg ("op 2 (remove /spec/x): path
 * not found") when one fails; *doc is then partly changed and must be dropped. */
int json_patch_apply(json_t **doc, const json_t *ops, char *msg, size_t msg_size);

/* The first strategic-merge-patch directive key ("$patch",
 * "$setElementOrder/...", "$retainKeys", "$deleteFromPrimitiveList/...") in
 * patch, or NULL.  Without those a strategic merge patch of the fields the
 * driver writes means the same as a merge patch. */
const char *smp_directive(const json_t *patch);

#endif
