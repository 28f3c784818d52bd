// SPDX-License-Identifier: Apache-2.0
/* Unit tests: checkpoint encoding, corruption detection, and the recovery
 * rule at startup (corrupt or missing checkpoint rebuilt from the CDI specs,
 * a torn last journal line dropped, a bad one before it taken for
 * corruption, PrepareStarted rolled back, unowned files removed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "driver/prepare/checkpoint.h"
#include "driver/prepare/checkpoint_journal.h"
#include "prepare_fixture.h"
#include "common/tests/test_main.h"
#include "common/tests/test_must.h"
#include "common/tests/test_json.h"

#define SPEC1 "k8s.gpu.fakehw.example.com-gpu_" UID1 ".json"

static const char record1[] =
    "{\"uid\":\"" UID1 "\",\"namespace\":\"default\",\"name\":\"c1\","
    "\"state\":\"PrepareCompleted\",\"devices\":[{\"requestNames\":[\"gpus\"],"
    "\"poolName\":\"node-1\",\"deviceName\":\"gpu-0\",\"cdiDeviceIDs\":["
    "\"k8s.gpu.fakehw.example.com/gpu=" UID1 "-gpu-0\"],\"shareID\":\"" UID3 "\"}],"
    "\"cdiSpecs\":[\"" SPEC1 "\"],\"metadataDir\":\"default_c1\"}";

static json_t *claims_with(const char *uid, const char *record)
{
    json_t *claims = json_object();
    json_object_set_new(claims, uid, test_json(record));
    return claims;
}

/* claims as a checkpoint's text, which must encode. */
static char *encode(const json_t *claims)
{
    struct error err;
    return MUST(checkpoint_encode(claims, &err), err);
}

static void test_crc32(void **state)
{
    (void)state;
    /* The standard check value of CRC-32/IEEE. */
    assert_int_equal(checkpoint_crc32("123456789", 9), 0xcbf43926u);
    assert_int_equal(checkpoint_crc32("", 0), 0);
}

static void test_round_trip(void **state)
{
    (void)state;
    struct error err;
    json_t *claims = claims_with(UID1, record1);
    char *text = encode(claims);
    assert_non_null(strstr(text, "\"version\": 1"));
    assert_non_null(strstr(text, "\"checksum\": \"crc32:"));
    json_t *back = NULL;
    assert_int_equal(checkpoint_decode(text, strlen(text), FIXTURE_DRIVER, &back, &err), 0);
    assert_true(json_equal(back, claims));
    json_decref(back);
    free(text);
    /* An empty table is a valid checkpoint too. */
    json_t *empty = json_object();
    text = encode(empty);
    assert_int_equal(checkpoint_decode(text, strlen(text), FIXTURE_DRIVER, &back, &err), 0);
    assert_int_equal(json_object_size(back), 0);
    json_decref(back);
    json_decref(empty);
    free(text);
    json_decref(claims);
}

static void expect_corrupt(const char *text, const char *want)
{
    struct error err;
    json_t *claims = NULL;
    assert_int_equal(checkpoint_decode(text, strlen(text), FIXTURE_DRIVER, &claims, &err), -1);
    assert_null(claims);
    if (strstr(err.msg, want) == NULL)
        fail_msg("error \"%s\" does not contain \"%s\"", err.msg, want);
}

/* Encodes claims whose record1 got edited: old -> new, checksum made valid. */
static char *encode_edited(const char *old, const char *new_text)
{
    char rec[sizeof(record1) + 200];
    const char *at = strstr(record1, old);
    assert_non_null(at);
    snprintf(rec, sizeof(rec), "%.*s%s%s", (int)(at - record1), record1, new_text,
             at + strlen(old));
    json_t *claims = claims_with(UID1, rec);
    char *text = encode(claims);
    json_decref(claims);
    return text;
}

