// SPDX-License-Identifier: Apache-2.0
/* What the three files of the tree reader share: fakehw_tree_value.c (one
 * value file and the rule of each attribute kind), fakehw_tree_read.c (devices
 * read file by file, listing) and fakehw_tree_snapshot.c (<root>/snapshot).
 * Not for other code: fakehw_tree_read.h is the reader's interface. */
#ifndef FAKEHW_COMMON_FAKEHW_TREE_INTERNAL_H
#define FAKEHW_COMMON_FAKEHW_TREE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fakehw_tree_read.h"

#define MAX2(a, b) ((a) > (b) ? (a) : (b))
/* Room for the longest attribute of struct fakehw_device. */
#define VALUE_MAX                                                                                  \
    MAX2(MAX2(FAKEHW_NAME_MAX, FAKEHW_TEXT_MAX), MAX2(FAKEHW_REASON_MAX, FAKEHW_PATH_MAX))

/* ---- fakehw_tree_value.c ---- */

/* Fills err with "<path>: <strerror>" and returns -1 with errno = errnum. */
int tree_fail_errno(struct error *err, int errnum, const char *path);
/* Returns -1 with errno set to errnum, for callers that act on it. */
int tree_fail_with(int errnum);
/* Copies s into out as a printable quoted string for messages: control
 * bytes as \xNN, cut after 64 bytes. */
const char *tree_quoted(char *out, size_t size, const char *s);
/* Text that may go into messages, slices and CSV: no control bytes. */
int tree_check_printable(const char *path, const char *v, struct error *err);
/* Decimal digits only: no sign, blanks or base prefixes. */
bool tree_parse_u64(const char *s, uint64_t *out);
/* Checks the text v of one attribute read from path and stores it in dev. */
int tree_store_attr(const struct fakehw_attr *a, const char *path, const char *v,
                    struct fakehw_device *dev, struct error *err);

/* ---- fakehw_tree_list.c ---- */

/* Makes room for one more device in *list, growing with what was read so
 * far (never from a count the input declares), up to
 * FAKEHW_TREE_MAX_DEVICES; where names the line or directory for the error
 * beyond that. */
int tree_grow(struct fakehw_device **list, size_t count, size_t *cap, const char *where,
              const char *name, struct error *err);
/* Sorts and checks what either way of reading found, and hands it out;
 * takes list either way. */
int tree_finish_list(const char *where, struct fakehw_device *taken, size_t count,
                     struct fakehw_device **devs, size_t *n, struct error *err);

/* ---- fakehw_tree_snapshot.c ---- */

/* Reads the devices of the snapshot file at path: 0, 1 when there is no
 * such file, -1 with err. */
int tree_read_snapshot(const char *path, struct fakehw_device **devs, size_t *n, struct error *err);

#endif
