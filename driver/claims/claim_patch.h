// SPDX-License-Identifier: Apache-2.0
/* The two API calls of a claim write, shared by the claim-status writer and
 * the binder: read the queued claim (is it still there, still the same
 * uid?) and PATCH its status.devices with a merge patch that carries the
 * claim's resourceVersion, so a concurrent change answers 409. */
#ifndef FAKEHW_DRIVER_CLAIM_PATCH_H
#define FAKEHW_DRIVER_CLAIM_PATCH_H

#include <jansson.h>

#include "driver/claims/claim_queue.h"
#include "driver/kube/kube_client.h"
#include "error.h"

enum claim_read {
    CLAIM_READ_OK,       /* *claim is the queued claim */
    CLAIM_READ_INVALID,  /* its namespace or name cannot be in a URL: nothing read */
    CLAIM_READ_GONE,     /* 404 */
    CLAIM_READ_REPLACED, /* *claim has another uid (or none) */
    CLAIM_READ_FAILED,   /* err says why; worth a retry */
};

/* GETs the queued claim.  *claim is set (caller json_decref()s it) for OK and
 * REPLACED. */
enum claim_read claim_patch_read(struct kube_client *kc, const struct claim_work *w, json_t **claim,
                                 struct error *err);

/* PATCHes claim's status.devices (claim as read) to devices.  0 when written,
 * with *answer (the stored claim; caller json_decref()s it); -1 with err and
 * *failed: CONFLICT on 409, DONE on 404 (gone), RETRY otherwise. */
int claim_patch_devices(struct kube_client *kc, const struct claim_work *w, const json_t *claim,
                        const json_t *devices, json_t **answer, enum claim_write_result *failed,
                        struct error *err);

#endif
