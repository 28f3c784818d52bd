// SPDX-License-Identifier: Apache-2.0
/* Which GPUs fakegpu-smi shows: the devices of the tree, filtered by
 * FAKEHW_VISIBLE_DEVICES and numbered 0..n-1 in device index order (as
 * nvidia-smi numbers the GPUs a container was given), then narrowed by -i. */
#ifndef FAKEHW_SMI_SMI_SELECT_H
#define FAKEHW_SMI_SMI_SELECT_H

#include <stddef.h>
#include <stdio.h>

#include "error.h"
#include "fakehw_tree.h"
#include "smi_fields.h"

/* Fills gpus (room for n) with the devices visible under `visible`, the value
 * of FAKEHW_VISIBLE_DEVICES: NULL or "all" = every device; "", "none" or
 * "void" = none; else comma-separated UUIDs.  devs must be sorted by index.
 * MIG partitions are not rows of their own: a GPU is shown when it or one
 * of its partitions is visible, and lists its visible partitions (with
 * "all": the instances of a static-mode GPU; a dynamic-mode placement only
 * when its MIG UUID is named, as it exists only once allocated).
 * Each listed UUID that is not among devs gets a warning on warn.  Returns
 * the number of visible GPUs. */
size_t smi_visible(const struct fakehw_device *devs, size_t n, const char *visible,
                   struct smi_gpu *gpus, FILE *warn);

/* The visibility list a container was given, from its environment: the
 * values of every FAKEHW_DEVICE_<i>_UUID variable joined by commas when there
 * are any (each device's own variable, so two claims in one container never
 * overwrite each other), else FAKEHW_VISIBLE_DEVICES (one per claim: the last
 * claim's value wins when a container has several), else NULL (all).  The
 * result is malloc'ed when it is a join (*owned set), else borrowed. */
const char *smi_visible_from_env(char **envp, char **owned);

/* Sets the share of each GPU and of each of its MIG devices from the
 * device's FAKEHW_DEVICE_<index>_MEMORY (bytes, decimal: the memory its
 * share was granted) and FAKEHW_DEVICE_<index>_SHARE_ID variables; a
 * malformed value is ignored with a warning on warn (a malformed memory
 * means no share). */
void smi_shares(struct smi_gpu *gpus, size_t n, FILE *warn);

/* Keeps the GPUs that -i/--id names (comma-separated; each an index as shown,
 * a UUID or a PCI bus id in either form), in their order; updates *n.  Fails
 * naming the first id that matches no GPU. */
int smi_select_ids(struct smi_gpu *gpus, size_t *n, const char *ids, struct error *err);

#endif
