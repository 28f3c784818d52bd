// SPDX-License-Identifier: Apache-2.0
/* Unit tests of the prepare flow on temp dirs: answers and files, idempotence,
 * restart, unprepare, validation before any path is built, rollback on
 * failure, the checkpoint writes (one journal line per change), files found
 * missing on a repeated prepare, what a crash leaves behind, per-claim
 * serialisation and group commit across threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "driver/prepare/checkpoint.h"
#include "driver/prepare/claim_files.h"
#include "prepare_fixture.h"
#include "common/tests/test_main.h"

#define CLAIM_KIND          "k8s.gpu.fakehw.example.com/gpu"
#define META_KIND           "gpu.fakehw.example.com/metadata"
#define META_SPEC(uid, req) FIXTURE_DRIVER "_metadata_" uid "_" req ".json"

/* gpus: gpu-0, gpu-1; extra/small: gpu-2 with a shareID; plus a result of
 * another driver, which is not ours to prepare. */
#define THREE_RESULTS                                                                              \
    "[" RESULT("gpus", "gpu-0") "," RESULT(                                                        \
        "gpus", "gpu-1") ","                                                                       \
                         "{\"request\":\"other\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"node-"   \
                         "1\",\"device\":\"g0\"},"                                                 \
                         "{\"request\":\"extra/small\",\"driver\":\"" FIXTURE_DRIVER               \
                         "\",\"pool\":\"" FIXTURE_NODE                                             \
                         "\",\"device\":\"gpu-2\",\"shareID\":\"" UID3 "\"}]"

static void must_prepare(struct prepare_state *st, const char *ns, const char *name,
                         const char *uid, struct prepared_claim *out)
{
    struct error err;
    if (prepare_claim(st, ns, name, uid, out, &err) < 0)
        fail_msg("prepare_claim: %s", err.msg);
}

static void assert_strings(char **got, size_t n, const char *const *want, size_t m)
{
    assert_int_equal(n, m);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(got[i], want[i]);
}

static void assert_same_answer(const struct prepared_claim *a, const struct prepared_claim *b)
{
    assert_int_equal(a->n_devices, b->n_devices);
    for (size_t i = 0; i < a->n_devices; i++) {
        const struct prepared_device *x = &a->devices[i], *y = &b->devices[i];
        assert_strings(x->request_names, x->n_request_names, (const char *const *)y->request_names,
                       y->n_request_names);
        assert_strings(x->cdi_device_ids, x->n_cdi_device_ids,
                       (const char *const *)y->cdi_device_ids, y->n_cdi_device_ids);
        assert_string_equal(x->pool_name, y->pool_name);
        assert_string_equal(x->device_name, y->device_name);
        if (x->share_id || y->share_id)
            assert_string_equal(x->share_id ? x->share_id : "", y->share_id ? y->share_id : "");
    }
}

/* Prepares a claim of ns and drops the answer. */
static void prepare_only(struct prepare_state *st, const char *ns, const char *name,
                         const char *uid)
{
    struct prepared_claim out;
    must_prepare(st, ns, name, uid, &out);
    prepared_claim_free(&out);
}

/* A claim of "default" prepares again with the answer it had before. */
static void expect_same_answer(struct prepare_state *st, const char *name, const char *uid,
                               const struct prepared_claim *before)
{
    struct prepared_claim again;
    must_prepare(st, "default", name, uid, &again);
    assert_same_answer(before, &again);
    prepared_claim_free(&again);
}

static void check_three(const struct prepared_claim *out)
{
    assert_int_equal(out->n_devices, 3);
    const char *ids0[] = {CLAIM_KIND "=" UID1 "-gpu-0", META_KIND "=" UID1 "_gpus"};
    const char *ids1[] = {CLAIM_KIND "=" UID1 "-gpu-1"};
    const char *ids2[] = {CLAIM_KIND "=" UID1 "-gpu-2", META_KIND "=" UID1 "_extra"};
    const char *gpus[] = {"gpus"}, *extra[] = {"extra"};
    assert_strings(out->devices[0].request_names, out->devices[0].n_request_names, gpus, 1);
    assert_strings(out->devices[0].cdi_device_ids, out->devices[0].n_cdi_device_ids, ids0, 2);
    assert_string_equal(out->devices[0].pool_name, FIXTURE_NODE);
    assert_string_equal(out->devices[0].device_name, "gpu-0");
    assert_null(out->devices[0].share_id);
    assert_strings(out->devices[1].cdi_device_ids, out->devices[1].n_cdi_device_ids, ids1, 1);
    assert_string_equal(out->devices[1].device_name, "gpu-1");
    assert_strings(out->devices[2].request_names, out->devices[2].n_request_names, extra, 1);
    assert_strings(out->devices[2].cdi_device_ids, out->devices[2].n_cdi_device_ids, ids2, 2);
    assert_string_equal(out->devices[2].share_id, UID3);
}

/* Puts c1 (THREE_RESULTS) into the API and opens a prepare state. */
static struct prepare_state *open_with_c1(struct fixture *f)
{
    fixture_put_claim(f, fixture_claim("default", "c1", UID1, THREE_RESULTS, NULL, NULL));
    return fixture_open_state(f);
}

/* c1 prepares, with the answer check_three wants. */
static void expect_c1_prepares(struct prepare_state *st)
{
    struct prepared_claim out;
    must_prepare(st, "default", "c1", UID1, &out);
    check_three(&out);
    prepared_claim_free(&out);
}

static void test_prepare_writes(void **state)
{
    struct fixture *f = *state;
    struct prepare_state *st = open_with_c1(f);
    struct prepared_claim out;
    must_prepare(st, "default", "c1", UID1, &out);
    check_three(&out);

    char path[PATH_MAX], want[PATH_MAX];
    fixture_spec_path(f, UID1, path, sizeof(path));
    assert_true(fixture_exists(path));
    assert_int_equal(fixture_count(f->cdi_root), 3); /* claim spec + 2 metadata specs */
    fixture_path(path, sizeof(path), f->cdi_root, META_SPEC(UID1, "extra"));
    json_t *md = json_load_file(path, 0, NULL);
    assert_non_null(md);
    json_t *mount = json_array_get(
        json_object_get(
            json_object_get(json_array_get(json_object_get(md, "devices"), 0), "containerEdits"),
            "mounts"),
        0);
    snprintf(want, sizeof(want), "%s/dra-device-metadata/default_c1/extra/metadata.json",
             f->plugin_dir);
    assert_string_equal(json_string_value(json_object_get(mount, "hostPath")), want);
    assert_string_equal(json_string_value(json_object_get(mount, "containerPath")),
                        "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/c1/extra/"
                        "gpu.fakehw.example.com-metadata.json");
    json_decref(md);
    /* The metadata file records the request as allocated, with the device's attributes. */
    json_t *meta = json_load_file(want, JSON_DISABLE_EOF_CHECK, NULL);
    assert_non_null(meta);
    json_t *req = json_array_get(json_object_get(meta, "requests"), 0);
    assert_string_equal(json_string_value(json_object_get(req, "name")), "extra/small");
    json_t *dev = json_array_get(json_object_get(req, "devices"), 0);
    assert_string_equal(json_string_value(json_object_get(dev, "name")), "gpu-2");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(dev, "attributes"), "uuid"), "string")),
                        f->devs[2].uuid);
    json_decref(meta);

    /* The checkpoint holds the claim as completed, in one journal line. */
    json_t *claims = fixture_checkpoint_claims(f);
    json_t *rec = json_object_get(claims, UID1);
    assert_non_null(rec);
    assert_string_equal(json_string_value(json_object_get(rec, "state")), CHECKPOINT_COMPLETED);
    assert_int_equal(json_array_size(json_object_get(rec, "cdiSpecs")), 3);
    assert_string_equal(json_string_value(json_object_get(rec, "metadataDir")), "default_c1");
    json_decref(claims);
    assert_int_equal(fixture_journal_lines(f), 1);
    prepared_claim_free(&out);
    prepare_state_close(st);
}

