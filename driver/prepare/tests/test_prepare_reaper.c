// SPDX-License-Identifier: Apache-2.0
/* Unit tests: the claim reaper removes queued files and directories after
 * the answer, and a prepare that takes them back (by claim uid or by
 * directory) is never undone by a removal queued before it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "atomic_file.h"
#include "driver/prepare/claim_reaper.h"
#include "prepare_fixture.h"
#include "common/tests/test_main.h"

#define QUEUED 300

/* <root>/<name>/gpus/metadata.json, as a prepare writes it. */
static void make_claim_dir(const char *root, const char *name)
{
    char dir[PATH_MAX], file[PATH_MAX];
    struct error err;
    snprintf(dir, sizeof(dir), "%s/%s/gpus", root, name);
    assert_int_equal(mkdir_p(dir, 0755, &err), 0);
    fixture_path(file, sizeof(file), dir, "metadata.json");
    assert_int_equal(atomic_write_file(file, "{}\n", 3, 0644, &err), 0);
}

static void test_queued_directories_go(void **state)
{
    struct fixture *f = *state;
    char root[PATH_MAX], name[64];
    struct error err;
    fixture_path(root, sizeof(root), f->plugin_dir, "dra-device-metadata");
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof(name), "default_c%d", i);
        make_claim_dir(root, name);
    }
    struct claim_reaper *r = claim_reaper_start(root, &err);
    assert_non_null(r);
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "default_c%d", i);
        claim_reaper_add(r, "uid-a", name, NULL, 0);
    }
    claim_reaper_add(r, "uid-b", "default_never-made", NULL, 0); /* absent: fine */
    /* Files first (a claim's metadata specs), with or without a directory. */
    char spec[PATH_MAX];
    fixture_path(spec, sizeof(spec), f->cdi_root, "x_metadata_spec.json");
    assert_int_equal(mkdir_p(f->cdi_root, 0755, &err), 0);
    assert_int_equal(atomic_write_file(spec, "{}", 2, 0644, &err), 0);
    const char *files[] = {spec, "/nonexistent/also-fine.json"};
    claim_reaper_add(r, "uid-c", NULL, files, 2);
    claim_reaper_kick(r);
    claim_reaper_wait_idle(r);
    assert_false(fixture_exists(spec));
    assert_int_equal(fixture_count(root), 1); /* default_c4 was not queued */
    /* What is still queued at stop is removed too. */
    claim_reaper_add(r, "uid-d", "default_c4", NULL, 0);
    claim_reaper_stop(r);
    assert_int_equal(fixture_count(root), 0);
}

/* Many removals ahead of it keep the last one queued while it is taken
 * back: the directory is removed at once, and the one written afterwards
 * (the new claim's) stays. */
static void test_reclaim_removes_now_and_never_later(void **state)
{
    struct fixture *f = *state;
    char root[PATH_MAX], name[64], file[PATH_MAX];
    struct error err;
    fixture_path(root, sizeof(root), f->plugin_dir, "dra-device-metadata");
    for (int i = 0; i < QUEUED; i++) {
        snprintf(name, sizeof(name), "default_old%d", i);
        make_claim_dir(root, name);
    }
    make_claim_dir(root, "default_c1");
    struct claim_reaper *r = claim_reaper_start(root, &err);
    assert_non_null(r);
    for (int i = 0; i < QUEUED; i++) {
        snprintf(name, sizeof(name), "default_old%d", i);
        claim_reaper_add(r, name, name, NULL, 0);
    }
    claim_reaper_add(r, "uid-1", "default_c1", NULL, 0);
    claim_reaper_add(r, "uid-2", "default_c1", NULL, 0); /* queued twice: both taken back */
    /* By directory: a claim of the same name with another uid. */
    assert_int_equal(claim_reaper_reclaim(r, "uid-3", "default_c1", &err), 0);
    snprintf(file, sizeof(file), "%s/default_c1/gpus/metadata.json", root);
    assert_false(fixture_exists(file));
    make_claim_dir(root, "default_c1"); /* the next claim of that name */
    claim_reaper_wait_idle(r);
    assert_true(fixture_exists(file));
    assert_int_equal(fixture_count(root), 1);
    /* Taking back a directory nobody queued does nothing. */
    assert_int_equal(claim_reaper_reclaim(r, "uid-3", "default_c1", &err), 0);
    assert_true(fixture_exists(file));
    claim_reaper_stop(r);
    assert_true(fixture_exists(file));
}

/* A claim's own files (its claim CDI spec; no metadata directory) are taken
 * back by its uid, behind many removals: removed at once, and the spec the
 * prepare writes afterwards stays.  Another claim's queued files stay
 * queued and go later. */
static void test_reclaim_by_uid(void **state)
{
    struct fixture *f = *state;
    char root[PATH_MAX], name[64], mine[PATH_MAX], other[PATH_MAX];
    struct error err;
    fixture_path(root, sizeof(root), f->plugin_dir, "dra-device-metadata");
    assert_int_equal(mkdir_p(f->cdi_root, 0755, &err), 0);
    for (int i = 0; i < QUEUED; i++) {
        snprintf(name, sizeof(name), "default_old%d", i);
        make_claim_dir(root, name);
    }
    fixture_path(mine, sizeof(mine), f->cdi_root, "k8s.gpu.example.com-gpu_uid-1.json");
    fixture_path(other, sizeof(other), f->cdi_root, "k8s.gpu.example.com-gpu_uid-2.json");
    assert_int_equal(atomic_write_file(mine, "{}", 2, 0644, &err), 0);
    assert_int_equal(atomic_write_file(other, "{}", 2, 0644, &err), 0);
    struct claim_reaper *r = claim_reaper_start(root, &err);
    assert_non_null(r);
    for (int i = 0; i < QUEUED; i++) {
        snprintf(name, sizeof(name), "default_old%d", i);
        claim_reaper_add(r, name, name, NULL, 0);
    }
    const char *m[] = {mine}, *o[] = {other};
    claim_reaper_add(r, "uid-1", NULL, m, 1);
    claim_reaper_add(r, "uid-2", NULL, o, 1);
    assert_int_equal(claim_reaper_reclaim(r, "uid-1", NULL, &err), 0);
    assert_false(fixture_exists(mine));
    assert_int_equal(atomic_write_file(mine, "{}", 2, 0644, &err), 0); /* the new prepare's */
    claim_reaper_wait_idle(r);
    assert_true(fixture_exists(mine));
    assert_false(fixture_exists(other));
    assert_int_equal(fixture_count(root), 0);
    claim_reaper_stop(r);
    assert_true(fixture_exists(mine));
}

TEST_MAIN_FIXTURE("prepare reaper", fixture_setup, fixture_teardown, test_queued_directories_go,
                  test_reclaim_removes_now_and_never_later, test_reclaim_by_uid)
