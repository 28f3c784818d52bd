// SPDX-License-Identifier: Apache-2.0
/* The slice watch: one watch of a driver's ResourceSlices for many slice
 * publishers (slice_publisher_options.shared_watch), where each would
 * otherwise run a watch of its own node's slices: the fleet publishes
 * thousands of pools from one process, and one watch thread with one
 * connection serves them all.
 *
 * A thread lists (limit=1: only the resourceVersion is wanted) and watches
 * the slices with field selector spec.driver=<driver>, and hands every
 * event to the publisher of the slice's spec.nodeName, found through the
 * owner's lookup (slices of a node it has no publisher for are left
 * alone); the publisher does the rest as with its own watch
 * (slice_publisher_watch_event: echoes of its own writes, the debounced
 * sync).  After every list it kicks every publisher
 * (slice_publisher_watch_listed): anything may have happened while no
 * watch was open.  A failed list or watch is retried with jittered backoff;
 * an ERROR event (410 Gone) lists again.  A watch that the server ends
 * without an error (its timeoutSeconds) is opened again from the last
 * resourceVersion seen, with no list and no kick, so thousands of pools
 * are not all synced again every few minutes. */
#ifndef FAKEHW_DRIVER_SLICE_WATCH_H
#define FAKEHW_DRIVER_SLICE_WATCH_H

#include <stddef.h>

#include "driver/kube/kube_client.h"
#include "error.h"
#include "slice_publisher.h"

/* The owner's publishers.  Both functions are called on the watch thread,
 * must not block, and may be called until slice_watch_stop returns. */
struct slice_watch_publishers {
    size_t n;
    /* The i-th (0 .. n-1), for the kick after a list; NULL: none. */
    struct slice_publisher *(*at)(void *ctx, size_t i);
    /* The publisher of a node's pool, or NULL; O(1) for thousands. */
    struct slice_publisher *(*of_node)(void *ctx, const char *node);
    void *ctx;
};

struct slice_watch_options {
    const char *driver_name; /* copied */
    struct slice_watch_publishers publishers;
    int retry_base_ms; /* first delay after a failed list or watch; 0 = 200 */
    int retry_max_ms;  /* cap of the doubling delay; 0 = 10000 */
};

struct slice_watch_status {
    unsigned long lists;     /* lists that worked, each followed by a kick of every publisher */
    unsigned long watches;   /* watches opened */
    unsigned long events;    /* events handed to a publisher */
    unsigned long unclaimed; /* events of a node no publisher has */
};

struct slice_watch;

/* Starts the watch thread; no API call is made here.  kc must outlive the
 * watch; the publishers must outlive slice_watch_stop.  NULL with err. */
struct slice_watch *slice_watch_start(struct kube_client *kc,
                                      const struct slice_watch_options *opts, struct error *err);

void slice_watch_get_status(struct slice_watch *w, struct slice_watch_status *st);

/* Stops the thread (its list or watch is cancelled) and frees the watch;
 * no publisher is called after it.  NULL is fine. */
void slice_watch_stop(struct slice_watch *w);

#endif
