// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the MIG geometry (against NVIDIA's "Supported MIG Profiles"
 * tables), the `mig` config section and the partitions' live health. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fakehw_tree.h"
#include "inventory.h"
#include "mig_profiles.h"
#include "common/tests/test_main.h"

struct row {
    const char *name;
    int compute, memory, instances; /* the table's "Number of Instances Available" */
    const char *placements;         /* `nvidia-smi mig -lgipp`: "{0,4}:4" */
};

static void placements_text(const struct mig_profile *p, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "{");
    for (int i = 0; i < p->nplacements; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%d", i ? "," : "", p->placements[i]);
    snprintf(buf + used, size - used, "}:%d", p->memory_slices);
}

static void check_model(const char *model, const struct row *rows, size_t n)
{
    const struct mig_geometry *g = mig_geometry_find(model);
    if (g == NULL)
        fail_msg("%s has no MIG geometry", model);
    assert_int_equal(g->nprofiles, n);
    for (size_t i = 0; i < n; i++) {
        const struct mig_profile *p = mig_profile_find(g, rows[i].name);
        if (p == NULL)
            fail_msg("%s: no profile %s", model, rows[i].name);
        assert_int_equal(p->compute_slices, rows[i].compute);
        assert_int_equal(p->memory_slices, rows[i].memory);
        assert_int_equal(p->nplacements, rows[i].instances);
        char text[64];
        placements_text(p, text, sizeof(text));
        assert_string_equal(text, rows[i].placements);
    }
}

/* The same layout, with the names of each board. */
#define LAYOUT(p1, p1x2, p2, p3, p4, p7)                                                           \
    {                                                                                              \
        {p1, 1, 1, 7, "{0,1,2,3,4,5,6}:1"}, {p1x2, 1, 2, 4, "{0,2,4,6}:2"},                        \
            {p2, 2, 2, 3, "{0,2,4}:2"}, {p3, 3, 4, 2, "{0,4}:4"}, {p4, 4, 4, 1, "{0}:4"},          \
            {p7, 7, 8, 1, "{0}:8"},                                                                \
    }

