// SPDX-License-Identifier: Apache-2.0
/* Fault injection for tests: the next API requests (or those of the next
 * seconds) that match get an error status, a delay, or a dropped connection.
 * Controlled through /standin/faults (see docs/apiserver-standin.md). */
#ifndef APISERVER_STANDIN_FAULTS_H
#define APISERVER_STANDIN_FAULTS_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fault {
    long id;
    int status;         /* answer with this status (0: none) */
    bool close;         /* drop the connection without an answer */
    bool after;         /* with close: handle the request first, then drop */
    long delay_ms;      /* wait before handling */
    long retry_after_s; /* Retry-After header with status (-1: none) */
    char *method;       /* only this method (NULL: any) */
    char *path;         /* only paths starting with this (NULL: any) */
    long remaining;     /* requests left (-1: until `until_ns`) */
    int64_t until_ns;   /* CLOCK_REALTIME end (0: none) */
};

struct faults {
    pthread_mutex_t lock;
    struct fault *list;
    size_t n, cap;
    long next_id;
};

void faults_init(struct faults *f);
void faults_destroy(struct faults *f);
/* Adds a fault from its JSON spec; -1 with msg when the spec is wrong.
 * *added (may be NULL) gets the fault as JSON, with its id. */
int faults_add(struct faults *f, const json_t *spec, json_t **added, char *msg, size_t msg_size);
void faults_clear(struct faults *f);
json_t *faults_list(struct faults *f);
/* Consumes one use of the first fault that matches; false when none does.
 * out's strings are not set (method/path NULL). */
bool faults_take(struct faults *f, const char *method, const char *path, struct fault *out);

#endif