static void test_corruption(void **state)
{
    (void)state;
    json_t *claims = claims_with(UID1, record1);
    char *text = encode(claims);
    json_decref(claims);

    expect_corrupt("{\"version\": 1,", "not valid JSON: line 1 column 14");
    expect_corrupt("", "not valid JSON");
    /* Truncated at half: not JSON any more. */
    char *half = strndup(text, strlen(text) / 2);
    expect_corrupt(half, "not valid JSON");
    free(half);
    /* One character of the content changed: the checksum catches it. */
    char *flipped = strdup(text);
    *strstr(flipped, "gpu-0\"") = 'x';
    expect_corrupt(flipped, "checksum mismatch: the file says crc32:");
    free(flipped);
    char *version = strdup(text);
    memcpy(strstr(version, "\"version\": 1"), "\"version\": 7", 12);
    expect_corrupt(version, "version 7 is not supported (this driver reads 1)");
    free(version);
    expect_corrupt("{\"checksum\":\"crc32:00000000\",\"claims\":{}}", "no version number");
    expect_corrupt("{\"version\":1,\"checksum\":\"crc32:00000000\",\"claims\":{},\"x\":1}",
                   "want exactly the fields version, checksum");
    expect_corrupt("[1]", "not a JSON object");
    free(text);

    /* Well-formed files whose records are not: each is named. */
    struct {
        const char *old, *new_text, *want;
    } bad[] = {
        {"\"state\":\"PrepareCompleted\"", "\"state\":\"Done\"",
         "claim " UID1 ": state must be PrepareStarted or PrepareCompleted"},
        {"\"cdiSpecs\":[\"" SPEC1 "\"]", "\"cdiSpecs\":[\"../../etc/passwd\"]",
         "claim " UID1 ": cdiSpecs[0] is not a CDI spec name of this claim"},
        {"\"metadataDir\":\"default_c1\"", "\"metadataDir\":\"..\"",
         "claim " UID1 ": metadataDir must be \"default_c1\""},
        {"\"name\":\"c1\"", "\"name\":\"../c1\"", "claim " UID1 ": name \"../c1\""},
        {"\"deviceName\":\"gpu-0\"", "\"deviceName\":5", "devices[0].deviceName: not a string"},
        {"\"uid\":\"" UID1 "\"", "\"uid\":\"" UID2 "\"", "uid field does not match its key"},
        {"\"state\"", "\"colour\":1,\"state\"", "claim " UID1 ": unknown field \"colour\""},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *t = encode_edited(bad[i].old, bad[i].new_text);
        expect_corrupt(t, bad[i].want);
        free(t);
    }
}

/* ---- recovery at startup ---- */

#define TWO_REQUESTS                                                                               \
    "[" RESULT("gpus", "gpu-0") "," RESULT(                                                        \
        "gpus", "gpu-1") ","                                                                       \
                         "{\"request\":\"extra/small\",\"driver\":\"" FIXTURE_DRIVER               \
                         "\",\"pool\":\"" FIXTURE_NODE                                             \
                         "\",\"device\":\"gpu-2\",\"shareID\":\"" UID3 "\"}]"

static char *answer_text(const struct prepared_claim *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    for (size_t i = 0; i < c->n_devices; i++) {
        const struct prepared_device *d = &c->devices[i];
        fprintf(fp, "[%s %s %s share=%s", d->request_names[0], d->pool_name, d->device_name,
                d->share_id ? d->share_id : "-");
        for (size_t k = 0; k < d->n_cdi_device_ids; k++)
            fprintf(fp, " %s", d->cdi_device_ids[k]);
        fprintf(fp, "]");
    }
    fclose(fp);
    return buf;
}

static char *prepare_text(struct prepare_state *st, const char *name, const char *uid)
{
    struct prepared_claim out;
    struct error err;
    if (prepare_claim(st, "default", name, uid, &out, &err) < 0)
        fail_msg("prepare_claim: %s", err.msg);
    char *t = answer_text(&out);
    prepared_claim_free(&out);
    return t;
}

/* The answers of c1 and c2 when they were first prepared, for comparison
 * after recovery. */
