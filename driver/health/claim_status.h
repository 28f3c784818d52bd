// SPDX-License-Identifier: Apache-2.0
/* The claim device-status writer: keeps status.devices of every claim this
 * driver prepared in line with the health of its devices (JSON shape in
 * claim_status_json.h).
 *
 * Callers only queue work; a background thread does the API calls, so a slow
 * or failing API server never blocks a prepare or the inventory thread, and a
 * failure to write status never fails a prepare.  Work is kept per claim uid
 * in a claim queue (driver/claims/claim_queue.h, shared with the binder): repeated
 * requests for one claim before it is written collapse into one write.  A write is a
 * read-modify-write: GET the claim (or take the claim watch's copy, see watch), build the new
 * list (other drivers' entries kept), skip the write when nothing changes, otherwise PATCH the
 * status subresource with a merge patch that carries the claim's resourceVersion.  409 Conflict
 * re-reads at once (a few times, then with backoff); other failures retry with exponential backoff
 * and jitter up to max_attempts, each logged.  A claim that is gone (404), was replaced (other uid)
 * or holds no device of this driver and pool any more is dropped.
 *
 * Inputs:
 *  - claim_status_devices_changed: every inventory snapshot (the inventory
 *    listener).  The writer diffs it against the previous one
 *    (device_health_diff), keeps a reference to it (no copy) and asks
 *    `holders` which prepared claims hold a changed device; those claims are
 *    queued.  Until the first snapshot arrives nothing is written (device
 *    data would be missing).
 *  - claim_status_prepared: after a successful prepare; written
 *    CLAIM_STATUS_AFTER_PREPARE_MS later, so that its API calls do not
 *    compete for the CPUs with the kubelet, which is starting the pod's
 *    containers right then.
 *  - claim_status_unprepared: forgets queued work for a claim.
 * All three may be called from any thread and return at once. */
#ifndef FAKEHW_DRIVER_CLAIM_STATUS_H
#define FAKEHW_DRIVER_CLAIM_STATUS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "claim_status_json.h"
#include "driver/claims/claim_watch.h"
#include "driver/device/device_snapshot.h"
#include "driver/kube/kube_client.h"
#include "driver/prepare/prepare.h"
#include "error.h"
#include "fakehw_tree.h"

#define CLAIM_STATUS_AFTER_PREPARE_MS 100

/* Calls fn once per (prepared claim, device), the way prepare_for_each_device
 * does; adapt it with a one-line wrapper.  The writer calls it from its own
 * thread and holds none of its locks meanwhile, so fn never blocks on the
 * writer. */
typedef void (*claim_status_holders_fn)(void *ctx, prepared_device_fn fn, void *fn_ctx);

struct claim_status_options {
    const char *driver_name; /* copied */
    const char *pool_name;   /* the node name; copied */
    claim_status_holders_fn holders;
    void *holders_ctx;
    long retry_base_ms; /* first retry delay; 0 = 500 */
    long retry_max_ms;  /* cap of the doubling delay; 0 = 30000 */
    int max_attempts;   /* failed writes of one claim before it is given up; 0 = 12 */
    /* Called on the writer's thread after a claim's status.devices was
     * written because a device it holds changed health: ms from
     * claim_status_devices_changed to the write.  Must not block.
     * NULL = none. */
    void (*on_changed_written)(void *ctx, long latency_ms);
    void *on_changed_written_ctx;
    /* When set, a write starts from the watch's copy of the claim
     * (claim_watch_get) instead of a GET; its resourceVersion goes into the
     * patch, so a stale copy answers 409 and the claim is then read with a
     * GET.  NULL = always GET.  Must outlive the writer. */
    struct claim_watch *watch;
    /* What the opaque config made of each device, for its data (the nvidia
     * personality); NULL = nothing. */
    claim_config_data_fn config_data;
    void *config_data_ctx;
    /* How health is published (device_health.h); its XID policy must
     * outlive the writer.  Zero: the fakehw personality's. */
    struct health_policy health;
};

struct claim_status_stats {
    unsigned long writes;    /* successful PATCHes */
    unsigned long unchanged; /* reads that needed no write */
    unsigned long conflicts; /* 409 answers */
    unsigned long failures;  /* other failed attempts */
    unsigned long given_up;  /* claims dropped after max_attempts */
    size_t queued;           /* claims waiting now */
};

struct claim_status_writer;

/* Starts the writer thread.  kc must outlive the writer. */
struct claim_status_writer *claim_status_start(struct kube_client *kc,
                                               const struct claim_status_options *opts,
                                               struct error *err);

/* A new inventory snapshot: the writer takes its own reference. */
void claim_status_devices_changed(struct claim_status_writer *w, struct device_snapshot *snap);

/* Queues a status write for the claim (strings copied) and wakes the
 * writer's thread. */
void claim_status_prepared(struct claim_status_writer *w, const struct claim_ref *claim);

/* The same in two halves, so that a prepare's answer does not wait on the
 * thread's wake-up: queue while preparing, kick once the answer is on its
 * way. */
void claim_status_queue_prepared(struct claim_status_writer *w, const struct claim_ref *claim);
void claim_status_kick(struct claim_status_writer *w);

/* Drops queued work for the claim. */
void claim_status_unprepared(struct claim_status_writer *w, const char *uid);

/* Blocks until no claim is queued or being written, or timeout_ms passed.
 * 0 when idle, -1 on timeout.  Work that waits for a retry counts as queued. */
int claim_status_wait_idle(struct claim_status_writer *w, int timeout_ms);

void claim_status_get_stats(struct claim_status_writer *w, struct claim_status_stats *st);

/* Stops the thread (an API call in flight finishes first) and frees
 * everything; queued work is dropped.  NULL is fine. */
void claim_status_stop(struct claim_status_writer *w);

#endif
