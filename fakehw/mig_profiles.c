// SPDX-License-Identifier: Apache-2.0
/* MIG geometry per model: see mig_profiles.h.  The placements are those
 * `nvidia-smi mig -lgipp` lists on the real boards. */
#include "mig_profiles.h"

#include <stdio.h>
#include <strings.h>

#include "text_list.h"

/* The layout is the same on every 8-memory-slice GPU, and so are the
 * profile IDs; only the names (the memory in GB) and the engines change
 * with the board.  An engine count is a tuple (multiprocessors, copy
 * engines, decoders, encoders, JPEG engines, OFA engines), made an
 * initializer by ENG once PROFILES_ has its twelve arguments. */
#define ENG(sm, ce, dec, enc, jpg, ofa)                                                            \
    {                                                                                              \
        sm, ce, dec, enc, jpg, ofa                                                                 \
    }
#define PROFILES_(p1, p1x2, p2, p3, p4, p7, e1, e1x2, e2, e3, e4, e7)                              \
    {                                                                                              \
        {p1, 1, 1, 7, {0, 1, 2, 3, 4, 5, 6}, 19, ENG e1},                                          \
            {p1x2, 1, 2, 4, {0, 2, 4, 6}, 15, ENG e1x2}, {p2, 2, 2, 3, {0, 2, 4}, 14, ENG e2},     \
            {p3, 3, 4, 2, {0, 4}, 9, ENG e3}, {p4, 4, 4, 1, {0}, 5, ENG e4},                       \
            {p7, 7, 8, 1, {0}, 0, ENG e7},                                                         \
    }
/* PROFILES(six names, engines): the engines expand to six tuples first. */
#define PROFILES(...) PROFILES_(__VA_ARGS__)

/* The engines of the six profiles, smallest first: the A100s differ in the
 * 1g profile's decoders, H100 and H200 (one die) not at all. */
#define A100_ENGINES(dec_1g)                                                                       \
    (14, 1, dec_1g, 0, 0, 0), (14, 1, 1, 0, 0, 0), (28, 2, 1, 0, 0, 0), (42, 3, 2, 0, 0, 0),       \
        (56, 4, 2, 0, 0, 0), (98, 7, 5, 0, 1, 1)
#define HOPPER_ENGINES                                                                             \
    (16, 1, 1, 0, 0, 0), (16, 1, 1, 0, 0, 0), (32, 2, 1, 0, 0, 0), (48, 3, 2, 0, 0, 0),            \
        (64, 4, 2, 0, 0, 0), (112, 7, 5, 0, 0, 0)
#define B200_ENGINES                                                                               \
    (18, 1, 1, 0, 0, 0), (18, 1, 1, 0, 0, 0), (36, 2, 2, 1, 1, 1), (54, 3, 3, 2, 2, 2),            \
        (72, 4, 4, 2, 2, 2), (126, 7, 7, 4, 4, 4)
#define UNKNOWN         (0, 0, 0, 0, 0, 0)
#define UNKNOWN_ENGINES UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN

static const struct mig_profile a100_40[] =
    PROFILES("1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb", A100_ENGINES(0));
static const struct mig_profile a100_80[] =
    PROFILES("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", A100_ENGINES(1));
static const struct mig_profile h100[] =
    PROFILES("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", HOPPER_ENGINES);
static const struct mig_profile h200[] =
    PROFILES("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb", HOPPER_ENGINES);
static const struct mig_profile b200[] =
    PROFILES("1g.23gb", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb", B200_ENGINES);
static const struct mig_profile gb200[] =
    PROFILES("1g.24gb", "1g.47gb", "2g.47gb", "3g.93gb", "4g.93gb", "7g.186gb", UNKNOWN_ENGINES);

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct mig_geometry geometries[] = {
    {"A100-SXM4-40GB", a100_40, N(a100_40)},
    {"A100-PCIE-40GB", a100_40, N(a100_40)},
    {"A100-SXM4-80GB", a100_80, N(a100_80)},
    {"A100-PCIE-80GB", a100_80, N(a100_80)},
    {"H100-SXM5-80GB", h100, N(h100)},
    {"H100-PCIE-80GB", h100, N(h100)},
    {"H200", h200, N(h200)},
    {"B200", b200, N(b200)},
    {"GB200", gb200, N(gb200)},
};

const struct mig_geometry *mig_geometry_find(const char *model)
{
    for (size_t i = 0; i < N(geometries); i++)
        if (!strcasecmp(geometries[i].model, model))
            return &geometries[i];
    return NULL;
}

const struct mig_profile *mig_profile_find(const struct mig_geometry *g, const char *name)
{
    for (size_t i = 0; i < g->nprofiles; i++)
        if (!strcasecmp(g->profiles[i].name, name))
            return &g->profiles[i];
    return NULL;
}

bool mig_placement_valid(const struct mig_profile *p, int start)
{
    for (int i = 0; i < p->nplacements; i++)
        if (p->placements[i] == start)
            return true;
    return false;
}

uint64_t mig_instance_memory(const struct mig_profile *p, uint64_t gpu_memory_bytes)
{
    const uint64_t mib = 1024 * 1024;
    return gpu_memory_bytes / mib * (uint64_t)p->memory_slices / MIG_MEMORY_SLICES * mib;
}

size_t mig_placement_count(const struct mig_geometry *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->nprofiles; i++)
        n += (size_t)g->profiles[i].nplacements;
    return n;
}

void mig_profile_names(const struct mig_geometry *g, char *buf, size_t size)
{
    struct text_list l = text_list_start(buf, size);
    for (size_t i = 0; i < g->nprofiles; i++)
        text_list_add(&l, "%s", g->profiles[i].name);
}
