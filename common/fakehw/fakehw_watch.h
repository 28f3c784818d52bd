// SPDX-License-Identifier: Apache-2.0
/* Waiting for changes in the fakehw tree (layout in fakehw_tree.h) without
 * busy polling.
 *
 * How it watches, chosen each time the tree is (re)armed:
 *  - FUSE mount (statfs f_type 0x65735546): poll(2) on an open fd of
 *    <root>/generation; the daemon wakes it when the counter moved past what
 *    that fd last read, and the watcher preads the counter after each wake.
 *    If the daemon does not implement poll (every poll returns at once with
 *    the counter unchanged), the watcher falls back to reading the counter
 *    every retry_ms ("fuse-interval" mode) instead of spinning.
 *  - Anything else (a plain directory): inotify on <root> (generation, node,
 *    the devices directory itself), on <root>/devices (device directories
 *    created, removed, renamed) and on every device directory (any attribute
 *    written or replaced, health included).
 * Either way a slow safety resync runs every resync_ms: it checks that the
 * armed tree is still the one at <root> (a new mount over the same path is
 * re-armed and reported as CHANGED) and otherwise reports RESYNC, so a missed
 * notification costs at most one period.
 *
 * The tree is "up" while <root>/devices is a readable directory (and, on a
 * FUSE mount, <root>/generation can be opened and read).  When it goes away
 * (directory removed or renamed, filesystem unmounted, FUSE daemon killed so
 * the mount answers ENOTCONN) the watcher reports GONE once, drops every fd
 * and watch, and then looks for it by path every retry_ms; when the tree is
 * readable again (e.g. fakehw restarted and remounted) it re-arms on the new
 * tree and reports BACK.  A tree that is missing at open is simply "down".
 *
 * Usage: open the watch first, then read the tree, then loop on wait and
 * re-read the tree after CHANGED, RESYNC and BACK.  Events say "something may
 * have changed", never what: several changes may be merged into one CHANGED,
 * and a CHANGED may find nothing new.  A read that fails right after an event
 * may have met a half-made change (e.g. a device directory whose files are
 * still being written): keep the last good state and read again at the next
 * event; the change completing brings one.
 *
 * On a plain directory a file counts as changed when it is closed after
 * writing or renamed into place; names starting with "." are ignored, so
 * writers that replace files atomically (hidden temp file, rename) wake the
 * watch once, with the new content in place.
 *
 * Threads: one thread calls fakehw_watch_wait; fakehw_watch_wake may be called
 * from any thread or from a signal handler while the watch is open. */
#ifndef FAKEHW_COMMON_FAKEHW_WATCH_H
#define FAKEHW_COMMON_FAKEHW_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

enum fakehw_watch_event {
    FAKEHW_WATCH_TIMEOUT, /* timeout_ms passed without anything to report */
    FAKEHW_WATCH_CHANGED, /* the tree may have changed: re-read it */
    FAKEHW_WATCH_RESYNC,  /* safety resync period: re-read the tree to be sure */
    FAKEHW_WATCH_GONE,    /* the tree went away (the watch is now down) */
    FAKEHW_WATCH_BACK,    /* the tree is readable again after being down: re-read it */
    FAKEHW_WATCH_WOKEN,   /* fakehw_watch_wake was called */
};

struct fakehw_watch_options {
    int resync_ms; /* safety resync period; 0 = 30000; < 0 = never */
    int retry_ms;  /* while down: how often to look for the tree (and the
                      counter check period in fuse-interval mode); 0 = 1000 */
};

struct fakehw_watch;

/* Starts watching the tree at root (the path is copied).  opts may be NULL
 * for the defaults.  Succeeds when the tree is missing too (the watch starts
 * down and reports BACK when it appears); fails only for bad arguments or
 * when the system refuses resources (fds, inotify watches, memory). */
struct fakehw_watch *fakehw_watch_open(const char *root, const struct fakehw_watch_options *opts,
                                       struct error *err);

/* Blocks until something is to be reported or timeout_ms passed (< 0: no
 * timeout) and stores it in *ev; returns 0.  Returns -1 with err when the
 * watch cannot go on (a failing poll(2) or inotify read, no resources to
 * re-arm); the watch stays usable and the next call tries again. */
int fakehw_watch_wait(struct fakehw_watch *w, int timeout_ms, enum fakehw_watch_event *ev,
                      struct error *err);

/* Makes the current or the next fakehw_watch_wait return WOKEN.
 * Async-signal-safe.  Returns 0, or -1 with errno from write(2). */
int fakehw_watch_wake(struct fakehw_watch *w);

/* True while the tree is up (armed). */
bool fakehw_watch_up(const struct fakehw_watch *w);

/* How the watch works right now, for logs: "fuse-poll", "fuse-interval",
 * "inotify" or "down". */
const char *fakehw_watch_mode(const struct fakehw_watch *w);

/* Why the tree is down (the error or event that took it down, e.g.
 * "/var/run/fakehw/generation: Transport endpoint is not connected"), or ""
 * while up. */
const char *fakehw_watch_down_reason(const struct fakehw_watch *w);

/* The generation counter last read (0 when the tree has none, e.g. a plain
 * directory without a generation file, or while down). */
uint64_t fakehw_watch_generation(const struct fakehw_watch *w);

/* "timeout", "changed", "resync", "gone", "back", "woken". */
const char *fakehw_watch_event_name(enum fakehw_watch_event ev);

/* Releases every fd and watch.  NULL is fine. */
void fakehw_watch_close(struct fakehw_watch *w);

#endif