struct answers {
    char *c1, *c2;
};

static void answers_free(struct answers *a)
{
    free(a->c1);
    free(a->c2);
}

/* The end of a test: st closed, the answers freed. */
static void done(struct prepare_state *st, struct answers *a)
{
    prepare_state_close(st);
    answers_free(a);
}

/* Puts c1 (two requests) and c2 and prepares both on a new state, which it
 * returns. */
static struct prepare_state *open_two(struct fixture *f, struct answers *a)
{
    fixture_put_claim(f, fixture_claim("default", "c1", UID1, TWO_REQUESTS, NULL, NULL));
    fixture_put_claim(
        f, fixture_claim("default", "c2", UID2, "[" RESULT("gpus", "gpu-3") "]", NULL, NULL));
    struct prepare_state *st = fixture_open_state(f);
    a->c1 = prepare_text(st, "c1", UID1);
    a->c2 = prepare_text(st, "c2", UID2);
    return st;
}

/* c1 and c2 prepared, and the state closed. */
static struct answers prepare_two(struct fixture *f)
{
    struct answers a;
    prepare_state_close(open_two(f, &a));
    return a;
}

/* Both claims come back with the answers they had, without asking the
 * API. */
static void expect_both(struct fixture *f, struct prepare_state *st, const struct answers *a)
{
    int fetches = fixture_fetches(f);
    char *b1 = prepare_text(st, "c1", UID1), *b2 = prepare_text(st, "c2", UID2);
    assert_string_equal(b1, a->c1);
    assert_string_equal(b2, a->c2);
    assert_int_equal(fixture_fetches(f), fetches);
    free(b1);
    free(b2);
}

/* c1 comes back with the answer it had. */
static void expect_c1(struct prepare_state *st, const char *a1)
{
    char *b1 = prepare_text(st, "c1", UID1);
    assert_string_equal(b1, a1);
    free(b1);
}

static char *checkpoint_path(const struct fixture *f, char *buf, size_t size)
{
    fixture_path(buf, size, f->plugin_dir, CHECKPOINT_FILE);
    return buf;
}