/* The longest legal names: a 63-character namespace and a 253-character
 * claim name make a 317-byte "<ns>_<name>", over the 255-byte limit of one
 * directory name; the directory is then cut and hashed (claim_files.h). */
static void test_longest_names_with_metadata(void **state)
{
    struct fixture *f = *state;
    char ns[64], name[254];
    memset(ns, 'n', 63);
    ns[63] = '\0';
    memset(name, 'a', 253);
    for (int i = 63; i < 253; i += 64)
        name[i] = '.'; /* labels of at most 63 characters */
    name[253] = '\0';
    fixture_put_claim(f, fixture_claim(ns, name, UID1, THREE_RESULTS, NULL, NULL));
    struct prepare_state *st = fixture_open_state(f);
    struct prepared_claim out;
    must_prepare(st, ns, name, UID1, &out);
    check_three(&out);
    char dirname[300], path[PATH_MAX];
    struct error err;
    assert_int_equal(claim_metadata_dir_name(ns, name, dirname, sizeof(dirname), &err), 0);
    assert_int_equal(strlen(dirname), 255);
    assert_memory_equal(dirname, ns, 63);
    assert_int_equal(strncmp(dirname + 64, name, 255 - 64 - 17), 0);
    assert_int_equal(dirname[255 - 17], '-');
    snprintf(path, sizeof(path), "%s/dra-device-metadata/%s/extra/metadata.json", f->plugin_dir,
             dirname);
    assert_true(fixture_exists(path));
    /* Another name with the same first 174 characters gets its own directory. */
    char other[254], dir2[300];
    memcpy(other, name, sizeof(other));
    other[252] = 'b';
    assert_int_equal(claim_metadata_dir_name(ns, other, dir2, sizeof(dir2), &err), 0);
    assert_string_not_equal(dirname, dir2);
    /* 255 bytes exactly (a 1-character namespace): the upstream helper's
     * "<ns>_<name>". */
    assert_int_equal(claim_metadata_dir_name("x", name, dir2, sizeof(dir2), &err), 0);
    assert_int_equal(strncmp(dir2, "x_", 2), 0);
    assert_string_equal(dir2 + 2, name);
    /* After a restart the checkpoint still matches; unprepare removes it all. */
    prepared_claim_free(&out);
    prepare_state_close(st);
    st = fixture_open_state(f);
    assert_int_equal(unprepare_claim(st, ns, name, UID1, &err), 0);
    prepare_wait_settled(st); /* the metadata goes right after the answer */
    assert_false(fixture_exists(path));
    assert_int_equal(fixture_count(f->cdi_root), 0);
    prepare_state_close(st);
}

/* ---- links planted in the plugin's own directories ---- */

/* A file outside the plugin's directories, with known content. */
static void outside_file(struct fixture *f, char *path, size_t size)
{
    snprintf(path, size, "%s/precious", f->root);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("precious\n", fp);
    fclose(fp);
}

static void assert_precious(const char *path)
{
    char buf[32] = {0};
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    assert_non_null(fgets(buf, sizeof(buf), fp));
    fclose(fp);
    assert_string_equal(buf, "precious\n");
}

/* A checkpoint.journal link is refused at start, its target left alone. */
static void test_planted_journal_link(void **state)
{
    struct fixture *f = *state;
    char target[PATH_MAX], journal[PATH_MAX];
    outside_file(f, target, sizeof(target));
    prepare_state_close(fixture_open_state(f)); /* a checkpoint and a journal */
    fixture_path(journal, sizeof(journal), f->plugin_dir, "checkpoint.journal");
    assert_int_equal(unlink(journal), 0);
    assert_int_equal(symlink(target, journal), 0);
    struct error err;
    assert_null(prepare_state_open(&f->cfg, &err));
    char want[2 * PATH_MAX];
    snprintf(want, sizeof(want), "%s is a symbolic link (to %s)", journal, target);
    if (strstr(err.msg, want) == NULL)
        fail_msg("error: %s\nwant: %s", err.msg, want);
    assert_precious(target);
    /* checkpoint.json too. */
    assert_int_equal(unlink(journal), 0);
    fixture_path(journal, sizeof(journal), f->plugin_dir, "checkpoint.json");
    assert_int_equal(unlink(journal), 0);
    assert_int_equal(symlink(target, journal), 0);
    assert_null(prepare_state_open(&f->cfg, &err));
    assert_non_null(strstr(err.msg, "checkpoint.json is a symbolic link"));
    assert_precious(target);
}

/* A link planted at a claim's metadata directory while the plugin runs:
 * prepare refuses it and writes nothing outside. */
static void test_planted_metadata_link(void **state)
{
    struct fixture *f = *state;
    char outside[PATH_MAX], link[PATH_MAX], md[PATH_MAX];
    snprintf(outside, sizeof(outside), "%s/outside", f->root);
    assert_int_equal(mkdir(outside, 0755), 0);
    struct prepare_state *st = open_with_c1(f);
    fixture_path(md, sizeof(md), f->plugin_dir, "dra-device-metadata");
    mkdir(md, 0755);
    fixture_path(link, sizeof(link), md, "default_c1");
    assert_int_equal(symlink(outside, link), 0);
    struct prepared_claim out;
    struct error err;
    assert_int_equal(prepare_claim(st, "default", "c1", UID1, &out, &err), -1);
    assert_non_null(strstr(err.msg, "default_c1 is a symbolic link (to "));
    assert_int_equal(fixture_count(outside), 0);
    assert_int_equal(fixture_count(f->cdi_root), 0);
    /* Unprepare removes the link, never what it points to. */
    assert_int_equal(unprepare_claim(st, "default", "c1", UID1, &err), 0);
    assert_true(fixture_exists(outside));
    prepare_state_close(st);
}

/* A link found at start in an owned metadata directory is reported and
 * removed; the claim is prepared afresh, inside. */
