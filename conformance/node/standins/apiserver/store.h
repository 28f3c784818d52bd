// SPDX-License-Identifier: Apache-2.0
/* The in-memory object store: objects per resource type keyed by
 * namespace/name, one global resourceVersion counter, and a bounded history
 * of change events that watches read (and resume from).
 *
 * Locking: every store_* function below except init/destroy/lock/unlock
 * expects the caller to hold the lock.  Stored objects are never modified in
 * place (an update stores a new object), and are only touched under the lock. */
#ifndef APISERVER_STANDIN_STORE_H
#define APISERVER_STANDIN_STORE_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resources.h"

struct store_event {
    uint64_t rv;
    const struct resource *res;
    const char *type;       /* "ADDED", "MODIFIED", "DELETED" */
    char *object_json;      /* the object after the change (DELETED: its last state) */
    char *ns;               /* "" for cluster-scoped objects */
    char *now[FIELD_COUNT]; /* field label values after the change */
    char *was[FIELD_COUNT]; /* and before (MODIFIED only) */
};

struct store {
    pthread_mutex_t lock;
    pthread_cond_t changed;          /* broadcast on every event and on close */
    uint64_t rv;                     /* the last resourceVersion handed out */
    json_t *objects[RESOURCE_COUNT]; /* "ns/name" -> object */
    struct store_event *ring;
    size_t ring_cap, ring_head, ring_len;
    uint64_t expired_rv; /* newest rv that fell out of the history (0: none) */
    bool closing;
};

int store_init(struct store *s, size_t history);
void store_destroy(struct store *s);
void store_lock(struct store *s);
void store_unlock(struct store *s);
/* Wakes every watch so it ends; later watches end at once. */
void store_close(struct store *s);

/* Borrowed reference or NULL.  ns is NULL or "" for cluster-scoped types. */
json_t *store_get(struct store *s, const struct resource *r, const char *ns, const char *name);
uint64_t store_next_rv(struct store *s);
/* Stores obj (reference stolen; metadata.resourceVersion already set) and
 * records an ADDED (old NULL) or MODIFIED event. */
void store_put(struct store *s, const struct resource *r, json_t *obj, const json_t *old);
/* Removes the object and records a DELETED event carrying final (stolen). */
void store_delete(struct store *s, const struct resource *r, json_t *final);
/* New array of the objects of r (in namespace ns unless NULL) sorted by
 * namespace/name, each a new reference. */
json_t *store_list(struct store *s, const struct resource *r, const char *ns);

/* Index into ring of the first event with rv > after, or ring_len. */
size_t store_first_after(const struct store *s, uint64_t after);
const struct store_event *store_event_at(const struct store *s, size_t i);

#endif