/* Entries of f's plugin dir whose names start with prefix. */
static size_t count_prefixed(const struct fixture *f, const char *prefix)
{
    DIR *d = opendir(f->plugin_dir);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* How many damaged snapshots and journals were kept aside. */
static void expect_aside(const struct fixture *f, size_t snapshots, size_t journals)
{
    size_t s = count_prefixed(f, "checkpoint.json.corrupt-");
    size_t j = count_prefixed(f, "checkpoint.journal.corrupt-");
    if (s != snapshots || j != journals)
        fail_msg("%zu snapshots and %zu journals kept aside, not %zu and %zu", s, j, snapshots,
                 journals);
}

/* c1 and c2 unprepared, which must work. */
static void unprepare_both(struct prepare_state *st)
{
    struct error err;
    if (unprepare_claim(st, "default", "c1", UID1, &err) != 0 ||
        unprepare_claim(st, "default", "c2", UID2, &err) != 0)
        fail_msg("unprepare_claim: %s", err.msg);
}

static size_t count_corrupt_copies(const struct fixture *f)
{
    return count_prefixed(f, "checkpoint.json.corrupt-");
}

/* Damages the checkpoint in one of several ways. */
static void damage(const struct fixture *f, int how)
{
    char path[PATH_MAX];
    char *text = fixture_read(checkpoint_path(f, path, sizeof(path)));
    struct error err;
    assert_non_null(text);
    switch (how) {
    case 0: /* truncated */
        text[strlen(text) / 3] = '\0';
        break;
    case 1: /* bit rot in the content */
        *strstr(text, "gpu-3\"") = 'G';
        break;
    case 2: /* a newer format */
        memcpy(strstr(text, "\"version\": 1"), "\"version\": 2", 12);
        break;
    case 3: /* not JSON at all */
        snprintf(text, strlen(text), "garbage");
        break;
    case 4: /* gone */
        assert_int_equal(unlink(path), 0);
        free(text);
        return;
    }
    assert_int_equal(atomic_write_file(path, text, strlen(text), 0600, &err), 0);
    free(text);
}

static void test_recovery_from_corruption(void **state)
{
    struct fixture *f = *state;
    for (int how = 0; how < 5; how++) {
        struct answers a = prepare_two(f);
        int fetches = fixture_fetches(f);
        damage(f, how);
        struct prepare_state *st = fixture_open_state(f);
        /* The damaged file is kept aside (not for a missing one). */
        assert_int_equal(count_corrupt_copies(f), how < 4 ? (size_t)how + 1 : 4);
        /* Both claims survive with the same answers, without asking the API. */
        expect_both(f, st, &a);
        assert_int_equal(fixture_fetches(f), fetches);
        assert_int_equal(fixture_count(f->cdi_root), 5); /* 2 claim + 3 metadata specs */
        /* The rebuilt table is saved: a restart needs no recovery. */
        prepare_state_close(st);
        st = fixture_open_state(f);
        assert_int_equal(count_corrupt_copies(f), how < 4 ? (size_t)how + 1 : 4);
        /* Unprepare still cleans up everything. */
        unprepare_both(st);
        fixture_assert_no_files(f, st);
        done(st, &a);
    }
}

/* A claim the checkpoint holds as PrepareStarted is rolled back at startup. */
static void test_started_rolled_back(void **state)
{
    struct fixture *f = *state;
    struct answers a = prepare_two(f);
    char path[PATH_MAX];
    struct error err;
    json_t *claims = NULL;
    int corrupt;
    assert_int_equal(checkpoint_load(checkpoint_path(f, path, sizeof(path)), FIXTURE_DRIVER,
                                     &claims, &corrupt, &err),
                     0);
    json_object_set_new(json_object_get(claims, UID1), "state", json_string(CHECKPOINT_STARTED));
    char *text = checkpoint_encode(claims, &err);
    assert_int_equal(checkpoint_write(path, text, &err), 0);
    free(text);
    json_decref(claims);
    /* The layout of a plugin from before the journal: one file. */
    char journal[PATH_MAX];
    fixture_path(journal, sizeof(journal), f->plugin_dir, CHECKPOINT_JOURNAL_FILE);
    assert_int_equal(unlink(journal), 0);

    struct prepare_state *st = fixture_open_state(f);
    char spec[PATH_MAX], md[PATH_MAX];
    fixture_spec_path(f, UID1, spec, sizeof(spec));
    snprintf(md, sizeof(md), "%s/dra-device-metadata/default_c1", f->plugin_dir);
    assert_false(fixture_exists(spec));
    assert_false(fixture_exists(md));
    assert_int_equal(fixture_count(f->cdi_root), 2); /* c2's specs stay */
    assert_int_equal(count_corrupt_copies(f), 0);
    assert_true(fixture_exists(journal));
    /* c1 is prepared afresh; c2 is answered from the checkpoint. */
    int fetches = fixture_fetches(f);
    char *b1 = prepare_text(st, "c1", UID1), *b2 = prepare_text(st, "c2", UID2);
    assert_int_equal(fixture_fetches(f), fetches + 1);
    assert_string_equal(b1, a.c1);
    assert_string_equal(b2, a.c2);
    done(st, &a);
    free(b1);
    free(b2);
}

/* Files of this driver that no claim owns are removed at startup; other
 * drivers' files are left alone. */
static void test_sweep(void **state)
{
    struct fixture *f = *state;
    struct answers a = prepare_two(f);
    struct error err;
    char path[PATH_MAX];
    const char *orphans[] = {
        "k8s.gpu.fakehw.example.com-gpu_" UID3 ".json",
        FIXTURE_DRIVER "_metadata_" UID3 "_gpus.json",
        ".k8s.gpu.fakehw.example.com-gpu_" UID1 ".json.tmp.Ab12Cd",
        /* A prepared claim's uid, but a spec its record does not list. */
        FIXTURE_DRIVER "_metadata_" UID1 "_ghost.json",
    };
    const char *foreign[] = {"k8s.gpu.nvidia.com-gpu_" UID3 ".json", "vendor.yaml"};
    for (size_t i = 0; i < 4; i++) {
        fixture_path(path, sizeof(path), f->cdi_root, orphans[i]);
        assert_int_equal(atomic_write_file(path, "{}", 2, 0644, &err), 0);
    }
    for (size_t i = 0; i < 2; i++) {
        fixture_path(path, sizeof(path), f->cdi_root, foreign[i]);
        assert_int_equal(atomic_write_file(path, "{}", 2, 0644, &err), 0);
    }
    snprintf(path, sizeof(path), "%s/dra-device-metadata/default_gone/gpus", f->plugin_dir);
    assert_int_equal(mkdir_p(path, 0755, &err), 0);
    fixture_path(path, sizeof(path), f->plugin_dir, ".checkpoint.json.tmp.XyZ123");
    assert_int_equal(atomic_write_file(path, "{", 1, 0600, &err), 0);

    struct prepare_state *st = fixture_open_state(f);
    for (size_t i = 0; i < 4; i++) {
        fixture_path(path, sizeof(path), f->cdi_root, orphans[i]);
        assert_false(fixture_exists(path));
    }
    for (size_t i = 0; i < 2; i++) {
        fixture_path(path, sizeof(path), f->cdi_root, foreign[i]);
        assert_true(fixture_exists(path));
    }
    snprintf(path, sizeof(path), "%s/dra-device-metadata/default_gone", f->plugin_dir);
    assert_false(fixture_exists(path));
    fixture_path(path, sizeof(path), f->plugin_dir, ".checkpoint.json.tmp.XyZ123");
    assert_false(fixture_exists(path));
    snprintf(path, sizeof(path), "%s/dra-device-metadata/default_c1/gpus/metadata.json",
             f->plugin_dir);
    assert_true(fixture_exists(path));
    expect_c1(st, a.c1);
    done(st, &a);
}

/* Rebuilding from specs: a claim spec this driver cannot read is removed
 * (no runtime could use it either); the readable ones are kept. */
static void test_rebuild_skips_unreadable_spec(void **state)
{
    struct fixture *f = *state;
    struct answers a = prepare_two(f);
    char path[PATH_MAX], bad[PATH_MAX];
    struct error err;
    fixture_spec_path(f, UID3, bad, sizeof(bad));
    assert_int_equal(atomic_write_file(bad, "{\"cdiVersion\":", 14, 0644, &err), 0);
    assert_int_equal(unlink(checkpoint_path(f, path, sizeof(path))), 0);
    struct prepare_state *st = fixture_open_state(f);
    assert_false(fixture_exists(bad));
    expect_c1(st, a.c1);
    done(st, &a);
}

/* An unreadable checkpoint (I/O error, not bad content) stops the start. */
static void test_unreadable_checkpoint_fails(void **state)
{
    struct fixture *f = *state;
    char path[PATH_MAX];
    struct error err;
    assert_int_equal(mkdir_p(checkpoint_path(f, path, sizeof(path)), 0755, &err), 0);
    assert_null(prepare_state_open(&f->cfg, &err));
    assert_non_null(strstr(err.msg, "checkpoint.json"));
}

/* ---- the journal at startup ---- */

/* Prepares c1 (two requests) and c2, and leaves the disk as a crash then
 * would: the snapshot from before, and one journal line per claim. */
static struct answers crash_after_two(struct fixture *f)
{
    struct answers a;
    struct prepare_state *st = open_two(f, &a);
    struct fixture_disk disk;
    fixture_disk_save(f, &disk);
    prepare_state_close(st);
    fixture_disk_restore(f, &disk);
    assert_int_equal(fixture_journal_lines(f), 2);
    return a;
}

static char *journal_path(const struct fixture *f, char *buf, size_t size)
{
    fixture_path(buf, size, f->plugin_dir, CHECKPOINT_JOURNAL_FILE);
    return buf;
}

static void append_bytes(const char *path, const char *bytes, size_t n)
{
    FILE *fp = fopen(path, "a");
    assert_non_null(fp);
    assert_int_equal(fwrite(bytes, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

/* The last line was being appended when the plugin died (its unprepare of
 * c1 was never answered): it is dropped, the rest replayed, nothing is
 * taken for corruption, and the journal starts empty. */
static void test_torn_journal_line(void **state)
{
    struct fixture *f = *state;
    for (int how = 0; how < 2; how++) {
        char path[PATH_MAX];
        struct answers a = crash_after_two(f);
        struct error err;
        size_t len;
        char *line = checkpoint_journal_line(UID1, NULL, &len, &err);
        if (how == 0) {
            append_bytes(journal_path(f, path, sizeof(path)), line, len / 2); /* no newline */
        } else {
            line[len - 3] ^= 0x20; /* complete, checksum wrong */
            append_bytes(journal_path(f, path, sizeof(path)), line, len);
        }
        free(line);
        struct prepare_state *st = fixture_open_state(f);
        expect_aside(f, 0, 0);
        assert_int_equal(fixture_journal_lines(f), 0);
        assert_int_equal(fixture_checkpoint_size(f), 2);
        expect_both(f, st, &a);
        unprepare_both(st);
        prepare_wait_settled(st); /* the metadata specs follow the answer */
        assert_int_equal(fixture_count(f->cdi_root), 0);
        done(st, &a);
    }
}

/* A bad line before the last is not a torn append: the checkpoint is
 * corrupt.  Both files go aside and the claims are rebuilt from the specs. */
static void test_bad_journal_line_is_corruption(void **state)
{
    struct fixture *f = *state;
    char path[PATH_MAX];
    struct answers a = crash_after_two(f);
    char *text = fixture_read(journal_path(f, path, sizeof(path)));
    *strstr(text, "\"gpu-0\"") = 'X'; /* in line 1 */
    struct error err;
    assert_int_equal(atomic_write_file(path, text, strlen(text), 0600, &err), 0);
    int fetches = fixture_fetches(f);
    struct prepare_state *st = fixture_open_state(f);
    expect_aside(f, 1, 1);
    /* The damaged journal is kept as it was. */
    DIR *d = opendir(f->plugin_dir);
    struct dirent *e;
    char aside[PATH_MAX] = "";
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "checkpoint.journal.corrupt-", 27) == 0)
            fixture_path(aside, sizeof(aside), f->plugin_dir, e->d_name);
    closedir(d);
    char *kept = fixture_read(aside);
    assert_string_equal(kept, text);
    free(kept);
    free(text);
    expect_both(f, st, &a);
    assert_int_equal(fixture_fetches(f), fetches);
    assert_int_equal(fixture_count(f->cdi_root), 5);
    done(st, &a);
}

/* A journal without its snapshot cannot be applied: corrupt too. */
static void test_journal_without_snapshot(void **state)
{
    struct fixture *f = *state;
    struct answers a = crash_after_two(f);
    char path[PATH_MAX];
    assert_int_equal(unlink(checkpoint_path(f, path, sizeof(path))), 0);
    struct prepare_state *st = fixture_open_state(f);
    expect_aside(f, 0, 1);
    expect_both(f, st, &a);
    done(st, &a);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)
TEST_MAIN_LIST("prepare checkpoint", cmocka_unit_test(test_crc32),
               cmocka_unit_test(test_round_trip), cmocka_unit_test(test_corruption),
               T(test_recovery_from_corruption), T(test_started_rolled_back), T(test_sweep),
               T(test_rebuild_skips_unreadable_spec), T(test_unreadable_checkpoint_fails),
               T(test_torn_journal_line), T(test_bad_journal_line_is_corruption),
               T(test_journal_without_snapshot))