static void test_planted_link_at_start(void **state)
{
    struct fixture *f = *state;
    char outside[PATH_MAX], dir[PATH_MAX], file[PATH_MAX];
    snprintf(outside, sizeof(outside), "%s/outside", f->root);
    assert_int_equal(mkdir(outside, 0755), 0);
    struct prepare_state *st = open_with_c1(f);
    struct prepared_claim out;
    prepare_only(st, "default", "c1", UID1);
    prepare_state_close(st);
    snprintf(dir, sizeof(dir), "%s/dra-device-metadata/default_c1/gpus", f->plugin_dir);
    struct error err;
    assert_int_equal(claim_remove_tree(dir, &err), 0);
    assert_int_equal(symlink(outside, dir), 0);
    st = fixture_open_state(f);
    struct stat sb;
    assert_int_equal(lstat(dir, &sb), -1); /* the link is gone */
    assert_true(fixture_exists(outside));
    must_prepare(st, "default", "c1", UID1, &out);
    snprintf(file, sizeof(file), "%s/metadata.json", dir);
    assert_true(fixture_exists(file));
    assert_int_equal(lstat(dir, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
    assert_int_equal(fixture_count(outside), 0);
    prepared_claim_free(&out);
    prepare_state_close(st);
}

static ino_t inode_of(const char *path)
{
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    return sb.st_ino;
}

static void test_idempotent_and_restart(void **state)
{
    struct fixture *f = *state;
    struct prepare_state *st = open_with_c1(f);
    struct prepared_claim first, again, after;
    must_prepare(st, "default", "c1", UID1, &first);
    char spec[PATH_MAX], ckpt[PATH_MAX];
    fixture_spec_path(f, UID1, spec, sizeof(spec));
    fixture_path(ckpt, sizeof(ckpt), f->plugin_dir, CHECKPOINT_FILE);
    ino_t spec_ino = inode_of(spec), ckpt_ino = inode_of(ckpt);
    assert_int_equal(fixture_fetches(f), 1);

    /* Same uid again: answered from the checkpoint, nothing fetched or rewritten. */
    must_prepare(st, "default", "c1", UID1, &again);
    assert_same_answer(&first, &again);
    assert_int_equal(fixture_fetches(f), 1);
    assert_int_equal(inode_of(spec), spec_ino);
    assert_int_equal(inode_of(ckpt), ckpt_ino);
    prepared_claim_free(&again);

    /* A restart keeps the claim; the answer is unchanged. */
    prepare_state_close(st);
    st = fixture_open_state(f);
    must_prepare(st, "default", "c1", UID1, &after);
    assert_same_answer(&first, &after);
    assert_int_equal(fixture_fetches(f), 1);
    assert_int_equal(inode_of(spec), spec_ino);
    prepared_claim_free(&after);

    /* Unprepare removes every file; a second unprepare, and one of a claim
     * never prepared, succeed. */
    struct error err;
    assert_int_equal(unprepare_claim(st, "default", "c1", UID1, &err), 0);
    fixture_assert_no_files(f, st);
    assert_int_equal(unprepare_claim(st, "default", "c1", UID1, &err), 0);
    assert_int_equal(unprepare_claim(st, "default", "never", UID2, &err), 0);
    /* Every successful call was reported to the hooks. */
    assert_int_equal(f->prepared_hooks, 3);
    assert_int_equal(f->unprepared_hooks, 3);
    prepare_state_close(st);

    /* And the unprepare is durable. */
    st = fixture_open_state(f);
    must_prepare(st, "default", "c1", UID1, &after);
    assert_int_equal(fixture_fetches(f), 2);
    prepared_claim_free(&after);
    prepared_claim_free(&first);
    prepare_state_close(st);
}

static void expect_refused(struct prepare_state *st, const char *ns, const char *name,
                           const char *uid, const char *want)
{
    struct error err;
    struct prepared_claim out;
    assert_int_equal(prepare_claim(st, ns, name, uid, &out, &err), -1);
    if (strstr(err.msg, want) == NULL)
        fail_msg("error \"%s\" does not contain \"%s\"", err.msg, want);
    assert_int_equal(out.n_devices, 0);
    assert_int_equal(unprepare_claim(st, ns, name, uid, &err), -1);
    assert_non_null(strstr(err.msg, want));
}

static void test_validation_before_paths(void **state)
{
    struct fixture *f = *state;
    struct prepare_state *st = fixture_open_state(f);
    char long_name[300];
    memset(long_name, 'a', 254);
    long_name[254] = '\0';
    expect_refused(st, "default", "c1", "../../etc",
                   "claim default/c1: uid \"../../etc\": not a UID");
    expect_refused(st, "default", "c1", "0E0D5E3C-8A53-4A4E-9B5D-1F0C1C2F7A10", "not a UID");
    expect_refused(st, "../..", "c1", UID1, "namespace \"../..\": not a DNS label");
    expect_refused(st, "Default", "c1", UID1, "namespace \"Default\": not a DNS label");
    expect_refused(st, "default", "a/../../b", UID1, "name \"a/../../b\": not a DNS subdomain");
    expect_refused(st, "default", long_name, UID1, "longer than 253 characters");
    assert_int_equal(fixture_fetches(f), 0);
    assert_int_equal(fixture_count(f->cdi_root), 0);
    assert_int_equal(f->prepared_hooks + f->unprepared_hooks, 0);
    prepare_state_close(st);
}

static void expect_claim_error(struct fixture *f, struct prepare_state *st, const char *want)
{
    struct error err;
    struct prepared_claim out;
    assert_int_equal(prepare_claim(st, "default", "c1", UID1, &out, &err), -1);
    assert_string_equal(err.msg, want);
    prepare_wait_settled(st); /* the metadata specs follow the answer */
    assert_int_equal(fixture_count(f->cdi_root), 0);
}

static void test_claim_errors(void **state)
{
    struct fixture *f = *state;
    struct prepare_state *st = fixture_open_state(f);
    expect_claim_error(f, st,
                       "claim default/c1 (uid " UID1 "): GET "
                       "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/c1: 404 "
                       "Not Found");
    fixture_put_claim(f, fixture_claim("default", "c1", UID2, "[]", NULL, NULL));
    expect_claim_error(f, st,
                       "claim default/c1 (uid " UID1 "): got replaced: the API server has "
                       "it with uid " UID2);
    fixture_put_claim(f, json_pack("{s:{s:s, s:s, s:s}}", "metadata", "name", "c1", "namespace",
                                   "default", "uid", UID1));
    expect_claim_error(f, st, "claim default/c1 (uid " UID1 "): not allocated");
    fixture_put_claim(
        f, fixture_claim("default", "c1", UID1, "[" RESULT("gpus", "gpu-9") "]", NULL, NULL));
    expect_claim_error(f, st,
                       "claim default/c1 (uid " UID1 "): allocation result for device "
                       "gpu-9: device gpu-9 not found");
    /* Nothing was recorded either. */
    assert_int_equal(fixture_checkpoint_size(f), 0);
    assert_int_equal(fixture_journal_lines(f), 0);
    prepare_state_close(st);
}

/* A result as a scheduler with DRADeviceBindingConditions writes it: the
 * device's binding conditions copied from the slice. */
#define BOUND_RESULT(req, dev)                                                                     \
    "{\"request\":\"" req "\",\"driver\":\"" FIXTURE_DRIVER "\",\"pool\":\"" FIXTURE_NODE          \
    "\",\"device\":\"" dev "\",\"bindingConditions\":[\"" FIXTURE_DRIVER "/attached\"],"           \
    "\"bindingFailureConditions\":[\"" FIXTURE_DRIVER "/attach-failed\"]}"

static void test_binding_conditions_need_attached(void **state)
{
    struct fixture *f = *state;
    struct prepare_state *st = fixture_open_state(f);
    struct prepared_claim out;
    struct error err;
    const enum fakehw_attach refused[] = {FAKEHW_ATTACH_DETACHED, FAKEHW_ATTACH_ATTACHING,
                                          FAKEHW_ATTACH_FAILED};
    const char *const names[] = {"detached", "attaching", "failed"};
    fixture_put_claim(f, fixture_claim("default", "c1", UID1,
                                       "[" RESULT("a", "gpu-0") "," BOUND_RESULT("b", "gpu-1") "]",
                                       NULL, NULL));
    for (size_t i = 0; i < 3; i++) {
        f->devs[1].attach = refused[i];
        char want[512];
        snprintf(want, sizeof(want),
                 "claim default/c1 (uid " UID1 "): device gpu-1 is %s, not attached, but was "
                 "allocated with binding condition " FIXTURE_DRIVER "/attached: the scheduler "
                 "binds only once it is True; retry when the device is attached",
                 names[i]);
        expect_claim_error(f, st, want);
    }
    assert_int_equal(f->prepared_hooks, 0);
    /* Nothing was recorded: the retry starts from scratch. */
    assert_int_equal(fixture_checkpoint_size(f), 0);
    /* The kubelet's retry once the device is attached succeeds. */
    f->devs[1].attach = FAKEHW_ATTACH_ATTACHED;
    must_prepare(st, "default", "c1", UID1, &out);
    assert_int_equal(out.n_devices, 2);
    prepared_claim_free(&out);
    assert_int_equal(unprepare_claim(st, "default", "c1", UID1, &err), 0);

    /* No bindingConditions in the result (the scheduler's gate is off):
     * prepared whatever the attach state, as before. */
    f->devs[1].attach = FAKEHW_ATTACH_DETACHED;
    fixture_put_claim(
        f, fixture_claim("default", "c2", UID2, "[" RESULT("a", "gpu-1") "]", NULL, NULL));
    prepare_only(st, "default", "c2", UID2);
    /* A device that is no longer attachable needs no attach. */
    f->devs[2].attach = FAKEHW_ATTACH_NONE;
    fixture_put_claim(
        f, fixture_claim("default", "c3", UID3, "[" BOUND_RESULT("a", "gpu-2") "]", NULL, NULL));
    prepare_only(st, "default", "c3", UID3);
    assert_int_equal(unprepare_claim(st, "default", "c2", UID2, &err), 0);
    assert_int_equal(unprepare_claim(st, "default", "c3", UID3, &err), 0);

    /* A malformed list is refused like any other bad field. */
    f->devs[3].attach = FAKEHW_ATTACH_ATTACHED;
    fixture_put_claim(f, fixture_claim("default", "c1", UID1,
                                       "[{\"request\":\"a\",\"driver\":\"" FIXTURE_DRIVER
                                       "\",\"pool\":\"" FIXTURE_NODE
                                       "\",\"device\":\"gpu-3\",\"bindingConditions\":\"x\"}]",
                                       NULL, NULL));
    expect_claim_error(f, st,
                       "claim default/c1 (uid " UID1 "): allocation result 0 (device gpu-3): "
                       "bindingConditions is not a list of strings");
    prepare_state_close(st);
}

static void test_zero_results_and_metadata_off(void **state)
{
    struct fixture *f = *state;
    f->cfg.device_metadata = false;
    fixture_put_claim(
        f, fixture_claim("default", "c1", UID1,
                         "[{\"request\":\"r\",\"driver\":\"gpu.nvidia.com\",\"pool\":\"node-1\","
                         "\"device\":\"g0\"}]",
                         NULL, NULL));
    fixture_put_claim(f, fixture_claim("default", "c2", UID2, THREE_RESULTS, NULL, NULL));
    struct prepare_state *st = fixture_open_state(f);
    struct prepared_claim out;
    must_prepare(st, "default", "c1", UID1, &out);
    assert_int_equal(out.n_devices, 0);
    assert_int_equal(fixture_count(f->cdi_root), 0);
    prepared_claim_free(&out);
    must_prepare(st, "default", "c2", UID2, &out);
    assert_int_equal(out.n_devices, 3);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(out.devices[i].n_cdi_device_ids, 1);
    assert_int_equal(fixture_count(f->cdi_root), 1);
    assert_int_equal(fixture_count(f->plugin_dir), 2); /* checkpoint.json and .journal only */
    prepared_claim_free(&out);
    prepare_state_close(st);
}

static void test_template_claim_path(void **state)
{
    struct fixture *f = *state;
    fixture_put_claim(f, fixture_claim("default", "pod-gpu-x7k2p", UID1,
                                       "[" RESULT("gpus", "gpu-1") "]", NULL,
                                       "{\"resource.kubernetes.io/pod-claim-name\":\"gpu\"}"));
    struct prepare_state *st = fixture_open_state(f);
    struct prepared_claim out;
    must_prepare(st, "default", "pod-gpu-x7k2p", UID1, &out);
    char path[PATH_MAX];
    fixture_path(path, sizeof(path), f->cdi_root, META_SPEC(UID1, "gpus"));
    char *text = fixture_read(path);
    assert_non_null(strstr(text, "\"/var/run/kubernetes.io/dra-device-attributes/"
                                 "resourceclaimtemplates/gpu/gpus/"
                                 "gpu.fakehw.example.com-metadata.json\""));
    free(text);
    snprintf(path, sizeof(path), "%s/dra-device-metadata/default_pod-gpu-x7k2p/gpus/metadata.json",
             f->plugin_dir);
    text = fixture_read(path);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"podClaimName\": \"gpu\""));
    free(text);
    prepared_claim_free(&out);
    prepare_state_close(st);
}

