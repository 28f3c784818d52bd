// SPDX-License-Identifier: Apache-2.0
/* fakehw-tree-dump: what fakehw_tree_list (common/fakehw/fakehw_tree_read.c) reads from
 * a tree, one "device field value" line per attribute, for the bats suite
 * to compare the snapshot read with the per-file walk; with --time N it
 * reads N times and prints the fastest, median and slowest read in ms. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakehw_attach.h"
#include "fakehw_tree_read.h"
#include "monotonic.h"

static void dump(const struct fakehw_device *d, size_t n)
{
    for (size_t i = 0; i < n; i++, d++) {
        printf("%s name %s\n", d->name, d->name);
        printf("%s index %ld\n", d->name, d->index);
        printf("%s uuid %s\n", d->name, d->uuid);
        printf("%s productName %s\n", d->name, d->product_name);
        printf("%s architecture %s\n", d->name, d->architecture);
        printf("%s brand %s\n", d->name, d->brand);
        printf("%s memory %" PRIu64 "\n", d->name, d->memory_bytes);
        printf("%s computeCapability %s\n", d->name, d->compute_capability);
        printf("%s driverVersion %s\n", d->name, d->driver_version);
        printf("%s cudaDriverVersion %s\n", d->name, d->cuda_driver_version);
        printf("%s pciBusID %s\n", d->name, d->pci_bus_id);
        printf("%s pcieRoot %s\n", d->name, d->pcie_root);
        printf("%s numaNode %ld\n", d->name, d->numa_node);
        printf("%s minor %ld\n", d->name, d->minor);
        printf("%s devicePath %s\n", d->name, d->device_path);
        printf("%s health %s\n", d->name, d->healthy ? FAKEHW_HEALTHY : FAKEHW_UNHEALTHY);
        printf("%s healthReason %s\n", d->name, d->health_reason);
        printf("%s healthSince %" PRId64 "\n", d->name, d->health_since);
        printf("%s attach %s\n", d->name, fakehw_attach_name(d->attach));
        printf("%s attachFailure %s\n", d->name, fakehw_attach_failure_name(d->attach_failure));
        printf("%s attachDelayMs %" PRId64 "\n", d->name, d->attach_delay_ms);
        printf("%s virtual %s\n", d->name, d->virtual_gpu ? "true" : "false");
    }
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long times = 0;
    if (argc == 4 && !strcmp(argv[1], "--time")) {
        times = strtol(argv[2], NULL, 10);
        argv += 2;
        argc -= 2;
    }
    if (argc != 2 || times < 0 || times > 10000) {
        fprintf(stderr, "usage: fakehw-tree-dump [--time N] ROOT\n");
        return 2;
    }
    double *ms = times ? calloc((size_t)times, sizeof(*ms)) : NULL;
    if (times && ms == NULL)
        return 1;
    struct fakehw_device *devs = NULL;
    size_t n = 0;
    struct error err;
    for (long i = 0; i < (times ? times : 1); i++) {
        free(devs);
        devs = NULL;
        double t0 = (double)monotonic_ns() / 1e6;
        if (fakehw_tree_list(argv[1], &devs, &n, &err) < 0) {
            fprintf(stderr, "fakehw-tree-dump: %s\n", err.msg);
            free(ms);
            return 1;
        }
        if (times)
            ms[i] = (double)monotonic_ns() / 1e6 - t0;
    }
    if (times) {
        qsort(ms, (size_t)times, sizeof(*ms), compare_doubles);
        printf("%zu devices, %ld reads: min %.2f ms, median %.2f ms, max %.2f ms\n", n, times,
               ms[0], ms[times / 2], ms[times - 1]);
    } else {
        dump(devs, n);
    }
    free(devs);
    free(ms);
    return 0;
}
