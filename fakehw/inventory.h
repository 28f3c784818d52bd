// SPDX-License-Identifier: Apache-2.0
/* The live inventory of one node (struct live_inventory): its devices, their
 * health, and the generation counter; the model behind the served tree
 * (fakehw_tree.h).  The plugin's reading of that tree is another type,
 * struct tree_inventory (driver/inventory.h).
 * Thread-safe: FUSE workers, the flip scheduler and the reload thread share
 * it.
 *
 * Every change (a device's health, reason or XID, the device set or any
 * attribute) bumps the generation once and then calls the listener, outside
 * the lock, so the FUSE layer can wake poll(2) waiters.
 *
 * Every value is one line of text: a node name, device directory or health
 * reason with a control character (a newline above all) is refused.
 *
 * Failing calls return -1, fill err and set errno: ENOENT for an unknown
 * device or file, EINVAL for a bad health value, ENOMEM. */
#ifndef FAKEHW_INVENTORY_H
#define FAKEHW_INVENTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "attach.h"
#include "gpu.h"

struct live_inventory;

typedef void (*inventory_listener)(void *ctx, uint64_t generation);

/* An inventory for node with devs (copied), initial health from the config,
 * generation 1.  dev_dir is where the device nodes are ("" for none); it
 * only shapes the devicePath attribute. */
struct live_inventory *inventory_new(const char *node, const char *dev_dir,
                                     const struct gpu_device *devs, size_t n, struct error *err);

void inventory_free(struct live_inventory *inv);

/* Set once, before other threads use the inventory. */
void inventory_set_listener(struct live_inventory *inv, inventory_listener fn, void *ctx);

uint64_t inventory_generation(struct live_inventory *inv);

/* Replaces the device set (a reload).  A device whose name and configured
 * attributes (initial health included) are unchanged keeps its live health;
 * any other starts from its configured health.  *changed says whether
 * anything differs (then the generation was bumped). */
int inventory_replace(struct live_inventory *inv, const struct gpu_device *devs, size_t n,
                      bool *changed, struct error *err);

/* Copies the configured devices, by index; the caller frees *devs. */
int inventory_snapshot(struct live_inventory *inv, struct gpu_device **devs, size_t *n,
                       struct error *err);

/* Sets one device's health.  A reason of NULL or "" clears it.  Writing
 * the current state and reason changes nothing. */
int inventory_set_health(struct live_inventory *inv, const char *device, bool healthy,
                         const char *reason, struct error *err);

/* The same for every device, with one generation bump. */
int inventory_set_health_all(struct live_inventory *inv, bool healthy, const char *reason,
                             struct error *err);

/* Parses what was written to a health file: "healthy" or "unhealthy",
 * optionally a space and a reason, optionally one trailing newline.  The
 * reason is copied to reason (size bytes; "" when none). */
int health_parse_command(const char *buf, size_t len, bool *healthy, char *reason, size_t size,
                         struct error *err);

/* health_parse_command, then inventory_set_health. */
int inventory_write_health(struct live_inventory *inv, const char *device, const char *buf,
                           size_t len, struct error *err);

/* Sets one device's XID (fakehw_tree.h: 1..FAKEHW_XID_MAX; 0 clears it);
 * a change also sets healthSince.  EINVAL for a value out of range. */
int inventory_set_xid(struct live_inventory *inv, const char *device, long xid, struct error *err);

/* The same for every device, with one generation bump. */
int inventory_set_xid_all(struct live_inventory *inv, long xid, struct error *err);

/* Parses what was written to an xid file: a decimal 0..FAKEHW_XID_MAX
 * without sign or leading zeros, optionally one trailing newline. */
int xid_parse_command(const char *buf, size_t len, long *xid, struct error *err);

/* xid_parse_command, then inventory_set_xid. */
int inventory_write_xid(struct live_inventory *inv, const char *device, const char *buf, size_t len,
                        struct error *err);

/* Called (outside the lock) when a write started an attach that ends
 * later, so the attach timer (attacher.h) can wake. */
typedef void (*inventory_attach_waker)(void *ctx);

/* Set once, before other threads use the inventory. */
void inventory_set_attach_waker(struct live_inventory *inv, inventory_attach_waker fn, void *ctx);

/* Applies a write to a device's attach file (attach.h: "attach", "detach",
 * "fail next|always|never").  EINVAL for a bad command or a device that is
 * not attachable, ENOENT for an unknown device. */
int inventory_write_attach(struct live_inventory *inv, const char *device, const char *buf,
                           size_t len, struct error *err);

/* Ends every attach due by now_ms (one generation bump for all); returns the
 * monotonic ms when the next one is due, or -1 when none is in progress. */
int64_t inventory_attach_tick(struct live_inventory *inv, int64_t now_ms);

/* The attribute files of a device directory, NULL-terminated, in tree order. */
const char *const *inventory_attributes(void);

bool inventory_attribute_writable(const char *attr);

bool inventory_has_device(struct live_inventory *inv, const char *device);

/* Copies the device names, by index, into a malloc'ed array of n
 * FAKEHW_NAME_MAX-byte names; the caller frees it. */
int inventory_device_names(struct live_inventory *inv, char (**names)[FAKEHW_NAME_MAX], size_t *n,
                           struct error *err);

/* Renders a file of the tree: device NULL for the top-level files (node,
 * generation), else an attribute of that device.  Writes the content (one
 * line ending in "\n", NUL-terminated) to buf, its length to *len and its
 * modification time (Unix seconds) to *mtime; *generation gets the counter
 * the content belongs to. */
int inventory_read_file(struct live_inventory *inv, const char *device, const char *file, char *buf,
                        size_t size, size_t *len, int64_t *mtime, uint64_t *generation,
                        struct error *err);

/* Renders the snapshot file (format in fakehw_tree.h): every file of the
 * tree as of one generation, taken under the lock.  *text is malloc'ed (the
 * caller frees it), *len its length (not NUL-terminated), *generation the
 * counter it shows. */
int inventory_render_snapshot(struct live_inventory *inv, char **text, size_t *len,
                              uint64_t *generation, struct error *err);

/* Longest content inventory_read_file can produce, NUL included. */
#define INVENTORY_FILE_MAX (FAKEHW_REASON_MAX + FAKEHW_PATH_MAX + 64)

#endif