static void test_same_name_new_uid(void **state)
{
    struct fixture *f = *state;
    fixture_put_claim(
        f, fixture_claim("default", "c1", UID1, "[" RESULT("gpus", "gpu-0") "]", NULL, NULL));
    struct prepare_state *st = fixture_open_state(f);
    struct prepared_claim out;
    struct error err;
    prepare_only(st, "default", "c1", UID1);
    /* Deleted and re-created under the same name while the old one is prepared. */
    fixture_put_claim(
        f, fixture_claim("default", "c1", UID2, "[" RESULT("gpus", "gpu-1") "]", NULL, NULL));
    assert_int_equal(prepare_claim(st, "default", "c1", UID2, &out, &err), -1);
    assert_string_equal(err.msg, "claim default/c1 (uid " UID2 "): still prepared with the old "
                                 "uid " UID1 "; waiting for its unprepare");
    assert_int_equal(unprepare_claim(st, "default", "c1", UID1, &err), 0);
    must_prepare(st, "default", "c1", UID2, &out);
    assert_string_equal(out.devices[0].device_name, "gpu-1");
    prepared_claim_free(&out);
    prepare_state_close(st);
}

/* The second request's metadata file cannot be written (a non-empty
 * directory is in its place): the first request's file, written already, is
 * removed, and the claim is not in the checkpoint. */
