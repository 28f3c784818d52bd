// SPDX-License-Identifier: Apache-2.0
/* fakegpu-smi's --query-gpu fields and CSV output, in nvidia-smi's format:
 *   index, name, memory.total [MiB]
 *   0, NVIDIA A100-SXM4-80GB, 81920 MiB
 * ("noheader" drops the first line, "nounits" drops " MiB" from values; the
 * header keeps its "[MiB]" as nvidia-smi's does). */
#ifndef FAKEHW_SMI_SMI_FIELDS_H
#define FAKEHW_SMI_SMI_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "fakehw_tree.h"

/* One GPU as the container sees it: numbered 0..n-1 in device index order. */
/* Most MIG devices listed under one GPU. */
#define SMI_MIG_MAX      32
#define SMI_SHARE_ID_MAX 64 /* as the driver's allocation results allow */

/* A share of a device shared by memory (docs/prepare.md): the memory its
 * claim consumed (FAKEHW_DEVICE_<index>_MEMORY) and its shareID
 * (FAKEHW_DEVICE_<index>_SHARE_ID, "" when unset).  memory 0: no share. */
struct smi_share {
    uint64_t memory;
    char id[SMI_SHARE_ID_MAX + 1];
};

struct smi_gpu {
    unsigned index;
    const struct fakehw_device *dev;
    /* Its visible MIG devices (partitions), in placement order. */
    const struct fakehw_device *migs[SMI_MIG_MAX];
    size_t nmig;
    /* The GPU's share (memory.total then shows its memory) and each MIG
     * device's. */
    struct smi_share share;
    struct smi_share mig_shares[SMI_MIG_MAX];
};

#define SMI_QUERY_MAX 64

struct smi_field;

struct smi_query {
    size_t n;
    const struct smi_field *fields[SMI_QUERY_MAX];
};

struct smi_format {
    bool header;
    bool units;
};

/* Parses "index,uuid,name" (blanks around names allowed).  A name that is
 * no nvidia-smi field fails with nvidia-smi's words: Field "x" is not a
 * valid field to query.  One of nvidia-smi's that fakegpu-smi does not
 * implement fails naming the fields it does. */
int smi_query_parse(const char *list, struct smi_query *q, struct error *err);

/* Parses "csv", "csv,noheader", "csv,nounits", "csv,noheader,nounits" (any order). */
int smi_format_parse(const char *text, struct smi_format *f, struct error *err);

/* Prints the header (unless noheader) and one line per GPU; count is the
 * number of visible GPUs (the "count" field). */
void smi_print_csv(FILE *out, const struct smi_query *q, const struct smi_format *f,
                   const struct smi_gpu *gpus, size_t n, size_t count);

/* Prints "GPU 0: <name> (UUID: <uuid>)" per GPU, like nvidia-smi -L, and
 * under it "  MIG 3g.40gb     Device  0: (UUID: MIG-...)" per MIG device.
 * A share adds "  Share <shareID>: <N> MiB" under its GPU, or
 * "    Share <shareID>: <N> MiB" under its MIG device (shareID "-" when
 * the allocation gave none). */
void smi_print_list(FILE *out, const struct smi_gpu *gpus, size_t n);

/* Lists the fields, their aliases and what they hold (--help-query-gpu). */
void smi_print_fields_help(FILE *out);

/* Calls fn(item, len, ctx) for each comma-separated item of list, blanks
 * around it trimmed (items are not NUL-terminated); stops at fn's first -1. */
int smi_each_item(const char *list, int (*fn)(const char *item, size_t len, void *ctx), void *ctx);

/* "0000:18:00.0" -> "00000000:18:00.0" as nvidia-smi prints it (8-digit
 * domain, upper-case hex).  Returns -1 when id is not a PCI bus id. */
int smi_pci_bus_id(const char *id, char *out, size_t size);

/* "0000:18:00.0" -> domain, bus, device, function; -1 when id is not a
 * PCI bus id. */
int smi_pci_parts(const char *id, unsigned parts[4]);

/* The GPU's memory in MiB, rounded down: its share's when it has one. */
uint64_t smi_memory_mib(const struct smi_gpu *g);

/* nvidia-smi's MIG mode of a GPU: "Enabled" (fakehw migMode static or
 * dynamic), "Disabled" (off), NULL when the tree has no migMode. */
const char *smi_mig_mode(const struct fakehw_device *d);

#endif
