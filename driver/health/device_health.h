// SPDX-License-Identifier: Apache-2.0
/* Device health as the API sees it: what a fakehw health state becomes in a
 * ResourceSlice (a taint, or the device left out) and in a ResourceClaim's
 * status.devices (a Ready condition).  Pure functions, no I/O.
 *
 * One classification feeds every consumer, so a slice taint, a claim
 * condition and a log line always tell the same story:
 *
 *   fakehw state                  taint <driver>/unhealthy=  condition reason
 *   healthy                       (no taint)                 DeviceHealthy
 *   unhealthy, reason "XID 79..." XID-79                     XID79
 *   unhealthy, other reason       the reason, sanitized      DeviceUnhealthy
 *   unhealthy, no reason          unhealthy                  DeviceUnhealthy
 *   fakehw tree gone              fakehw-unavailable         FakehwUnavailable
 *   device left the inventory     (not published)            DeviceRemoved
 *
 * An XID the device reports (the tree's xid; which are fatal:
 * xid_policy.h) is published as the personality's driver does:
 *
 *   xid       fakehw personality            nvidia personality (NVIDIA's driver)
 *   fatal     as unhealthy "XID <n>" above  taint <driver>/xid=<n> with the
 *             (unless already unhealthy)    configured effect, and unhealthy
 *                                           with reason XID<n> (unless already)
 *   ignored   healthy, no taint             taint <driver>/xid=<n>, effect None;
 *                                           healthy
 *
 * so an unhealthy nvidia device may carry both taints.  While the tree is
 * gone no XID is published.
 *
 * A taint value must be a Kubernetes label value (at most 63 characters of
 * [A-Za-z0-9._-], starting and ending with a letter or digit), so it carries a
 * short form only; the full reason is in the condition message and in the
 * fakehw tree (healthReason). */
#ifndef FAKEHW_DRIVER_DEVICE_HEALTH_H
#define FAKEHW_DRIVER_DEVICE_HEALTH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "driver/device/personality.h"
#include "error.h"
#include "fakehw_tree.h"
#include "driver/health/xid_policy.h"

/* Key of the taint on an unhealthy device: "<driver>" + this suffix. */
#define DEVICE_HEALTH_TAINT_SUFFIX "/unhealthy"
/* Key of the taint of an XID in the nvidia personality, as NVIDIA's driver
 * names it (TaintKeyXID): "<driver>" + this suffix. */
#define DEVICE_HEALTH_XID_TAINT_SUFFIX "/xid"

#define LABEL_VALUE_MAX       63
#define CONDITION_REASON_MAX  1024
#define CONDITION_MESSAGE_MAX 32768

enum taint_effect {
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_EFFECT_NO_EXECUTE,
    TAINT_EFFECT_NONE, /* informational; Kubernetes 1.35+ */
};

/* What to do with an unhealthy device in the ResourceSlice. */
enum unhealthy_policy {
    UNHEALTHY_POLICY_AUTO,   /* taint; remove once the server is seen dropping taints */
    UNHEALTHY_POLICY_TAINT,  /* always taint (with DRADeviceTaints off: published untainted) */
    UNHEALTHY_POLICY_REMOVE, /* leave unhealthy devices out of the slice */
};

/* "NoSchedule", "NoExecute", "None" (exact case).  -1 with err otherwise. */
int taint_effect_parse(const char *text, enum taint_effect *out, struct error *err);
const char *taint_effect_name(enum taint_effect e);

/* "auto", "taint", "remove".  -1 with err otherwise. */
int unhealthy_policy_parse(const char *text, enum unhealthy_policy *out, struct error *err);
const char *unhealthy_policy_name(enum unhealthy_policy p);

/* How health is published: the personality names the taints of XIDs, the
 * XID policy says which are fatal.  A zero policy (or NULL) is the fakehw
 * personality with NVIDIA's default ignored XIDs. */
struct health_policy {
    enum personality personality;
    const struct xid_policy *xids; /* NULL: the default ignored XIDs */
};

struct device_health {
    bool healthy;                          /* health stream, Ready condition */
    char taint_value[LABEL_VALUE_MAX + 1]; /* of <driver>/unhealthy; "": no such taint */
    long xid_taint;                        /* > 0: the taint <driver>/xid=<this> */
    bool xid_ignored;                      /* that taint's effect is None */
    char reason[64];                       /* CamelCase condition reason */
    char message[FAKEHW_REASON_MAX + 128]; /* human-readable, full reason */
};

/* Classifies d under policy (NULL: the zero policy).  tree_up false means
 * the fakehw tree is gone: every device is then unhealthy with reason
 * FakehwUnavailable whatever d says. */
void device_health_classify(const struct fakehw_device *d, bool tree_up,
                            const struct health_policy *policy, struct device_health *out);

/* True when h puts a taint on the device (an ignored XID's included). */
bool device_health_tainted(const struct device_health *h);

/* The health of a device that a claim holds but the inventory no longer has. */
void device_health_removed(const char *device_name, struct device_health *out);

/* Writes a label value derived from reason into buf (LABEL_VALUE_MAX + 1
 * bytes): "XID-<n>" when the reason names an XID, else the reason with every
 * run of other characters turned into one "-", cut to 63 and trimmed to a
 * letter or digit at both ends; "unhealthy" when nothing is left. */
void health_taint_value(const char *reason, char *buf, size_t size);

/* True when s is a valid label value ("" included). */
bool label_value_valid(const char *s);

/* True when s is a valid metav1.Condition reason: [A-Za-z][A-Za-z0-9_,:]*,
 * at most 1024 characters. */
bool condition_reason_valid(const char *s);

/* The taints of a device in its slice, as a list: for an unhealthy one
 * {"key": "<driver>/unhealthy", "value": <taint_value>, "effect": <effect>},
 * for an XID {"key": "<driver>/xid", "value": "<code>", "effect": <effect>,
 * or "None" for an ignored XID}.  timeAdded is left to the API server.
 * NULL when h has no taint (device_health_tainted), or out of memory. */
json_t *device_health_taints_json(const char *driver, const struct device_health *h,
                                  enum taint_effect effect);

/* Calls fn once for every device name whose published health or identity
 * differs between the two snapshots: present in only one of them, or with a
 * different classification, uuid, productName or memory. */
typedef void (*health_change_fn)(void *ctx, const char *device_name);
void device_health_diff(const struct fakehw_device *old_devs, size_t n_old, bool old_up,
                        const struct fakehw_device *new_devs, size_t n_new, bool new_up,
                        const struct health_policy *policy, health_change_fn fn, void *ctx);

#endif