static void test_rollback_on_write_failure(void **state)
{
    struct fixture *f = *state;
    struct prepare_state *st = open_with_c1(f);
    char blocker[PATH_MAX], inside[PATH_MAX], first[PATH_MAX];
    struct error err;
    snprintf(blocker, sizeof(blocker), "%s/dra-device-metadata/default_c1/extra/metadata.json",
             f->plugin_dir);
    snprintf(first, sizeof(first), "%s/dra-device-metadata/default_c1/gpus/metadata.json",
             f->plugin_dir);
    fixture_block(blocker, inside, sizeof(inside));

    struct prepared_claim out;
    assert_int_equal(prepare_claim(st, "default", "c1", UID1, &out, &err), -1);
    assert_non_null(strstr(err.msg, "claim default/c1 (uid " UID1 "): renaming"));
    assert_false(fixture_exists(first));
    assert_false(fixture_exists(blocker));
    assert_int_equal(fixture_count(f->cdi_root), 0);
    /* Not in the checkpoint: its line comes after the files, so none was
     * written. */
    assert_int_equal(fixture_checkpoint_size(f), 0);
    assert_int_equal(fixture_journal_lines(f), 0);

    /* The rollback cleared the way: the next try succeeds. */
    expect_c1_prepares(st);
    prepare_state_close(st);
}

/* The claim spec cannot be written and its path cannot be cleared either (a
 * non-empty directory is in its place): the other files are removed, the
 * claim stays PrepareStarted in memory only, is never answered from and never
 * in the checkpoint (no line is written for it); once the way is clear, the next prepare
 * (here after a restart) succeeds. */
static void test_rollback_blocked(void **state)
{
    struct fixture *f = *state;
    struct prepare_state *st = open_with_c1(f);
    char spec[PATH_MAX], inside[PATH_MAX], path[PATH_MAX];
    struct error err;
    fixture_spec_path(f, UID1, spec, sizeof(spec));
    fixture_block(spec, inside, sizeof(inside));

    struct prepared_claim out;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(prepare_claim(st, "default", "c1", UID1, &out, &err), -1);
        assert_int_equal(out.n_devices, 0);
        assert_int_equal(fixture_count(f->cdi_root), 1); /* the blocker only */
        snprintf(path, sizeof(path), "%s/dra-device-metadata/default_c1", f->plugin_dir);
        assert_false(fixture_exists(path));
    }
    /* No line: the files failed before it; the second try stops at the
     * leftover record, whose files cannot be removed. */
    assert_int_equal(fixture_journal_lines(f), 0);
    assert_int_equal(fixture_checkpoint_size(f), 0);
    prepare_state_close(st);
    /* The compaction at exit did not write the record either. */
    assert_int_equal(fixture_checkpoint_size(f), 0);

    fixture_unblock(spec, inside);
    st = fixture_open_state(f);
    assert_int_equal(fixture_checkpoint_size(f), 0);
    expect_c1_prepares(st);
    prepare_state_close(st);
}

struct worker {
    struct prepare_state *st;
    const char *name, *uid;
    struct prepared_claim out;
    int rc;
    char msg[ERROR_MSG_MAX];
};

static void *work(void *arg)
{
    struct worker *w = arg;
    struct error err;
    w->rc = prepare_claim(w->st, "default", w->name, w->uid, &w->out, &err);
    if (w->rc < 0)
        snprintf(w->msg, sizeof(w->msg), "%s", err.msg);
    return NULL;
}

struct seen {
    int count;
    int per_uid[3];
};

static void count_device(void *ctx, const struct claim_ref *claim, const char *pool,
                         const char *device, const char *share_id)
{
    struct seen *s = ctx;
    const char *ns = claim->ns, *uid = claim->uid;
    (void)device;
    assert_string_equal(ns, "default");
    assert_string_equal(pool, FIXTURE_NODE);
    s->count++;
    s->per_uid[0] += !strcmp(uid, UID1);
    s->per_uid[1] += !strcmp(uid, UID2);
    s->per_uid[2] += !strcmp(uid, UID3) && share_id == NULL;
}

static void test_parallel(void **state)
{
    struct fixture *f = *state;
    fixture_put_claim(f, fixture_claim("default", "c1", UID1, THREE_RESULTS, NULL, NULL));
    fixture_put_claim(
        f, fixture_claim("default", "c2", UID2, "[" RESULT("gpus", "gpu-3") "]", NULL, NULL));
    fixture_put_claim(f, fixture_claim("default", "c3", UID3,
                                       "[" RESULT("a", "gpu-0") "," RESULT("b", "gpu-3") "]", NULL,
                                       NULL));
    struct prepare_state *st = fixture_open_state(f);
    const char *names[] = {"c1", "c2", "c3"}, *uids[] = {UID1, UID2, UID3};
    struct worker w[9];
    pthread_t t[9];
    for (int i = 0; i < 9; i++) {
        w[i] = (struct worker){.st = st, .name = names[i % 3], .uid = uids[i % 3]};
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < 9; i++) {
        pthread_join(t[i], NULL);
        if (w[i].rc != 0)
            fail_msg("worker %d: %s", i, w[i].msg);
    }
    /* Each claim was fetched once; the other calls answered from the checkpoint. */
    assert_int_equal(fixture_fetches(f), 3);
    for (int i = 3; i < 9; i++)
        assert_same_answer(&w[i].out, &w[i % 3].out);
    for (int i = 0; i < 9; i++)
        prepared_claim_free(&w[i].out);
    struct seen s = {0};
    prepare_for_each_device(st, count_device, &s);
    assert_int_equal(s.count, 6);
    assert_int_equal(s.per_uid[0], 3);
    assert_int_equal(s.per_uid[1], 1);
    assert_int_equal(s.per_uid[2], 2);
    prepare_state_close(st);
}

/* ---- the checkpoint: what each call writes ---- */

/* A prepare appends one journal line and an unprepare another; neither
 * rewrites checkpoint.json, and a repeated prepare or an unprepare of an
 * unknown claim writes nothing.  Closing compacts. */
