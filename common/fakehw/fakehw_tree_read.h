// SPDX-License-Identifier: Apache-2.0
/* Reading the fakehw tree (layout in fakehw_tree.h), strictly.
 *
 * Works the same on the FUSE mount and on a plain directory with that layout.
 * Each attribute file is read with one open, read(s) and close, so a FUSE
 * mount serves a fresh value per read; fakehw_tree_list reads the whole
 * inventory from <root>/snapshot instead when there is one.  One trailing "\n" is stripped; a
 * missing file, a malformed value, a value with more than one line or a value
 * longer than its field is an error naming the file and the claim, e.g.
 *   /var/run/fakehw/devices/gpu-1/memory: "80Gx" is not a byte count
 * Nothing is ever truncated.
 *
 * On failure every function returns -1, fills err and leaves errno set to the
 * cause: the system call's errno (ENOENT for a missing file or directory,
 * ENOTCONN or EIO from a FUSE mount whose daemon died), EINVAL for malformed
 * content, EOVERFLOW for a value that does not fit.  Outputs are left
 * unchanged on failure. */
#ifndef FAKEHW_COMMON_FAKEHW_TREE_READ_H
#define FAKEHW_COMMON_FAKEHW_TREE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "fakehw_tree.h"

/* Reads the one-line file at path into buf (size bytes including the NUL),
 * without its trailing "\n".  Fails if the value holds a NUL, a newline
 * before the end, or does not fit. */
int fakehw_tree_read_value(const char *path, char *buf, size_t size, struct error *err);

/* Reads <root>/devices/<name>/ into *dev and checks every attribute: name is a
 * DNS label equal to the directory name; index, minor >= 0; numaNode >= -1;
 * memory a byte count; health "healthy" or "unhealthy"; healthSince >= 0;
 * uuid non-empty without blanks or commas; productName, driverVersion and
 * pciBusID non-empty; pciBusID like "0000:18:00.0"; computeCapability empty
 * or like "9.0"; devicePath empty or absolute. */
int fakehw_tree_read_device(const char *root, const char *name, struct fakehw_device *dev,
                            struct error *err);

/* Reads every device, sorted by index, then name.
 *
 * When <root>/snapshot exists (a fakehw mount), it is read in one open with
 * large reads and parsed strictly (format in fakehw_tree.h): a line that is
 * not "KEY VALUE", an unknown key, a device block that lacks an attribute
 * or has one twice, a device named twice, a value that is malformed or too
 * long for its field (checked as for the files), a last line cut short or a
 * missing or wrong "end" line is an error naming the line, e.g.
 *   /var/run/fakehw/snapshot line 10: memory: "80Gx" is not a byte count
 * Any failure to read it but ENOENT is an error too.  Limits: the file is
 * read up to 16 MiB (more is EOVERFLOW, "larger than 16 MiB"), and at most
 * FAKEHW_TREE_MAX_DEVICES device blocks (the next device line is EOVERFLOW,
 * "<root>/snapshot line N: device gpu-4096: more than 4096 devices"); memory
 * grows with the blocks actually read, never with what the text declares.
 * The per-file walk has the same device limit.
 *
 * Without it (ENOENT: a plain directory, an older fakehw) every device under
 * <root>/devices is read file by file: entries whose name starts with "."
 * are skipped; any other entry must be a directory with a DNS-label name; a
 * device directory removed while the list is read is left out.
 *
 * Both ways give the same devices.  Two devices with the same index or uuid
 * are an error.  On success *devs is a malloc'ed array the caller frees
 * (NULL when *n is 0). */
int fakehw_tree_list(const char *root, struct fakehw_device **devs, size_t *n, struct error *err);

/* Parses the text of a snapshot file (len bytes, not NUL-terminated) by
 * the rules of fakehw_tree_list; path only names it in errors.  For a
 * process that renders an inventory's snapshot itself (the fleet publisher
 * holds many in memory) instead of reading it from a mount. */
int fakehw_tree_parse_snapshot(const char *path, const char *text, size_t len,
                               struct fakehw_device **devs, size_t *n, struct error *err);

/* Reads <root>/node into buf (a Kubernetes node name needs 254 bytes). */
int fakehw_tree_read_node(const char *root, char *buf, size_t size, struct error *err);

/* Reads <root>/generation. */
int fakehw_tree_read_generation(const char *root, uint64_t *gen, struct error *err);

/* Parses the text of a generation file (len bytes, not NUL-terminated, one
 * optional trailing "\n"); path only names the file in the error.  For
 * callers that read the file themselves (the watcher preads its open fd). */
int fakehw_tree_parse_generation(const char *path, const char *text, size_t len, uint64_t *gen,
                                 struct error *err);

#endif
