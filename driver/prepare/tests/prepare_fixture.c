// SPDX-License-Identifier: Apache-2.0
#include "prepare_fixture.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "driver/prepare/checkpoint.h"
#include "driver/prepare/checkpoint_journal.h"
#include "driver/prepare/claim_files.h"
#include "log.h"
#include "common/tests/test_json.h"
#include "common/tests/tmp_dir.h"

static int fetch_claim(void *ctx, const struct claim_ref *ref, json_t **claim, struct error *err)
{
    struct fixture *f = ctx;
    const char *ns = ref->ns, *name = ref->name;
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    pthread_mutex_lock(&f->mu);
    f->fetches++;
    json_t *c = json_incref(json_object_get(f->claims, key));
    pthread_mutex_unlock(&f->mu);
    if (c == NULL)
        return error_set(err,
                         "GET /apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s: 404 "
                         "Not Found",
                         ns, name);
    *claim = c;
    return 0;
}

static int lookup_device(void *ctx, const char *name, struct fakehw_device *dev, struct error *err)
{
    struct fixture *f = ctx;
    for (size_t i = 0; i < FIXTURE_NDEVS; i++)
        if (!strcmp(f->devs[i].name, name)) {
            *dev = f->devs[i];
            return 0;
        }
    return error_set(err, "device %s not found", name);
}

static void count_hook(struct fixture *f, const struct claim_ref *c, int *hooks)
{
    assert_true(c->ns && c->name && c->uid);
    pthread_mutex_lock(&f->mu);
    (*hooks)++;
    pthread_mutex_unlock(&f->mu);
}

static void count_prepared(void *ctx, const struct claim_ref *c)
{
    struct fixture *f = ctx;
    count_hook(f, c, &f->prepared_hooks);
}

static void count_unprepared(void *ctx, const struct claim_ref *c)
{
    struct fixture *f = ctx;
    count_hook(f, c, &f->unprepared_hooks);
}

static void make_device(struct fixture *f, int i)
{
    struct fakehw_device *d = &f->devs[i];
    *d = (struct fakehw_device){
        .index = i,
        .product_name = "NVIDIA A100-SXM4-80GB",
        .architecture = "Ampere",
        .brand = "Nvidia",
        .memory_bytes = 80ull << 30,
        .compute_capability = "8.0",
        .driver_version = "550.127.05",
        .cuda_driver_version = "12.4",
        .numa_node = i / 2,
        .minor = i,
        .healthy = true,
    };
    snprintf(d->name, sizeof(d->name), "gpu-%d", i);
    snprintf(d->uuid, sizeof(d->uuid), "GPU-%08x-1111-2222-3333-44445555666%d",
             0xa0a0a0a0u + (unsigned)i, i);
    snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "0000:%02x:00.0", 0x18 + i);
    snprintf(d->pcie_root, sizeof(d->pcie_root), "pci0000:%02x", 0x17 + i);
    /* Via a local buffer: d lies inside f, which GCC's -Wrestrict takes for overlap. */
    char path[sizeof(d->device_path)];
    snprintf(path, sizeof(path), "%s/dev/fakegpu%d", f->root, i);
    memcpy(d->device_path, path, sizeof(path));
    /* gpu-2 is shared by memory, so claims may hold shares of it. */
    if (i == 2) {
        d->memory_sharing[0] = 10ull << 30;
        d->memory_sharing[1] = 1ull << 30;
        d->memory_sharing[2] = 1ull << 30;
    }
}

int fixture_setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (f == NULL || !tmp_dir_make(f->root, sizeof(f->root), "test-prepare"))
        return -1;
    fixture_path(f->plugin_dir, sizeof(f->plugin_dir), f->root, "plugins/" FIXTURE_DRIVER);
    fixture_path(f->cdi_root, sizeof(f->cdi_root), f->root, "cdi");
    fixture_path(f->fakehw_root, sizeof(f->fakehw_root), f->root, "fakehw");
    fixture_path(f->smi, sizeof(f->smi), f->root, "bin/fakegpu-smi");
    for (int i = 0; i < FIXTURE_NDEVS; i++)
        make_device(f, i);
    pthread_mutex_init(&f->mu, NULL);
    f->claims = json_object();
    f->cfg = (struct prepare_config){
        .driver_name = FIXTURE_DRIVER,
        .node_name = FIXTURE_NODE,
        .plugin_dir = f->plugin_dir,
        .cdi_root = f->cdi_root,
        .fakehw_host_root = f->fakehw_root,
        .fakegpu_smi = f->smi,
        .device_metadata = true,
        .fetch_claim = fetch_claim,
        .fetch_class = NULL,
        .lookup_device = lookup_device,
        .fetch_ctx = f,
        .on_prepared = count_prepared,
        .on_unprepared = count_unprepared,
        .hook_ctx = f,
    };
    /* Recovery logs warnings by design; keep test output readable. */
    log_verbosity = 0;
    *state = f;
    return 0;
}

int fixture_teardown(void **state)
{
    struct fixture *f = *state;
    struct error err;
    int rc = claim_remove_tree(f->root, &err);
    json_decref(f->claims);
    pthread_mutex_destroy(&f->mu);
    free(f);
    return rc;
}

json_t *fixture_claim(const char *ns, const char *name, const char *uid, const char *results,
                      const char *config, const char *annotations)
{
    char *text = NULL;
    int n = asprintf(&text,
                     "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\","
                     "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"%s\""
                     "%s%s},"
                     "\"spec\":{\"devices\":{\"requests\":[]}},"
                     "\"status\":{\"allocation\":{\"devices\":{\"results\":%s%s%s}}}}",
                     name, ns, uid, annotations ? ",\"annotations\":" : "",
                     annotations ? annotations : "", results, config ? ",\"config\":" : "",
                     config ? config : "");
    assert_true(n > 0);
    json_t *claim = test_json(text);
    free(text);
    return claim;
}

