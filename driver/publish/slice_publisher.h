// SPDX-License-Identifier: Apache-2.0
/* The slice publisher: keeps the node's pool of ResourceSlices on the API
 * server equal to the fake GPUs the inventory sees, for as long as the
 * plugin runs.
 *
 * A sync thread owns the pool.  It reads the Node's uid once (GET
 * /api/v1/nodes/<node>, retried with backoff until it works), waits for the
 * first slice_publisher_update, and then syncs: lay out the desired slices
 * (slice_builder.h), LIST the slices with field selector
 * spec.nodeName=<node>,spec.driver=<driver>, then compare and write slice by
 * slice (slice_sync.h: generation rules, call order), building each desired
 * slice only when it is compared or written.  409 Conflict or 404 on an update re-reads
 * and re-plans at once (a few times, then with backoff); other failures are
 * retried with exponential backoff and jitter (retry_base_ms..retry_max_ms),
 * never in a tight loop.
 *
 * The Node's uid is read again once per resync period, so a Node that was
 * deleted and made again (same name, new uid) gets owner references that the
 * garbage collector accepts.
 *
 * It syncs again when:
 *  - slice_publisher_update brings a new device list (health included);
 *  - a watch on the same list (its own thread; with shared_watch the
 *    owner's one watch of many nodes, slice_watch.h) reports any change to
 *    the driver's slices of this node, e.g. the kubelet wiping them at its start
 *    or 30 s after losing the plugin: the pool is back within about a
 *    second.  The publisher's own writes come back through the watch too;
 *    those echoes (same name and resourceVersion as a write's answer, or the
 *    name of a slice it deleted) start no sync, so a write costs one LIST,
 *    not two;
 *  - resync_ms passed since the last successful sync (safety net).
 * Syncs start at least min_sync_interval_ms apart (50 ms): changes that
 * come meanwhile are merged, and the next sync publishes the newest
 * snapshot, so a device that flaps as fast as fakehw allows costs at most
 * twenty syncs a second.  A sync that only a device update asked for, whose
 * slices come out as the last successful sync published them
 * (slice_fingerprint.h: a flip undone before it was synced, an attribute
 * that is not published), makes no request at all.  With a gate (many
 * publishers in one process, sync_gate.h), a sync that needs the server
 * and each read of the Node's uid wait for one of its slots first.
 *
 * Unhealthy devices: with policy taint they carry the taint
 * <driver>/unhealthy; with policy remove they are left out of the slices;
 * with policy auto they carry the taint until the server is seen dropping
 * the taints field (DRADeviceTaints off: a create or update answer lacks
 * them), then they are left out, for the rest of the process's life. */
#ifndef FAKEHW_DRIVER_SLICE_PUBLISHER_H
#define FAKEHW_DRIVER_SLICE_PUBLISHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver/health/device_health.h"
#include "driver/device/device_snapshot.h"
#include "driver/device/personality.h"
#include "driver/kube/kube_client.h"
#include "error.h"
#include "fakehw_tree.h"
#include "sync_gate.h"

struct slice_publisher_options {
    const char *driver_name; /* copied */
    const char *node_name;   /* copied; also the pool name */
    enum taint_effect taint_effect;
    enum unhealthy_policy policy;
    enum personality personality; /* attributes, capacities, counters */
    /* Which XIDs are fatal (device_health.h); must outlive the publisher.
     * NULL: the default list. */
    const struct xid_policy *xids;
    int resync_ms;     /* periodic full sync; 0 = 30000 */
    int retry_base_ms; /* first retry delay after a failure; 0 = 200 */
    int retry_max_ms;  /* cap of the doubling delay; 0 = 10000 */
    /* Syncs start at least this far apart, whatever asks for them; the
     * changes that come meanwhile are merged into the next.  0 = 50. */
    int min_sync_interval_ms;
    /* Called on the publisher's thread, lock held, when a sync published
     * a health change: ms from the slice_publisher_update that brought it
     * (flip set) to the end of that sync (flip-to-taint latency).  Other
     * updates, the first snapshot at start-up among them, are no sample.
     * Must not block or call the publisher.  NULL = none. */
    void (*on_published)(void *ctx, long latency_ms);
    void *on_published_ctx;
    /* The owner watches the slices for many publishers (slice_watch.h) and
     * hands this one its node's events (slice_publisher_watch_event) and
     * the kick after each list (slice_publisher_watch_listed): no watch
     * thread of its own.  false: the publisher's own watch (the plugin). */
    bool shared_watch;
    /* Held around every exchange with the API server (a sync, a read of
     * the Node's uid), shared by the publishers it bounds (sync_gate.h);
     * must outlive the publisher.  NULL: no limit (the plugin). */
    struct sync_gate *gate;
};

