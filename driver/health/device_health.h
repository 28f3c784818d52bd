// SPDX-License-Identifier: Apache-2.0
/* Device health as the API sees it: what a fakehw health state becomes in a
 * ResourceSlice (a taint, or the device left out) and in a ResourceClaim's
 * status.devices (a Ready condition).  Pure functions, no I/O.
 *
 * One classification feeds every consumer, so a slice taint, a claim
 * condition and a log line always tell the same story:
 *
 *   fakehw state                  taint value (label value)  condition reason
 *   healthy                       (no taint)                 DeviceHealthy
 *   unhealthy, reason "XID 79..." XID-79                     XID79
 *   unhealthy, other reason       the reason, sanitized      DeviceUnhealthy
 *   unhealthy, no reason          unhealthy                  DeviceUnhealthy
 *   fakehw tree gone              fakehw-unavailable         FakehwUnavailable
 *   device left the inventory     (not published)            DeviceRemoved
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

#include "error.h"
#include "fakehw_tree.h"

/* Key of the taint on an unhealthy device: "<driver>" + this suffix. */
#define DEVICE_HEALTH_TAINT_SUFFIX "/unhealthy"

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

struct device_health {
    bool healthy;
    char taint_value[LABEL_VALUE_MAX + 1]; /* "" when healthy */
    char reason[64];                       /* CamelCase condition reason */
    char message[FAKEHW_REASON_MAX + 128]; /* human-readable, full reason */
};

/* Classifies d.  tree_up false means the fakehw tree is gone: every device is
 * then unhealthy with reason FakehwUnavailable whatever d says. */
void device_health_classify(const struct fakehw_device *d, bool tree_up, struct device_health *out);

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

/* The taint an unhealthy device carries in its slice:
 * {"key": "<driver>/unhealthy", "value": <taint_value>, "effect": <effect>}.
 * timeAdded is left to the API server.  NULL for a healthy device. */
json_t *device_health_taint_json(const char *driver, const struct device_health *h,
                                 enum taint_effect effect);

/* Calls fn once for every device name whose published health or identity
 * differs between the two snapshots: present in only one of them, or with a
 * different classification, uuid, productName or memory. */
typedef void (*health_change_fn)(void *ctx, const char *device_name);
void device_health_diff(const struct fakehw_device *old_devs, size_t n_old, bool old_up,
                        const struct fakehw_device *new_devs, size_t n_new, bool new_up,
                        health_change_fn fn, void *ctx);

#endif
