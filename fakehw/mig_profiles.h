// SPDX-License-Identifier: Apache-2.0
/* MIG geometry of the catalogue models that support MIG, as NVIDIA's MIG
 * user guide ("Supported MIG Profiles") documents it: per model the GPU
 * instance profiles, each with its compute slices (of 7), memory slices (of
 * 8) and the placements it may start at.  A placement of profile p at start
 * s occupies memory slices s .. s+p.memory_slices-1; two instances fit on
 * one GPU when their memory slices do not overlap (what the scheduler
 * checks through the shared counters the plugin publishes).
 *
 * Left out: the "+me" (media extension) variants, which differ from their
 * base profile only by the decoders a single instance may take.
 *
 * Each profile also carries what NVML's GPU instance profile info reports
 * and NVIDIA's DRA driver publishes: the profile ID (`nvidia-smi mig -lgip`,
 * part of that driver's MIG device names) and the engine counts, as
 * go-nvml's mock GPUs (pkg/nvml/mock/gpus) give them for the A100 40GB and
 * 80GB, H100, H200 and B200.  A model without such a source (GB200) has
 * engine counts 0: unknown. */
#ifndef FAKEHW_MIG_PROFILES_H
#define FAKEHW_MIG_PROFILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MIG_MEMORY_SLICES    8 /* every model here; the A30 (4) is not in the catalogue */
#define MIG_COMPUTE_SLICES   7
#define MIG_PROFILE_NAME_MAX 16
#define MIG_MAX_PLACEMENTS   8

/* Engines of one GPU instance; multiprocessors 0 means not known. */
struct mig_engines {
    int multiprocessors, copy_engines, decoders, encoders, jpeg_engines, ofa_engines;
};

struct mig_profile {
    const char *name;   /* "3g.40gb", as nvidia-smi names it */
    int compute_slices; /* the "3g" */
    int memory_slices;  /* eighths of the memory */
    int nplacements;    /* valid starts, in order */
    int placements[MIG_MAX_PLACEMENTS];
    int id; /* GPU instance profile ID: 19 for 1g, 15, 14, 9, 5, 0 for 7g */
    struct mig_engines engines;
};

struct mig_geometry {
    const char *model; /* catalogue profile name, e.g. "A100-SXM4-80GB" */
    const struct mig_profile *profiles;
    size_t nprofiles;
};

/* The geometry of a catalogue model (case-insensitive), or NULL when the
 * model does not support MIG. */
const struct mig_geometry *mig_geometry_find(const char *model);

/* The profile of g called name ("3g.40gb", case-insensitive), or NULL. */
const struct mig_profile *mig_profile_find(const struct mig_geometry *g, const char *name);

/* True when start is a valid placement of p. */
bool mig_placement_valid(const struct mig_profile *p, int start);

/* Memory of an instance: memory_slices eighths of the GPU's memory, cut to
 * whole MiB (the driver reports instance memory in MiB). */
uint64_t mig_instance_memory(const struct mig_profile *p, uint64_t gpu_memory_bytes);

/* Number of placements over all profiles of g: the partitions a GPU in
 * dynamic mode offers. */
size_t mig_placement_count(const struct mig_geometry *g);

/* Writes "1g.10gb, 1g.20gb, ..." into buf (cut to fit), for messages. */
void mig_profile_names(const struct mig_geometry *g, char *buf, size_t size);

#endif