static void test_geometry_tables(void **state)
{
    (void)state;
    const struct row a100_40[] =
        LAYOUT("1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb");
    const struct row gb80[] =
        LAYOUT("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb");
    const struct row h200[] =
        LAYOUT("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb");
    const struct row b200[] =
        LAYOUT("1g.23gb", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb");
    const struct row gb200[] =
        LAYOUT("1g.24gb", "1g.47gb", "2g.47gb", "3g.93gb", "4g.93gb", "7g.186gb");
    check_model("A100-SXM4-40GB", a100_40, 6);
    check_model("A100-PCIE-40GB", a100_40, 6);
    check_model("A100-SXM4-80GB", gb80, 6);
    check_model("A100-PCIE-80GB", gb80, 6);
    check_model("H100-SXM5-80GB", gb80, 6);
    check_model("H100-PCIE-80GB", gb80, 6);
    check_model("H200", h200, 6);
    check_model("B200", b200, 6);
    check_model("GB200", gb200, 6);
    /* No MIG on these boards. */
    assert_null(mig_geometry_find("T4"));
    assert_null(mig_geometry_find("L40S"));
    assert_null(mig_geometry_find("A10"));
    /* Every placement lies within the 8 memory slices. */
    const struct mig_geometry *g = mig_geometry_find("B200");
    for (size_t i = 0; i < g->nprofiles; i++)
        for (int k = 0; k < g->profiles[i].nplacements; k++)
            assert_true(g->profiles[i].placements[k] + g->profiles[i].memory_slices <=
                        MIG_MEMORY_SLICES);
    assert_int_equal(mig_placement_count(g), 7 + 4 + 3 + 2 + 1 + 1);
}

/* Profile IDs as `nvidia-smi mig -lgip` lists them, and the engines of
 * go-nvml's mock GPUs; GB200 has no such source: engines unknown (0). */
static void test_profile_ids_and_engines(void **state)
{
    (void)state;
    static const struct {
        const char *model, *profile;
        int id, sm, ce, dec, enc, jpg, ofa;
    } rows[] = {
        {"A100-SXM4-40GB", "1g.5gb", 19, 14, 1, 0, 0, 0, 0},
        {"A100-SXM4-40GB", "1g.10gb", 15, 14, 1, 1, 0, 0, 0},
        {"A100-SXM4-40GB", "7g.40gb", 0, 98, 7, 5, 0, 1, 1},
        {"A100-SXM4-80GB", "1g.10gb", 19, 14, 1, 1, 0, 0, 0},
        {"A100-SXM4-80GB", "2g.20gb", 14, 28, 2, 1, 0, 0, 0},
        {"H100-SXM5-80GB", "4g.40gb", 5, 64, 4, 2, 0, 0, 0},
        {"H100-PCIE-80GB", "7g.80gb", 0, 112, 7, 5, 0, 0, 0},
        {"H200", "3g.71gb", 9, 48, 3, 2, 0, 0, 0},
        {"B200", "7g.180gb", 0, 126, 7, 7, 4, 4, 4},
        {"GB200", "3g.93gb", 9, 0, 0, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct mig_geometry *g = mig_geometry_find(rows[i].model);
        assert_non_null(g);
        const struct mig_profile *p = mig_profile_find(g, rows[i].profile);
        assert_non_null(p);
        const struct mig_engines *e = &p->engines;
        int got[7] = {p->id,       e->multiprocessors, e->copy_engines, e->decoders,
                      e->encoders, e->jpeg_engines,    e->ofa_engines};
        int want[7] = {rows[i].id,  rows[i].sm,  rows[i].ce, rows[i].dec,
                       rows[i].enc, rows[i].jpg, rows[i].ofa};
        for (int k = 0; k < 7; k++)
            if (got[k] != want[k])
                fail_msg("%s %s: value %d is %d, want %d", rows[i].model, rows[i].profile, k,
                         got[k], want[k]);
    }
}

static void test_instance_memory(void **state)
{
    (void)state;
    const struct mig_geometry *g = mig_geometry_find("A100-SXM4-80GB");
    const uint64_t mib = 1024 * 1024;
    assert_int_equal(mig_instance_memory(mig_profile_find(g, "3g.40gb"), 81920 * mib), 40960 * mib);
    assert_int_equal(mig_instance_memory(mig_profile_find(g, "1g.10gb"), 81920 * mib), 10240 * mib);
    /* H100 80GB: 81559 MiB, an eighth cut to whole MiB. */
    assert_int_equal(mig_instance_memory(mig_profile_find(g, "1g.10gb"), 81559 * mib), 10194 * mib);
}

static int load(const char *text, struct config *c, struct error *err)
{
    return config_load_string(text, strlen(text), "t.yaml", "n", c, err);
}

static const struct gpu_device *find(const struct config *c, const char *name)
{
    for (size_t i = 0; i < c->ndevices; i++)
        if (!strcmp(c->devices[i].name, name))
            return &c->devices[i];
    return NULL;
}

static void test_config_dynamic(void **state)
{
    (void)state;
    struct config c;
    struct error err;
    const char *text = "defaults:\n"
                       "  devices:\n"
                       "    - profile: H100-SXM5-80GB\n"
                       "      mig: {mode: dynamic}\n"
                       "    - profile: T4\n";
    if (load(text, &c, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(c.ndevices, 2 + 18);
    const struct gpu_device *gpu = find(&c, "gpu-0"), *p = find(&c, "gpu-0-mig-3g40gb-4");
    assert_non_null(gpu);
    assert_non_null(p);
    assert_int_equal(gpu->mig_mode, GPU_MIG_DYNAMIC);
    assert_int_equal(find(&c, "gpu-1")->mig_mode, GPU_MIG_OFF);
    assert_int_equal(p->mig_mode, GPU_MIG_NONE);
    assert_string_equal(p->parent, "gpu-0");
    assert_int_equal(p->parent_index, 0);
    assert_string_equal(p->mig_profile, "3g.40gb");
    assert_int_equal(p->mig_start, 4);
    assert_int_equal(p->mig_size, 4);
    assert_int_equal(p->minor, gpu->minor);
    assert_string_equal(p->pci_bus_id, gpu->pci_bus_id);
    assert_true(p->index >= 2);
    assert_memory_equal(p->uuid, "MIG-", 4);
    /* The profile's ID and engines (go-nvml's H100 mock); none on a GPU. */
    assert_int_equal(p->mig_profile_id, 9);
    assert_int_equal(p->mig_engines.multiprocessors, 48);
    assert_int_equal(p->mig_engines.copy_engines, 3);
    assert_int_equal(p->mig_engines.decoders, 2);
    assert_int_equal(gpu->mig_engines.multiprocessors, 0);
    assert_int_equal(find(&c, "gpu-0-mig-7g80gb-0")->mig_profile_id, 0);
    assert_int_equal(find(&c, "gpu-0-mig-1g10gb-6")->mig_profile_id, 19);
    /* Deterministic, and distinct per placement. */
    struct config again;
    assert_int_equal(load(text, &again, &err), 0);
    assert_string_equal(find(&again, "gpu-0-mig-3g40gb-4")->uuid, p->uuid);
    assert_string_not_equal(find(&again, "gpu-0-mig-3g40gb-0")->uuid, p->uuid);
    config_free(&again);
    config_free(&c);
}

static void test_config_static(void **state)
{
    (void)state;
    struct config c;
    struct error err;
    const char *text = "defaults:\n"
                       "  devices:\n"
                       "    - profile: A100-SXM4-80GB\n"
                       "      mig:\n"
                       "        mode: static\n"
                       "        instances:\n"
                       "          - profile: 4G.40GB\n"
                       "          - profile: 2g.20gb\n"
                       "          - profile: 1g.10gb\n"
                       "  flips:\n"
                       "    - device: gpu-0-mig-2g20gb-4\n"
                       "      after: 1s\n"
                       "      state: unhealthy\n";
    if (load(text, &c, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(c.ndevices, 4);
    assert_int_equal(c.devices[0].mig_mode, GPU_MIG_STATIC);
    /* First free placements: 4g at 0, 2g at 4, 1g at 6. */
    assert_non_null(find(&c, "gpu-0-mig-4g40gb-0"));
    assert_non_null(find(&c, "gpu-0-mig-2g20gb-4"));
    assert_non_null(find(&c, "gpu-0-mig-1g10gb-6"));
    assert_int_equal(c.nflips, 1);
    config_free(&c);
}

static void expect_error(const char *text, const char *want)
{
    struct config c;
    struct error err;
    if (load(text, &c, &err) == 0)
        fail_msg("loaded, wanted an error with \"%s\"", want);
    if (strstr(err.msg, want) == NULL)
        fail_msg("error \"%s\" does not hold \"%s\"", err.msg, want);
}

static void test_config_errors(void **state)
{
    (void)state;
    expect_error("defaults:\n  devices:\n    - profile: T4\n      mig: {mode: dynamic}\n",
                 "t.yaml:4:12: defaults.devices[0].mig: MIG needs a profile of a MIG-capable "
                 "model");
    expect_error("defaults:\n  devices:\n    - profile: H200\n      mig: {mode: sometimes}\n",
                 "t.yaml:4:19: defaults.devices[0].mig.mode: \"sometimes\" is not a MIG mode");
    expect_error("defaults:\n  devices:\n    - profile: H200\n      mig: {mode: static}\n",
                 "mode static needs an instances list");
    expect_error("defaults:\n  devices:\n    - profile: H200\n"
                 "      mig: {mode: dynamic, instances: [{profile: 7g.141gb}]}\n",
                 "instances are for mode static");
    expect_error("defaults:\n  devices:\n    - profile: H200\n"
                 "      mig: {mode: static, instances: [{profile: 3g.40gb}]}\n",
                 "defaults.devices[0].mig.instances[0].profile: H200 has no MIG profile "
                 "\"3g.40gb\" (known: 1g.18gb, 1g.35gb, 2g.35gb, 3g.71gb, 4g.71gb, 7g.141gb)");
    expect_error("defaults:\n  devices:\n    - profile: H200\n"
                 "      mig: {mode: static, instances: [{profile: 3g.71gb, placement: 2}]}\n",
                 "placement: 2 is not a placement of 3g.71gb (valid: 0, 4)");
    expect_error("defaults:\n  devices:\n    - profile: H200\n"
                 "      mig: {mode: static, instances: [{profile: 4g.71gb}, {profile: 3g.71gb, "
                 "placement: 0}]}\n",
                 "3g.71gb at placement 0 overlaps the memory slices of an instance before it");
    expect_error("defaults:\n  devices:\n    - profile: H200\n"
                 "      mig: {mode: static, instances: [{profile: 7g.141gb}, {profile: 1g.18gb}]}"
                 "\n",
                 "instances[1]: no free placement left for 1g.18gb");
    expect_error("defaults:\n  devices:\n    - profile: H200\n"
                 "      name: a-very-long-device-name-that-fills-most-of-a-dns-label-xx\n"
                 "      mig: {mode: dynamic}\n",
                 "would be longer than 63 characters");
}

/* Partitions are devices: the node limit the tree reader shares
 * (FAKEHW_TREE_MAX_DEVICES) and the limit over the file count them, before
 * any of them is made. */
static void test_config_partitions_counted(void **state)
{
    (void)state;
    struct config c;
    struct error err;
    /* 215 dynamic A100s offer 215 * 18 partitions: with 11 plain GPUs that
     * is exactly the limit, and the reader takes all of it. */
    const char *full = "defaults:\n"
                       "  devices:\n"
                       "    - {count: 215, profile: A100-SXM4-80GB, mig: {mode: dynamic}}\n"
                       "    - {count: 11, profile: L4}\n";
    if (load(full, &c, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(c.ndevices, FAKEHW_TREE_MAX_DEVICES);
    config_free(&c);
    expect_error("defaults:\n"
                 "  devices:\n"
                 "    - {count: 216, profile: A100-SXM4-80GB, mig: {mode: dynamic}}\n",
                 "t.yaml:3:7: defaults.devices[0]: this brings the node to 4104 devices (216 GPUs "
                 "and 3888 MIG partitions), more than 4096");
    expect_error("defaults:\n"
                 "  devices:\n"
                 "    - {count: 4090, profile: L4}\n"
                 "    - {profile: H200, mig: {mode: static, instances: [{profile: 1g.18gb}, "
                 "{profile: 1g.18gb}, {profile: 1g.18gb}, {profile: 1g.18gb}, {profile: 1g.18gb}, "
                 "{profile: 1g.18gb}]}}\n",
                 "t.yaml:4:7: defaults.devices[1]: this brings the node to 4097 devices (4091 GPUs "
                 "and 6 MIG partitions), more than 4096");
    /* Over the file: 16 sections of 4085 devices fit in 65536, a 17th does not. */
    char text[4096];
    size_t used = (size_t)snprintf(text, sizeof(text), "nodes:\n");
    for (int i = 0; i < 17; i++)
        used += (size_t)snprintf(text + used, sizeof(text) - used,
                                 "  - {name: n%d, devices: [{count: 215, profile: A100-SXM4-80GB, "
                                 "mig: {mode: dynamic}}]}\n",
                                 i);
    assert_true(used < sizeof(text));
    expect_error(text, "t.yaml:18:27: nodes[16].devices[0]: the config has more than 65536 "
                       "devices (GPUs and MIG partitions) over all sections; use globs");
}

/* Every partition gets at least a MiB; an empty list of instances is a mistake. */
static void test_config_mig_minimums(void **state)
{
    (void)state;
    struct config c;
    struct error err;
    expect_error("defaults:\n  devices:\n    - profile: H200\n      memory: 1Mi\n"
                 "      mig: {mode: dynamic}\n",
                 "t.yaml:5:12: defaults.devices[0].mig: MIG needs at least 8388608 bytes of memory "
                 "(1Mi for each of the 8 memory slices); this GPU has 1048576, which leaves its "
                 "smallest partitions empty");
    const char *eight = "defaults:\n  devices:\n    - profile: H200\n      memory: 8Mi\n"
                        "      mig: {mode: dynamic}\n";
    if (load(eight, &c, &err) != 0)
        fail_msg("%s", err.msg);
    for (size_t i = 0; i < c.ndevices; i++)
        assert_true(c.devices[i].memory_bytes >= 1024 * 1024);
    config_free(&c);
    expect_error("defaults:\n  devices:\n    - profile: H200\n"
                 "      mig: {mode: static, instances: []}\n",
                 "t.yaml:4:38: defaults.devices[0].mig.instances: an empty list: mode static needs "
                 "at least one instance (mode off for none)");
}

/* A parent's flip reaches its partitions; a partition's own flip stays its own. */
static void test_parent_health_reaches_partitions(void **state)
{
    (void)state;
    struct config c;
    struct error err;
    const char *text = "defaults:\n  devices:\n    - profile: A100-SXM4-40GB\n"
                       "      mig: {mode: static, instances: [{profile: 3g.20gb}, "
                       "{profile: 3g.20gb}]}\n";
    if (load(text, &c, &err) != 0)
        fail_msg("%s", err.msg);
    struct live_inventory *inv = inventory_new("n", "", c.devices, c.ndevices, &err);
    assert_non_null(inv);
    char buf[INVENTORY_FILE_MAX];
    size_t len;
    int64_t mtime;
    uint64_t gen;
#define READ(dev, file)                                                                            \
    (assert_int_equal(                                                                             \
         inventory_read_file(inv, dev, file, buf, sizeof(buf), &len, &mtime, &gen, &err), 0),      \
     buf)
    assert_string_equal(READ("gpu-0-mig-3g20gb-4", FAKEHW_ATTR(MIG_PLACEMENT)), "4:4\n");
    assert_string_equal(READ("gpu-0-mig-3g20gb-4", FAKEHW_ATTR(PARENT)), "gpu-0\n");
    assert_string_equal(READ("gpu-0", FAKEHW_ATTR(MIG_MODE)), "static\n");
    assert_string_equal(READ("gpu-0", FAKEHW_ATTR(MIG_PLACEMENT)), "\n");
    assert_string_equal(READ("gpu-0-mig-3g20gb-0", FAKEHW_ATTR(MIG_MODE)), "\n");

    assert_int_equal(inventory_set_health(inv, "gpu-0-mig-3g20gb-4", false, "XID 94", &err), 0);
    assert_string_equal(READ("gpu-0-mig-3g20gb-4", FAKEHW_ATTR(HEALTH)), "unhealthy\n");
    assert_string_equal(READ("gpu-0-mig-3g20gb-0", FAKEHW_ATTR(HEALTH)), "healthy\n");
    assert_string_equal(READ("gpu-0", FAKEHW_ATTR(HEALTH)), "healthy\n");

    assert_int_equal(inventory_set_health(inv, "gpu-0", false, "XID 79", &err), 0);
    assert_string_equal(READ("gpu-0-mig-3g20gb-0", FAKEHW_ATTR(HEALTH)), "unhealthy\n");
    assert_string_equal(READ("gpu-0-mig-3g20gb-0", FAKEHW_ATTR(HEALTH_REASON)),
                        "parent gpu-0 is unhealthy: XID 79\n");
    /* Its own reason wins while it is unhealthy itself. */
    assert_string_equal(READ("gpu-0-mig-3g20gb-4", FAKEHW_ATTR(HEALTH_REASON)), "XID 94\n");

    assert_int_equal(inventory_set_health(inv, "gpu-0", true, NULL, &err), 0);
    assert_string_equal(READ("gpu-0-mig-3g20gb-0", FAKEHW_ATTR(HEALTH)), "healthy\n");
    assert_string_equal(READ("gpu-0-mig-3g20gb-0", FAKEHW_ATTR(HEALTH_REASON)), "\n");
    assert_string_equal(READ("gpu-0-mig-3g20gb-4", FAKEHW_ATTR(HEALTH)), "unhealthy\n");
#undef READ
    inventory_free(inv);
    config_free(&c);
}

TEST_MAIN("fakehw mig", test_geometry_tables, test_profile_ids_and_engines, test_instance_memory,
          test_config_dynamic, test_config_static, test_config_errors,
          test_config_partitions_counted, test_config_mig_minimums,
          test_parent_health_reaches_partitions)