static void test_write_pattern(void **state)
{
    struct fixture *f = *state;
    fixture_put_claim(
        f, fixture_claim("default", "c1", UID1, "[" RESULT("gpus", "gpu-0") "]", NULL, NULL));
    struct prepare_state *st = fixture_open_state(f);
    char ckpt[PATH_MAX];
    fixture_path(ckpt, sizeof(ckpt), f->plugin_dir, CHECKPOINT_FILE);
    ino_t ino = inode_of(ckpt);
    struct error err;
    prepare_only(st, "default", "c1", UID1);
    assert_int_equal(fixture_journal_lines(f), 1);
    prepare_only(st, "default", "c1", UID1);
    assert_int_equal(fixture_journal_lines(f), 1);
    assert_int_equal(unprepare_claim(st, "default", "c1", UID1, &err), 0);
    prepare_wait_settled(st); /* an unprepare's line is written after the answer */
    assert_int_equal(fixture_journal_lines(f), 2);
    assert_int_equal(unprepare_claim(st, "default", "c1", UID1, &err), 0);
    prepare_wait_settled(st);
    assert_int_equal(fixture_journal_lines(f), 2);
    assert_int_equal(inode_of(ckpt), ino);
    prepare_only(st, "default", "c1", UID1);
    prepare_state_close(st);
    /* The clean stop left one file that holds everything. */
    assert_int_equal(fixture_journal_lines(f), 0);
    assert_int_not_equal(inode_of(ckpt), ino);
    char *text = fixture_read(ckpt);
    json_t *claims = NULL;
    assert_int_equal(checkpoint_decode(text, strlen(text), FIXTURE_DRIVER, &claims, &err), 0);
    assert_non_null(json_object_get(claims, UID1));
    json_decref(claims);
    free(text);
}

/* Past the bound the journal is folded into a new checkpoint.json. */
/* Unprepare answers once its journal line is written; its files go after
 * the answer (the reaper, kicked by prepare_after_answer).  A prepare of the
 * same claim before they went takes them back: the old removal never
 * touches the new files. */
static void test_unprepare_files_follow_answer(void **state)
{
    struct fixture *f = *state;
    struct prepare_state *st = open_with_c1(f);
    struct prepared_claim first, again;
    must_prepare(st, "default", "c1", UID1, &first);
    char spec[PATH_MAX], meta[PATH_MAX];
    fixture_spec_path(f, UID1, spec, sizeof(spec));
    snprintf(meta, sizeof(meta), "%s/dra-device-metadata/default_c1/extra/metadata.json",
             f->plugin_dir);
    assert_int_equal(fixture_journal_lines(f), 1);

    struct error err;
    assert_int_equal(unprepare_claim(st, "default", "c1", UID1, &err), 0);
    /* Answered: the removal is in the journal, the files are still there. */
    assert_int_equal(fixture_journal_lines(f), 2);
    assert_int_equal(fixture_checkpoint_size(f), 0);
    assert_true(fixture_exists(spec));
    assert_true(fixture_exists(meta));
    assert_int_equal(fixture_count(f->cdi_root), 3);

    /* Prepared again before they went: the same answer, and the files stay
     * after the queued removal's time has come. */
    must_prepare(st, "default", "c1", UID1, &again);
    assert_same_answer(&first, &again);
    prepare_after_answer(st);
    prepare_wait_settled(st);
    assert_true(fixture_exists(spec));
    assert_true(fixture_exists(meta));
    assert_int_equal(fixture_count(f->cdi_root), 3);

    /* Unprepared for good: everything goes once settled. */
    assert_int_equal(unprepare_claim(st, "default", "c1", UID1, &err), 0);
    prepare_after_answer(st);
    prepare_wait_settled(st);
    assert_int_equal(fixture_count(f->cdi_root), 0);
    assert_false(fixture_exists(meta));
    prepared_claim_free(&first);
    prepared_claim_free(&again);
    prepare_state_close(st);
}

static void test_compaction_bound(void **state)
{
    struct fixture *f = *state;
    f->cfg.journal_max_lines = 3;
    const char *names[] = {"c1", "c2", "c3"}, *uids[] = {UID1, UID2, UID3};
    for (int i = 0; i < 3; i++)
        fixture_put_claim(f, fixture_claim("default", names[i], uids[i],
                                           "[" RESULT("gpus", "gpu-1") "]", NULL, NULL));
    struct prepare_state *st = fixture_open_state(f);
    struct error err;
    for (int i = 0; i < 3; i++) {
        prepare_only(st, "default", names[i], uids[i]);
    }
    assert_int_equal(fixture_journal_lines(f), 3);
    assert_int_equal(unprepare_claim(st, "default", "c1", UID1, &err), 0);
    prepare_wait_settled(st); /* the sync thread compacts after the answer */
    assert_int_equal(fixture_journal_lines(f), 0);
    char ckpt[PATH_MAX];
    fixture_path(ckpt, sizeof(ckpt), f->plugin_dir, CHECKPOINT_FILE);
    char *text = fixture_read(ckpt);
    json_t *claims = NULL;
    assert_int_equal(checkpoint_decode(text, strlen(text), FIXTURE_DRIVER, &claims, &err), 0);
    assert_int_equal(json_object_size(claims), 2);
    assert_null(json_object_get(claims, UID1));
    json_decref(claims);
    free(text);
    /* And the appends go on after it. */
    assert_int_equal(unprepare_claim(st, "default", "c2", UID2, &err), 0);
    prepare_wait_settled(st);
    assert_int_equal(fixture_journal_lines(f), 1);
    claims = fixture_checkpoint_claims(f);
    assert_int_equal(json_object_size(claims), 1);
    assert_non_null(json_object_get(claims, UID3));
    json_decref(claims);
    prepare_state_close(st);
}

/* ---- files found missing ---- */

static void remove_specs(const struct fixture *f)
{
    DIR *d = opendir(f->cdi_root);
    assert_non_null(d);
    struct dirent *e;
    char path[PATH_MAX];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        fixture_path(path, sizeof(path), f->cdi_root, e->d_name);
        assert_int_equal(unlink(path), 0);
    }
    closedir(d);
}

/* A repeated prepare checks the claim's files: when one is missing or empty
 * (a reboot empties /var/run/cdi; the files are written without fsync), the
 * claim is prepared afresh, with the same answer.  When that fails, the
 * claim is dropped and nothing of it is left. */
