// SPDX-License-Identifier: Apache-2.0
/* The claim watch: where the plugin's ResourceClaims come from.
 *
 * A thread lists and watches the ResourceClaims of every namespace and keeps
 * those with an allocation result of this driver and pool, by uid (a list
 * replaces the kept set; a failed list or watch is retried with jittered
 * backoff; an ERROR event, such as 410 Gone, lists again).  What it keeps
 * serves three readers:
 *  - the prepare path, through claim_watch_fetch (behind the prepare
 *    state's fetch_claim, driver/prepare/prepare_types.h): the scheduler
 *    allocates a claim well
 *    before the kubelet prepares it, so a prepare usually finds the claim
 *    here and needs no GET; when the watch does not hold it, it is read
 *    with a GET;
 *  - the claim-status writer (driver/health/claim_status.h), whose first
 *    attempt of a write starts from the kept copy (claim_watch_get);
 *  - the binder (driver/bind/binder.h), which reconciles the attachable
 *    devices with the kept claims (claim_watch_claims) whenever they change
 *    (claim_watch_listen).
 * A kept claim is an object no one changes: readers get a new reference
 * (jansson counts references atomically) and must not modify it. */
#ifndef FAKEHW_DRIVER_CLAIM_WATCH_H
#define FAKEHW_DRIVER_CLAIM_WATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "driver/kube/kube_client.h"
#include "driver/prepare/prepare_types.h"
#include "error.h"

/* Where claim_watch_fetch found a claim. */
enum claim_source {
    CLAIM_FROM_WATCH, /* the watch had it: no API call */
    CLAIM_FROM_GET,   /* read with a GET (or tried to) */
};

struct claim_watch_options {
    const char *driver_name; /* copied */
    const char *pool_name;   /* the node name; copied.  NULL: every pool of the
                              * driver (the fleet's one watch for all its nodes) */
    long retry_base_ms;      /* first delay after a failed list or watch; 0 = 500 */
    long retry_max_ms;       /* cap of the doubling delay; 0 = 30000 */
};

struct claim_watch;

/* Starts the watch thread.  kc must outlive the watch. */
struct claim_watch *claim_watch_start(struct kube_client *kc,
                                      const struct claim_watch_options *opts, struct error *err);

/* The claim with this uid, namespace and name as the watch last delivered
 * it (a new reference: read it, do not modify it; the caller json_decref()s
 * it), when it has an allocation result of this driver and pool; NULL when
 * the watch has not delivered it (yet), or w is NULL.  A claim's allocation
 * does not change while the claim is reserved for a pod, and the kubelet
 * prepares only reserved claims, so the copy's allocation is the one to
 * prepare; only the status may have moved on. */
json_t *claim_watch_get(struct claim_watch *w, const char *ns, const char *name, const char *uid);

/* The claim a prepare asks for: the watch's copy when it holds the claim
 * under this uid and name (no API call on the path the pod waits on), else
 * a GET; *from says which.  0 with *claim (new reference), or -1 with err
 * and no claim. */
int claim_watch_fetch(struct claim_watch *w, const struct claim_ref *ref, json_t **claim,
                      enum claim_source *from, struct error *err);

/* Every kept claim (a new object uid -> claim that shares the claims), and
 * in *synced whether a whole list has been seen yet: until then a claim
 * that holds a device may be missing.  NULL when out of memory. */
json_t *claim_watch_claims(struct claim_watch *w, bool *synced);

/* How many claims are kept. */
size_t claim_watch_size(struct claim_watch *w);

/* fn(ctx) is called whenever the kept claims change (a list, or an event
 * of a claim this driver and pool hold), on the watch thread and with the
 * watch's lock held: it must only note the change and wake its own thread,
 * and must not call back into the watch.  One listener; NULL fn removes it,
 * and once that returns fn is not called any more. */
void claim_watch_listen(struct claim_watch *w, void (*fn)(void *ctx), void *ctx);

/* Stops and joins the thread (its API calls are cancelled); the kept claims
 * stay readable until claim_watch_free.  NULL is fine. */
void claim_watch_stop(struct claim_watch *w);
/* Frees a stopped watch.  NULL is fine. */
void claim_watch_free(struct claim_watch *w);

#endif
