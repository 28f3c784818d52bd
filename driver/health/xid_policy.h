// SPDX-License-Identifier: Apache-2.0
/* Which XIDs are fatal: NVIDIA's DRA driver's rule (kubernetes-sigs/
 * dra-driver-nvidia-gpu, cmd/gpu-kubelet-plugin/device_health.go,
 * xidsToSkip and getAdditionalXids), for the XID a device reports in the
 * fakehw tree (fakehw_tree.h, the file xid).
 *
 * An XID is ignored, an application error that leaves the GPU healthy,
 * when it is one of XID_POLICY_IGNORED below or of the additional list
 * (--additional-xids-to-ignore, ADDITIONAL_XIDS_TO_IGNORE, the real
 * driver's flag); every other XID is fatal.  The real driver then taints
 * the device with gpu.nvidia.com/xid=<code>, effect NoSchedule when fatal
 * and None when ignored (device_health.h says what each personality
 * makes of it).
 *
 * The additional list is the real driver's format, a comma-separated list
 * of decimal codes with blanks around them and empty items allowed
 * ("48, 63,,"); where the real driver skips a malformed item, this refuses
 * it, so that a typo never makes an XID fatal unnoticed. */
#ifndef FAKEHW_DRIVER_XID_POLICY_H
#define FAKEHW_DRIVER_XID_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* NVIDIA's ignored XIDs, with the real driver's comment for each
 * (X(code, what)). */
#define XID_POLICY_IGNORED(X)                                                                      \
    X(13, "Graphics Engine Exception")                                                             \
    X(31, "GPU memory page fault")                                                                 \
    X(43, "GPU stopped processing")                                                                \
    X(45, "Preemptive cleanup, due to previous errors")                                            \
    X(68, "Video processor exception")                                                             \
    X(109, "Context Switch Timeout Error")

/* Most additional XIDs one list may name (bounded work per input). */
#define XID_POLICY_ADDITIONAL_MAX 256

struct xid_policy {
    size_t n;
    long ignored[XID_POLICY_ADDITIONAL_MAX + 16]; /* sorted, no duplicates */
};

/* The default list plus additional (NULL or "" for none).  -1 with err
 * naming the item and its position for a code that is not a decimal
 * 1..FAKEHW_XID_MAX or for more than XID_POLICY_ADDITIONAL_MAX items. */
int xid_policy_init(struct xid_policy *p, const char *additional, struct error *err);

/* The policy of the default list alone, as xid_policy_init(p, NULL) makes it. */
const struct xid_policy *xid_policy_default(void);

/* True when xid is one of p's ignored XIDs (p NULL: the default policy). */
bool xid_policy_ignored(const struct xid_policy *p, long xid);

/* What the real driver's comment says of an ignored XID of the default
 * list, or NULL. */
const char *xid_policy_ignored_what(long xid);

/* The ignored XIDs as "13, 31, 43, 45, 68, 109" into buf. */
void xid_policy_format(const struct xid_policy *p, char *buf, size_t size);

#endif