static void test_missing_file_reprepared(void **state)
{
    struct fixture *f = *state;
    struct prepare_state *st = open_with_c1(f);
    struct prepared_claim first, again;
    struct error err;
    must_prepare(st, "default", "c1", UID1, &first);
    assert_int_equal(fixture_fetches(f), 1);

    remove_specs(f);
    expect_same_answer(st, "c1", UID1, &first);
    assert_int_equal(fixture_fetches(f), 2);
    assert_int_equal(fixture_count(f->cdi_root), 3);

    char meta[PATH_MAX];
    snprintf(meta, sizeof(meta), "%s/dra-device-metadata/default_c1/extra/metadata.json",
             f->plugin_dir);
    assert_int_equal(truncate(meta, 0), 0);
    expect_same_answer(st, "c1", UID1, &first);
    assert_int_equal(fixture_fetches(f), 3);
    char *text = fixture_read(meta);
    assert_true(strlen(text) > 0);
    free(text);
    /* With every file there, no fetch. */
    must_prepare(st, "default", "c1", UID1, &again);
    prepared_claim_free(&again);
    assert_int_equal(fixture_fetches(f), 3);

    /* Missing again, and the API server has another claim by that name now. */
    char spec[PATH_MAX];
    fixture_spec_path(f, UID1, spec, sizeof(spec));
    assert_int_equal(unlink(spec), 0);
    fixture_put_claim(f, fixture_claim("default", "c1", UID2, "[]", NULL, NULL));
    assert_int_equal(prepare_claim(st, "default", "c1", UID1, &again, &err), -1);
    assert_non_null(strstr(err.msg, "got replaced"));
    assert_int_equal(fixture_count(f->cdi_root), 0);
    char md[PATH_MAX];
    fixture_path(md, sizeof(md), f->plugin_dir, "dra-device-metadata");
    assert_int_equal(fixture_count(md), 0);
    assert_int_equal(fixture_checkpoint_size(f), 0);
    assert_int_equal(unprepare_claim(st, "default", "c1", UID1, &err), 0);
    prepared_claim_free(&first);
    prepare_state_close(st);
}

/* At start-up the same rule: a claim whose file is gone is dropped (its
 * other files removed), and its next prepare prepares it afresh; claims
 * with all their files stay. */
static void test_restart_with_missing_files(void **state)
{
    struct fixture *f = *state;
    fixture_put_claim(f, fixture_claim("default", "c1", UID1, THREE_RESULTS, NULL, NULL));
    fixture_put_claim(
        f, fixture_claim("default", "c2", UID2, "[" RESULT("gpus", "gpu-3") "]", NULL, NULL));
    struct prepare_state *st = fixture_open_state(f);
    struct prepared_claim a1, a2;
    must_prepare(st, "default", "c1", UID1, &a1);
    must_prepare(st, "default", "c2", UID2, &a2);
    prepare_state_close(st);

    /* Only c2's claim spec is gone. */
    char spec[PATH_MAX], md[PATH_MAX];
    fixture_spec_path(f, UID2, spec, sizeof(spec));
    assert_int_equal(unlink(spec), 0);
    st = fixture_open_state(f);
    json_t *claims = fixture_checkpoint_claims(f);
    assert_int_equal(json_object_size(claims), 1);
    assert_non_null(json_object_get(claims, UID1));
    json_decref(claims);
    snprintf(md, sizeof(md), "%s/dra-device-metadata/default_c2", f->plugin_dir);
    assert_false(fixture_exists(md));
    assert_int_equal(fixture_count(f->cdi_root), 3); /* c1's */
    int fetches = fixture_fetches(f);
    expect_same_answer(st, "c1", UID1, &a1);
    assert_int_equal(fixture_fetches(f), fetches);
    expect_same_answer(st, "c2", UID2, &a2);
    assert_int_equal(fixture_fetches(f), fetches + 1);
    prepare_state_close(st);

    /* A reboot: the CDI root is empty. */
    remove_specs(f);
    st = fixture_open_state(f);
    assert_int_equal(fixture_checkpoint_size(f), 0);
    fixture_path(md, sizeof(md), f->plugin_dir, "dra-device-metadata");
    assert_int_equal(fixture_count(md), 0);
    expect_same_answer(st, "c1", UID1, &a1);
    assert_int_equal(fixture_count(f->cdi_root), 3);
    prepared_claim_free(&a1);
    prepared_claim_free(&a2);
    prepare_state_close(st);
}

/* ---- crashes ---- */

static void put_file(const char *dir, const char *name)
{
    char path[PATH_MAX];
    struct error err;
    fixture_path(path, sizeof(path), dir, name);
    assert_int_equal(atomic_write_file(path, "{", 1, 0600, &err), 0);
}

/* A crash after a prepare wrote its files but before its journal line was
 * durable (so before its answer), with temp files of interrupted writes
 * around: the next start leaves nothing of that claim, keeps the others, and
 * the claim prepares afresh. */
static void test_crash_before_journal_line(void **state)
{
    struct fixture *f = *state;
    fixture_put_claim(
        f, fixture_claim("default", "c1", UID1, "[" RESULT("gpus", "gpu-0") "]", NULL, NULL));
    fixture_put_claim(f, fixture_claim("default", "c2", UID2, THREE_RESULTS, NULL, NULL));
    struct prepare_state *st = fixture_open_state(f);
    struct prepared_claim a1, a2;
    must_prepare(st, "default", "c1", UID1, &a1);
    struct fixture_disk before;
    fixture_disk_save(f, &before);
    must_prepare(st, "default", "c2", UID2, &a2);
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/dra-device-metadata/default_c2/extra", f->plugin_dir);
    put_file(dir, ".metadata.json.tmp.Xy12Zz");
    put_file(f->cdi_root, ".k8s.gpu.fakehw.example.com-gpu_" UID2 ".json.tmp.Ab12Cd");
    put_file(f->cdi_root, "." FIXTURE_DRIVER "_metadata_" UID2 "_gpus.json.tmp.Cd34Ef");
    put_file(f->plugin_dir, ".checkpoint.json.tmp.Q1w2E3");
    prepare_state_close(st);
    fixture_disk_restore(f, &before);

    st = fixture_open_state(f);
    assert_int_equal(fixture_count(f->cdi_root), 2); /* c1's claim and metadata specs */
    char md[PATH_MAX];
    fixture_path(md, sizeof(md), f->plugin_dir, "dra-device-metadata");
    assert_int_equal(fixture_count(md), 1);            /* default_c1 */
    assert_int_equal(fixture_count(f->plugin_dir), 3); /* checkpoint.json, .journal, metadata */
    int fetches = fixture_fetches(f);
    expect_same_answer(st, "c1", UID1, &a1);
    assert_int_equal(fixture_fetches(f), fetches);
    expect_same_answer(st, "c2", UID2, &a2);
    assert_int_equal(fixture_fetches(f), fetches + 1);
    prepared_claim_free(&a1);
    prepared_claim_free(&a2);
    prepare_state_close(st);
}

static void assert_claims(const struct fixture *f, const char *const *uids, size_t n)
{
    json_t *claims = fixture_checkpoint_claims(f);
    assert_int_equal(json_object_size(claims), n);
    for (size_t i = 0; i < n; i++)
        assert_non_null(json_object_get(claims, uids[i]));
    json_decref(claims);
}

/* A compaction writes checkpoint.json, then empties the journal.  A crash
 * before the new snapshot is in place, or between the two steps, loses
 * nothing: replaying the old lines onto either snapshot gives the same
 * claims. */
