// SPDX-License-Identifier: Apache-2.0
/* The lock that serialises prepares and unprepares across the plugin
 * instances of one node during a rolling update: an exclusive flock(2) on
 * <plugin dir>/serialize.lock, the file the Go helper
 * (k8s.io/dynamic-resource-allocation/kubeletplugin) locks for the same
 * purpose.  Each acquisition opens the file anew, so two threads of one
 * process exclude each other too (flock locks belong to the open file). */
#ifndef FAKEHW_PREPARE_SERIALIZE_LOCK_H
#define FAKEHW_PREPARE_SERIALIZE_LOCK_H

#include "error.h"

#define SERIALIZE_LOCK_FILE "serialize.lock"

/* Opens path (created 0600, never through a symbolic link) and waits for
 * the exclusive lock.  Returns the descriptor that holds it, or -1 with
 * err. */
int serialize_lock_acquire(const char *path, struct error *err);

/* Releases the lock (closes fd); fd < 0 is ignored. */
void serialize_lock_release(int fd);

#endif
