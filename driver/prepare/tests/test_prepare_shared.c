// SPDX-License-Identifier: Apache-2.0
/* Unit tests of the prepare state shared by two plugin instances during a
 * rolling update (prepare_config.shared): two states on one plugin dir
 * stand for the two processes.  A claim prepared through one is known to
 * the other, an unprepare through the other is seen by the first, writes
 * of both, interleaved or in parallel, lose no record, and every call waits
 * for serialize.lock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver/prepare/checkpoint_journal.h"
#include "driver/prepare/prepare.h"
#include "driver/prepare/serialize_lock.h"
#include "prepare_fixture.h"
#include "common/tests/test_main.h"

#define MANY 24 /* claims of the parallel test */

static struct prepare_state *open_shared(struct fixture *f)
{
    struct error err;
    f->cfg.shared = true;
    struct prepare_state *st = prepare_state_open(&f->cfg, &err);
    if (st == NULL)
        fail_msg("prepare_state_open: %s", err.msg);
    return st;
}

static void put_claim(struct fixture *f, const char *name, const char *uid, const char *dev)
{
    char results[256];
    snprintf(results, sizeof(results), "[" RESULT("gpus", "%s") "]", dev);
    fixture_put_claim(f, fixture_claim("default", name, uid, results, NULL, NULL));
}

static void must_prepare(struct prepare_state *st, const char *name, const char *uid)
{
    struct error err;
    struct prepared_claim out;
    if (prepare_claim(st, "default", name, uid, &out, &err) < 0)
        fail_msg("prepare_claim %s: %s", name, err.msg);
    assert_int_equal(out.n_devices, 1);
    prepared_claim_free(&out);
}

static void must_unprepare(struct prepare_state *st, const char *name, const char *uid)
{
    struct error err;
    if (unprepare_claim(st, "default", name, uid, &err) < 0)
        fail_msg("unprepare_claim %s: %s", name, err.msg);
}

/* The claims st holds in memory, as "uid," in the order it keeps them. */
static void collect_uid(void *ctx, const struct claim_ref *claim, const char *pool,
                        const char *device, const char *share_id)
{
    (void)pool, (void)device, (void)share_id;
    char *buf = ctx;
    strcat(buf, claim->uid);
    strcat(buf, ",");
}

static void assert_held(struct prepare_state *st, const char *want)
{
    char got[1024] = "";
    prepare_for_each_device(st, collect_uid, got);
    assert_string_equal(got, want);
}

/* The claims on disk are exactly uids[0..n). */
static void assert_on_disk(struct fixture *f, const char *const *uids, size_t n)
{
    json_t *claims = fixture_checkpoint_claims(f);
    assert_int_equal(json_object_size(claims), n);
    for (size_t i = 0; i < n; i++)
        if (json_object_get(claims, uids[i]) == NULL)
            fail_msg("claim %s is not in the checkpoint", uids[i]);
    json_decref(claims);
}

static void test_prepare_on_a_unprepare_on_b(void **state)
{
    struct fixture *f = *state;
    put_claim(f, "c1", UID1, "gpu-0");
    put_claim(f, "c2", UID2, "gpu-1");
    struct prepare_state *a = open_shared(f), *b = open_shared(f);
    char spec[PATH_MAX];
    fixture_spec_path(f, UID1, spec, sizeof(spec));

    must_prepare(a, "c1", UID1);
    assert_true(fixture_exists(spec));
    /* b answers from the checkpoint a wrote: no second fetch. */
    must_prepare(b, "c1", UID1);
    assert_int_equal(fixture_fetches(f), 1);
    assert_held(b, UID1 ",");

    /* b knows the claim, so its unprepare removes its files, before it
     * answers (a could prepare it again at once). */
    must_unprepare(b, "c1", UID1);
    assert_false(fixture_exists(spec));
    assert_on_disk(f, NULL, 0);

    /* a's next call sees that the claim is gone. */
    must_prepare(a, "c2", UID2);
    assert_held(a, UID2 ",");
    const char *left[] = {UID2};
    assert_on_disk(f, left, 1);

    /* Closing compacts each time with what is on disk, not with what the
     * closing instance last saw. */
    prepare_state_close(a);
    assert_on_disk(f, left, 1);
    must_unprepare(b, "c2", UID2);
    prepare_state_close(b);
    assert_on_disk(f, NULL, 0);
    assert_int_equal(fixture_count(f->cdi_root), 0);
}

/* Alternating writes with compactions on both sides (a bound of 2 lines):
 * neither instance's snapshot drops the other's claims. */
static void test_interleaved_writes(void **state)
{
    struct fixture *f = *state;
    f->cfg.journal_max_lines = 2;
    const char *names[] = {"c1", "c2", "c3"}, *uids[] = {UID1, UID2, UID3};
    for (int i = 0; i < 3; i++)
        put_claim(f, names[i], uids[i], "gpu-0");
    struct prepare_state *a = open_shared(f), *b = open_shared(f);
    must_prepare(a, "c1", UID1);
    must_prepare(b, "c2", UID2);
    must_prepare(a, "c3", UID3);
    assert_on_disk(f, uids, 3);
    must_unprepare(b, "c1", UID1);
    must_prepare(b, "c3", UID3); /* from the checkpoint */
    must_unprepare(a, "c2", UID2);
    const char *left[] = {UID3};
    assert_on_disk(f, left, 1);
    assert_int_equal(fixture_fetches(f), 3);
    prepare_state_close(b);
    prepare_state_close(a);
    assert_on_disk(f, left, 1);
}