static void test_compaction_crash_points(void **state)
{
    struct fixture *f = *state;
    const char *names[] = {"c1", "c2", "c3"}, *uids[] = {UID1, UID2, UID3};
    for (int i = 0; i < 3; i++)
        fixture_put_claim(f, fixture_claim("default", names[i], uids[i],
                                           "[" RESULT("gpus", "gpu-2") "]", NULL, NULL));
    struct prepare_state *st = fixture_open_state(f);
    struct error err;
    prepare_only(st, "default", "c1", UID1);
    prepare_only(st, "default", "c2", UID2);
    assert_int_equal(unprepare_claim(st, "default", "c1", UID1, &err), 0);
    prepare_only(st, "default", "c3", UID3);
    struct fixture_disk old;
    fixture_disk_save(f, &old); /* empty snapshot, 4 lines */
    prepare_state_close(st);    /* compacts */
    char journal[PATH_MAX], spec1[PATH_MAX];
    fixture_path(journal, sizeof(journal), f->plugin_dir, "checkpoint.journal");
    fixture_spec_path(f, UID1, spec1, sizeof(spec1));

    /* Between the two steps: the new snapshot and the old lines. */
    assert_int_equal(atomic_write_file(journal, old.journal, strlen(old.journal), 0600, &err), 0);
    assert_int_equal(fixture_journal_lines(f), 4);
    assert_claims(f, uids + 1, 2);
    st = fixture_open_state(f);
    assert_int_equal(fixture_journal_lines(f), 0);
    assert_claims(f, uids + 1, 2);
    prepare_state_close(st);

    /* Before the rename: the old snapshot and the old lines. */
    fixture_disk_restore(f, &old);
    st = fixture_open_state(f);
    assert_claims(f, uids + 1, 2);
    int fetches = fixture_fetches(f);
    for (int i = 1; i < 3; i++) {
        prepare_only(st, "default", names[i], uids[i]);
    }
    assert_int_equal(fixture_fetches(f), fetches);
    assert_false(fixture_exists(spec1));
    prepare_state_close(st);
}

/* An old plugin's checkpoint (one file, no journal) is read, and the
 * journal is created next to it. */
static void test_upgrade_from_single_file(void **state)
{
    struct fixture *f = *state;
    fixture_put_claim(
        f, fixture_claim("default", "c1", UID1, "[" RESULT("gpus", "gpu-0") "]", NULL, NULL));
    struct prepare_state *st = fixture_open_state(f);
    struct prepared_claim a, b;
    must_prepare(st, "default", "c1", UID1, &a);
    prepare_state_close(st);
    char journal[PATH_MAX];
    fixture_path(journal, sizeof(journal), f->plugin_dir, "checkpoint.journal");
    assert_int_equal(unlink(journal), 0);
    st = fixture_open_state(f);
    assert_true(fixture_exists(journal));
    must_prepare(st, "default", "c1", UID1, &b);
    assert_same_answer(&a, &b);
    assert_int_equal(fixture_fetches(f), 1);
    prepared_claim_free(&a);
    prepared_claim_free(&b);
    struct error err;
    assert_int_equal(unprepare_claim(st, "default", "c1", UID1, &err), 0);
    prepare_wait_settled(st);
    assert_int_equal(fixture_journal_lines(f), 1);
    prepare_state_close(st);
}

/* ---- many callers ---- */

#define CYCLERS 8
#define CYCLES  12

struct cycler {
    struct prepare_state *st;
    char name[16], uid[40];
    bool keep; /* leave the claim prepared at the end */
    int failures;
    char msg[ERROR_MSG_MAX];
};

static void *cycle(void *arg)
{
    struct cycler *c = arg;
    struct error err;
    struct prepared_claim out;
    for (int i = 0; i < CYCLES; i++) {
        if (prepare_claim(c->st, "default", c->name, c->uid, &out, &err) < 0 ||
            out.n_devices != 1 || (prepared_claim_free(&out), i == CYCLES - 1 && c->keep) ||
            unprepare_claim(c->st, "default", c->name, c->uid, &err) < 0) {
            if (i == CYCLES - 1 && c->keep)
                break;
            c->failures++;
            snprintf(c->msg, sizeof(c->msg), "%s", err.msg);
        }
    }
    return NULL;
}

/* 8 callers prepare and unprepare their own claims at once, with a journal
 * bound so low that compactions run among the appends: every change is in
 * the checkpoint, in order, and survives a restart. */
static void test_parallel_cycles(void **state)
{
    struct fixture *f = *state;
    f->cfg.journal_max_lines = 5;
    struct cycler c[CYCLERS];
    pthread_t t[CYCLERS];
    for (int i = 0; i < CYCLERS; i++) {
        c[i] = (struct cycler){.keep = i % 2 == 1};
        snprintf(c[i].name, sizeof(c[i].name), "cyc-%d", i);
        snprintf(c[i].uid, sizeof(c[i].uid), "%08x-1111-4222-8333-%012x", 0xc0ffee00u + i, i);
        char results[256];
        snprintf(results, sizeof(results), "[" RESULT("gpus", "gpu-%d") "]", i % FIXTURE_NDEVS);
        fixture_put_claim(f, fixture_claim("default", c[i].name, c[i].uid, results, NULL, NULL));
    }
    struct prepare_state *st = fixture_open_state(f);
    for (int i = 0; i < CYCLERS; i++) {
        c[i].st = st;
        assert_int_equal(pthread_create(&t[i], NULL, cycle, &c[i]), 0);
    }
    for (int i = 0; i < CYCLERS; i++) {
        pthread_join(t[i], NULL);
        if (c[i].failures)
            fail_msg("caller %d: %d failure(s), the last: %s", i, c[i].failures, c[i].msg);
    }
    assert_int_equal(fixture_fetches(f), CYCLERS * CYCLES);
    prepare_wait_settled(st); /* the last unprepares' lines */
    json_t *claims = fixture_checkpoint_claims(f);
    assert_int_equal(json_object_size(claims), CYCLERS / 2);
    for (int i = 0; i < CYCLERS; i++)
        assert_int_equal(json_object_get(claims, c[i].uid) != NULL, c[i].keep);
    json_decref(claims);
    /* Half the claims' files, nothing else. */
    assert_int_equal(fixture_count(f->cdi_root), CYCLERS);
    prepare_state_close(st);

    st = fixture_open_state(f);
    for (int i = 0; i < CYCLERS; i += 2) {
        prepare_only(st, "default", c[i + 1].name, c[i + 1].uid);
    }
    assert_int_equal(fixture_fetches(f), CYCLERS * CYCLES);
    prepare_state_close(st);
}

TEST_MAIN_FIXTURE("prepare flow", fixture_setup, fixture_teardown, test_prepare_writes,
                  test_longest_names_with_metadata, test_planted_journal_link,
                  test_planted_metadata_link, test_planted_link_at_start,
                  test_idempotent_and_restart, test_validation_before_paths, test_claim_errors,
                  test_binding_conditions_need_attached, test_zero_results_and_metadata_off,
                  test_template_claim_path, test_same_name_new_uid, test_rollback_on_write_failure,
                  test_rollback_blocked, test_parallel, test_write_pattern,
                  test_unprepare_files_follow_answer, test_compaction_bound,
                  test_missing_file_reprepared, test_restart_with_missing_files,
                  test_crash_before_journal_line, test_compaction_crash_points,
                  test_upgrade_from_single_file, test_parallel_cycles)