struct slice_publisher_status {
    bool published; /* a sync has succeeded at least once */
    bool in_sync;   /* the last sync succeeded and no change came since */
    bool have_node_uid;
    int64_t generation;          /* pool generation after the last successful sync */
    size_t slices;               /* slices of the last successful sync */
    size_t devices;              /* devices published */
    size_t tainted;              /* of which carry a taint */
    size_t removed;              /* unhealthy devices left out */
    size_t rejected;             /* devices left out because they break an API rule */
    bool taints_dropped;         /* the server was seen dropping taints */
    bool partitions_refused;     /* the server refused or dropped counters: whole GPUs only */
    bool partition_type_dropped; /* the server dropped partitionTypeAttribute: not sent */
    size_t counted;              /* published devices that consume counters */
    bool removing_unhealthy;     /* unhealthy devices are being left out */
    unsigned long syncs, creates, updates, deletes, conflicts, failures;
    unsigned long dry_runs;         /* dry-run updates asking what the server would store */
    unsigned long echoes;           /* syncs skipped: the watch only saw our own writes */
    unsigned long skipped;          /* device updates that changed nothing published: no
                                       request made */
    long last_update_latency_ms;    /* from a slice_publisher_update with a flip to the
                                       end of the sync that published it (flip-to-taint
                                       latency) */
    char last_error[ERROR_MSG_MAX]; /* of the last failed sync, "" after a success */
};

struct slice_publisher;

/* Starts the sync and watch threads (no watch thread with shared_watch);
 * returns at once (no API call is made
 * here).  Nothing is published before the first slice_publisher_update.  kc
 * must outlive the publisher.  -1/NULL with err for bad options (driver or
 * node not a DNS subdomain). */
struct slice_publisher *slice_publisher_start(struct kube_client *kc,
                                              const struct slice_publisher_options *opts,
                                              struct error *err);

/* The new device snapshot (its tree_up says whether the fakehw tree is up);
 * the publisher takes its own reference, no copy.  flip: the snapshot
 * carries a device health change, whose time to the slices is measured
 * (on_published); the first snapshot, a reload or an attach state is no
 * flip.  Never blocks on the API server; safe from any thread, e.g. the
 * inventory listener. */
void slice_publisher_update(struct slice_publisher *p, struct device_snapshot *snap, bool flip);

/* Blocks until a sync has succeeded at least once (0) or timeout_ms passed
 * (-1).  For the ready file. */
int slice_publisher_wait_published(struct slice_publisher *p, int timeout_ms);

/* Blocks until the last sync succeeded with nothing pending (0), or timeout_ms
 * passed (-1).  For tests and benchmarks. */
int slice_publisher_wait_in_sync(struct slice_publisher *p, int timeout_ms);

void slice_publisher_get_status(struct slice_publisher *p, struct slice_publisher_status *st);

/* With shared_watch: one event of the owner's watch about this
 * publisher's node (type and object as kube_watch gives them; object
 * borrowed).  Our own writes coming back are no news; anything else asks
 * for a sync after a short debounce.  1 for an ERROR event (the owner
 * lists again), else 0.  Safe from any thread. */
int slice_publisher_watch_event(struct slice_publisher *p, const char *type, json_t *object);

/* With shared_watch: the owner's watch listed again; anything may have
 * happened while no watch was open, so a sync is due whatever the echoes
 * say.  Safe from any thread. */
void slice_publisher_watch_listed(struct slice_publisher *p);

/* Stops both threads (waits for them); nothing is published after it.
 * Idempotent; slice_publisher_stop does it too.  NULL is fine. */
void slice_publisher_halt(struct slice_publisher *p);

/* Stops both threads and frees the publisher.  With delete_slices (uninstall,
 * --cleanup-on-exit) it first deletes every slice of this driver and node,
 * retrying for up to about 10 s or until the client's deadline
 * (kube_client_set_deadline); -1 with err when some could not be deleted
 * (the publisher is freed either way).  NULL is fine. */
int slice_publisher_stop(struct slice_publisher *p, bool delete_slices, struct error *err);

#endif