void fixture_put_claim(struct fixture *f, json_t *claim)
{
    char key[600];
    json_t *md = json_object_get(claim, "metadata");
    snprintf(key, sizeof(key), "%s/%s", json_string_value(json_object_get(md, "namespace")),
             json_string_value(json_object_get(md, "name")));
    pthread_mutex_lock(&f->mu);
    json_object_set_new(f->claims, key, claim);
    pthread_mutex_unlock(&f->mu);
}

int fixture_fetches(struct fixture *f)
{
    pthread_mutex_lock(&f->mu);
    int n = f->fetches;
    pthread_mutex_unlock(&f->mu);
    return n;
}

char *fixture_read(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL)
        return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    int c;
    while ((c = fgetc(fp)) != EOF)
        fputc(c, out);
    fclose(fp);
    fclose(out);
    return buf;
}

bool fixture_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

size_t fixture_count(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

void fixture_path(char *buf, size_t size, const char *dir, const char *name)
{
    int n = snprintf(buf, size, "%s/%s", dir, name);
    assert_true(n > 0 && (size_t)n < size);
}

void fixture_spec_path(const struct fixture *f, const char *uid, char *buf, size_t size)
{
    char name[256];
    snprintf(name, sizeof(name), "k8s.%s-gpu_%s.json", FIXTURE_DRIVER, uid);
    fixture_path(buf, size, f->cdi_root, name);
}

json_t *fixture_checkpoint_claims(const struct fixture *f)
{
    char path[PATH_MAX];
    struct error err;
    json_t *claims = NULL;
    int corrupt;
    fixture_path(path, sizeof(path), f->plugin_dir, CHECKPOINT_FILE);
    if (checkpoint_load(path, FIXTURE_DRIVER, &claims, &corrupt, &err) != 0)
        fail_msg("checkpoint_load: %s", err.msg);
    struct checkpoint_journal_replay r;
    fixture_path(path, sizeof(path), f->plugin_dir, CHECKPOINT_JOURNAL_FILE);
    if (checkpoint_journal_load(path, FIXTURE_DRIVER, claims, &r, &corrupt, &err) != 0)
        fail_msg("checkpoint_journal_load: %s", err.msg);
    if (r.torn_line != 0)
        fail_msg("%s: line %zu is torn: %s", path, r.torn_line, r.torn_why);
    return claims;
}

size_t fixture_checkpoint_size(const struct fixture *f)
{
    json_t *claims = fixture_checkpoint_claims(f);
    size_t n = json_object_size(claims);
    json_decref(claims);
    return n;
}

void fixture_block(const char *path, char *inside, size_t size)
{
    struct error err;
    fixture_path(inside, size, path, "x");
    if (mkdir_p(path, 0755, &err) != 0 || atomic_write_file(inside, "x", 1, 0644, &err) != 0)
        fail_msg("blocking %s: %s", path, err.msg);
}

void fixture_unblock(const char *path, const char *inside)
{
    assert_int_equal(unlink(inside), 0);
    assert_int_equal(rmdir(path), 0);
}

size_t fixture_journal_lines(const struct fixture *f)
{
    char path[PATH_MAX];
    fixture_path(path, sizeof(path), f->plugin_dir, CHECKPOINT_JOURNAL_FILE);
    char *text = fixture_read(path);
    size_t n = 0;
    for (const char *p = text; p && *p; p++)
        n += *p == '\n';
    free(text);
    return n;
}

void fixture_disk_save(const struct fixture *f, struct fixture_disk *d)
{
    char path[PATH_MAX];
    fixture_path(path, sizeof(path), f->plugin_dir, CHECKPOINT_FILE);
    d->snapshot = fixture_read(path);
    fixture_path(path, sizeof(path), f->plugin_dir, CHECKPOINT_JOURNAL_FILE);
    d->journal = fixture_read(path);
    assert_non_null(d->snapshot);
    assert_non_null(d->journal);
}

void fixture_disk_restore(const struct fixture *f, struct fixture_disk *d)
{
    char path[PATH_MAX];
    struct error err;
    fixture_path(path, sizeof(path), f->plugin_dir, CHECKPOINT_FILE);
    assert_int_equal(atomic_write_file(path, d->snapshot, strlen(d->snapshot), 0600, &err), 0);
    fixture_path(path, sizeof(path), f->plugin_dir, CHECKPOINT_JOURNAL_FILE);
    assert_int_equal(atomic_write_file(path, d->journal, strlen(d->journal), 0600, &err), 0);
    free(d->snapshot);
    free(d->journal);
    d->snapshot = d->journal = NULL;
}

struct prepare_state *fixture_open_state(struct fixture *f)
{
    struct error err;
    struct prepare_state *st = prepare_state_open(&f->cfg, &err);
    if (st == NULL)
        fail_msg("prepare_state_open: %s", err.msg);
    return st;
}

void fixture_assert_no_files(struct fixture *f, struct prepare_state *st)
{
    prepare_wait_settled(st); /* the metadata specs follow the answer */
    assert_int_equal(fixture_count(f->cdi_root), 0);
    /* The metadata directories go right after the answer. */
    prepare_wait_settled(st);
    char md[PATH_MAX];
    fixture_path(md, sizeof(md), f->plugin_dir, "dra-device-metadata");
    assert_int_equal(fixture_count(md), 0);
}