struct runner {
    struct fixture *f;
    struct prepare_state *prep, *unprep;
    int first; /* prepares claims first, first + 2, ...; unprepares the odd ones of those */
    char uids[MANY][40];
    char msg[256];
};

static void *run(void *arg)
{
    struct runner *r = arg;
    for (int i = r->first; i < MANY; i += 2) {
        struct error err;
        struct prepared_claim out;
        char name[16];
        snprintf(name, sizeof(name), "c%d", i);
        if (prepare_claim(r->prep, "default", name, r->uids[i], &out, &err) < 0) {
            snprintf(r->msg, sizeof(r->msg), "prepare %s: %s", name, err.msg);
            return NULL;
        }
        prepared_claim_free(&out);
        if (i % 4 >= 2 && unprepare_claim(r->unprep, "default", name, r->uids[i], &err) < 0) {
            snprintf(r->msg, sizeof(r->msg), "unprepare %s: %s", name, err.msg);
            return NULL;
        }
    }
    return NULL;
}

/* Two threads, one per instance, each preparing through its own and
 * unpreparing every other claim through the other instance, with a small
 * compaction bound: the checkpoint ends with exactly the claims left. */
static void test_parallel_instances(void **state)
{
    struct fixture *f = *state;
    f->cfg.journal_max_lines = 3;
    struct runner r[2] = {{.f = f, .first = 0}, {.f = f, .first = 1}};
    for (int i = 0; i < MANY; i++) {
        char name[16];
        snprintf(name, sizeof(name), "c%d", i);
        snprintf(r[0].uids[i], sizeof(r[0].uids[i]), "00000000-0000-4000-8000-%012x", i);
        memcpy(r[1].uids[i], r[0].uids[i], sizeof(r[1].uids[i]));
        put_claim(f, name, r[0].uids[i], "gpu-1");
    }
    struct prepare_state *a = open_shared(f), *b = open_shared(f);
    r[0].prep = r[1].unprep = a;
    r[1].prep = r[0].unprep = b;
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, run, &r[i]), 0);
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        if (r[i].msg[0])
            fail_msg("%s", r[i].msg);
    }
    const char *left[MANY];
    size_t n = 0;
    for (int i = 0; i < MANY; i++)
        if (i % 4 < 2)
            left[n++] = r[0].uids[i];
    assert_on_disk(f, left, n);
    prepare_state_close(a);
    prepare_state_close(b);
    assert_on_disk(f, left, n);
    assert_int_equal(fixture_count(f->cdi_root), 2 * n); /* claim and metadata spec */
}

struct waiter {
    struct prepare_state *st;
    volatile int done;
};

static void *prepare_c1(void *arg)
{
    struct waiter *w = arg;
    must_prepare(w->st, "c1", UID1);
    w->done = 1;
    return NULL;
}

/* A call waits while another process holds serialize.lock. */
static void test_waits_for_the_lock(void **state)
{
    struct fixture *f = *state;
    put_claim(f, "c1", UID1, "gpu-0");
    struct prepare_state *a = open_shared(f);
    char path[PATH_MAX];
    fixture_path(path, sizeof(path), f->plugin_dir, SERIALIZE_LOCK_FILE);
    struct error err;
    int held = serialize_lock_acquire(path, &err);
    assert_true(held >= 0);
    struct waiter w = {a, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, prepare_c1, &w), 0);
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    assert_int_equal(w.done, 0);
    assert_int_equal(fixture_fetches(f), 0);
    serialize_lock_release(held);
    pthread_join(t, NULL);
    assert_int_equal(w.done, 1);
    prepare_state_close(a);
}

/* The other instance died in the middle of an append: the torn line is
 * dropped when loading, and the next append does not land behind it. */
static void test_torn_line_of_the_other(void **state)
{
    struct fixture *f = *state;
    put_claim(f, "c1", UID1, "gpu-0");
    put_claim(f, "c2", UID2, "gpu-1");
    struct prepare_state *a = open_shared(f);
    must_prepare(a, "c1", UID1);
    char path[PATH_MAX];
    fixture_path(path, sizeof(path), f->plugin_dir, CHECKPOINT_JOURNAL_FILE);
    int fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "crc32:0000", 10), 10);
    close(fd);
    must_prepare(a, "c2", UID2);
    const char *both[] = {UID1, UID2};
    assert_on_disk(f, both, 2); /* fails on a bad line in the middle */
    prepare_state_close(a);
}

/* Without the option the file is never made, as before. */
static void test_not_shared(void **state)
{
    struct fixture *f = *state;
    put_claim(f, "c1", UID1, "gpu-0");
    struct error err;
    struct prepare_state *a = prepare_state_open(&f->cfg, &err);
    assert_non_null(a);
    must_prepare(a, "c1", UID1);
    prepare_state_close(a);
    char path[PATH_MAX];
    fixture_path(path, sizeof(path), f->plugin_dir, SERIALIZE_LOCK_FILE);
    assert_false(fixture_exists(path));
}

TEST_MAIN_FIXTURE("prepare shared state dir", fixture_setup, fixture_teardown,
                  test_prepare_on_a_unprepare_on_b, test_interleaved_writes,
                  test_parallel_instances, test_waits_for_the_lock, test_torn_line_of_the_other,
                  test_not_shared)
