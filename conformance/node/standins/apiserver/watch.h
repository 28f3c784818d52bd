// SPDX-License-Identifier: Apache-2.0
/* One watch response: JSON event lines, or protobuf frames, streamed from
 * the store's history. */
#ifndef APISERVER_STANDIN_WATCH_H
#define APISERVER_STANDIN_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fieldsel.h"
#include "store.h"

struct watch_stream;

/* How a watch starts and what it writes. */
struct watch_opts {
    /* Start with ADDED events for the current objects (resourceVersion unset
     * or "0", or sendInitialEvents=true); otherwise replay the history after
     * from_rv, or send a 410 Expired ERROR event when it is no longer there. */
    bool initial;
    uint64_t from_rv;
    long timeout_s;
    /* After the initial events, a BOOKMARK whose object carries the
     * annotation k8s.io/initial-events-end: "true" (sendInitialEvents). */
    bool initial_events_end;
    bool protobuf; /* the events as k8s_codec.h frames them */
};

/* Called with the store locked.  ns NULL = all namespaces; sel is moved into
 * the watch.  The watch ends after o->timeout_s, when the store closes or
 * the client goes. */
struct watch_stream *watch_new(struct store *s, const struct resource *r, const char *ns,
                               struct fsel *sel, const struct watch_opts *o);
/* The socket of the client, to notice a client that went away while idle. */
void watch_set_fd(struct watch_stream *w, int fd);
/* Fills buf with the next bytes, blocking until there are events.  Returns
 * the byte count, or -1 when the watch is over. */
ssize_t watch_read(struct watch_stream *w, char *buf, size_t max);
void watch_free(struct watch_stream *w);

#endif
