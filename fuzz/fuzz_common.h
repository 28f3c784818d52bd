// SPDX-License-Identifier: Apache-2.0
/* Helpers shared by the libFuzzer targets of fuzz/: a scratch directory,
 * whole-file writes, a fake inventory of FUZZ_NDEVS devices (gpu-0 ...) and
 * a prepare state on scratch directories.  A helper that cannot do its job
 * aborts: a broken harness must never look like a quiet fuzz run. */
#ifndef FAKEHW_FUZZ_COMMON_H
#define FAKEHW_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "driver/prepare/prepare.h"
#include "fakehw_tree.h"

#define FUZZ_DRIVER "gpu.fakehw.example.com"
#define FUZZ_NODE   "node-1"
#define FUZZ_NDEVS  8

/* A new directory under $TMPDIR (or /tmp), removed at exit. */
const char *fuzz_scratch_dir(const char *name);

/* Writes data to dir/name (replacing it). */
void fuzz_write_file(const char *dir, const char *name, const uint8_t *data, size_t size);

/* Device i of the fake inventory (0 <= i < FUZZ_NDEVS). */
void fuzz_device(size_t i, struct fakehw_device *dev);

/* A prepare state with plugin and CDI directories under a scratch
 * directory; every claim fetch fails (404) unless fetch is given. */
struct prepare_state *fuzz_prepare_state(claim_fetch_fn fetch, void *fetch_ctx);

#endif
