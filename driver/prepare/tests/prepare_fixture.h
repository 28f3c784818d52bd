// SPDX-License-Identifier: Apache-2.0
/* Shared fixture of the prepare tests: a temp directory with a plugin dir,
 * a CDI root and a fakehw root; a fake device inventory and a fake API
 * server (claims by namespace/name) behind the prepare callbacks. */
#ifndef FAKEHW_PREPARE_TESTS_FIXTURE_H
#define FAKEHW_PREPARE_TESTS_FIXTURE_H

#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "driver/prepare/prepare.h"

#define FIXTURE_DRIVER "gpu.fakehw.example.com"
#define FIXTURE_NODE   "node-1"
#define FIXTURE_NDEVS  4

#define UID1 "0e0d5e3c-8a53-4a4e-9b5d-1f0c1c2f7a10"
#define UID2 "7d1f2c3b-4a5e-4f60-8a71-92b3c4d5e6f7"
#define UID3 "a0b1c2d3-e4f5-4a6b-8c7d-8e9fa0b1c2d3"

struct fixture {
    char root[PATH_MAX];
    char plugin_dir[PATH_MAX];
    char cdi_root[PATH_MAX];
    char fakehw_root[PATH_MAX];
    char smi[PATH_MAX];
    struct prepare_config cfg;
    struct fakehw_device devs[FIXTURE_NDEVS];
    pthread_mutex_t mu; /* claims, fetches */
    json_t *claims;     /* "ns/name" -> claim */
    int fetches;
    int prepared_hooks, unprepared_hooks; /* on_prepared / on_unprepared calls */
};

/* cmocka setup/teardown: *state is a struct fixture. */
int fixture_setup(void **state);
int fixture_teardown(void **state);

/* A claim as the API server returns it.  results and config are JSON array
 * texts (config may be NULL); annotations a JSON object text or NULL. */
json_t *fixture_claim(const char *ns, const char *name, const char *uid, const char *results,
                      const char *config, const char *annotations);
/* Makes the fake API server return claim for its namespace/name (steals it). */
void fixture_put_claim(struct fixture *f, json_t *claim);
int fixture_fetches(struct fixture *f);

/* A result of this driver on this node: {"request","driver","pool","device"}. */
#define RESULT(req, dev)                                                                           \
    "{\"request\":\"" req "\",\"driver\":\"" FIXTURE_DRIVER "\",\"pool\":\"" FIXTURE_NODE          \
    "\",\"device\":\"" dev "\"}"

/* A prepare state on f's config; fails the test when it cannot open. */
struct prepare_state *fixture_open_state(struct fixture *f);

/* Once what unprepares left for after their answers is done: no CDI spec
 * and no metadata directory is left (fails the test otherwise). */
void fixture_assert_no_files(struct fixture *f, struct prepare_state *st);

/* File helpers. */
char *fixture_read(const char *path); /* contents, or NULL; caller frees */
bool fixture_exists(const char *path);
size_t fixture_count(const char *dir); /* entries except . and .. (0 if missing) */
void fixture_path(char *buf, size_t size, const char *dir, const char *name);

/* Puts a non-empty directory at path (inside it, the file inside, a buffer
 * of size), where nothing can then be written, renamed or removed;
 * fixture_unblock clears it again. */
void fixture_block(const char *path, char *inside, size_t size);
void fixture_unblock(const char *path, const char *inside);

/* Path of the claim spec of uid in f's CDI root. */
void fixture_spec_path(const struct fixture *f, const char *uid, char *buf, size_t size);

/* The claims f's checkpoint holds on disk: checkpoint.json with
 * checkpoint.journal replayed onto it.  Fails the test if either is corrupt
 * or the journal has a torn line. */
json_t *fixture_checkpoint_claims(const struct fixture *f);
/* How many claims fixture_checkpoint_claims finds. */
size_t fixture_checkpoint_size(const struct fixture *f);
/* Lines in f's checkpoint.journal (0 if missing). */
size_t fixture_journal_lines(const struct fixture *f);

/* The bytes of f's checkpoint.json and checkpoint.journal, to put back
 * later: the state of the disk at a simulated crash. */
struct fixture_disk {
    char *snapshot, *journal;
};
void fixture_disk_save(const struct fixture *f, struct fixture_disk *d);
void fixture_disk_restore(const struct fixture *f, struct fixture_disk *d); /* frees d */

#endif
