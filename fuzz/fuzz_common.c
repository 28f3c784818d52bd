// SPDX-License-Identifier: Apache-2.0
#include "fuzz_common.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void die(const char *what)
{
    perror(what);
    abort();
}

static char scratch_root[256];

static void remove_scratch(void)
{
    char cmd[300];
    if (scratch_root[0] == '\0')
        return;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch_root);
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz: could not remove %s\n", scratch_root);
}

const char *fuzz_scratch_dir(const char *name)
{
    if (scratch_root[0] == '\0') {
        const char *tmp = getenv("TMPDIR");
        snprintf(scratch_root, sizeof(scratch_root), "%s/fakehw-fuzz.XXXXXX",
                 tmp && tmp[0] ? tmp : "/tmp");
        if (mkdtemp(scratch_root) == NULL)
            die("mkdtemp");
        atexit(remove_scratch);
    }
    static char dirs[8][320];
    static size_t n;
    if (n == 8)
        abort();
    snprintf(dirs[n], sizeof(dirs[n]), "%s/%s", scratch_root, name);
    if (mkdir(dirs[n], 0755) < 0)
        die(dirs[n]);
    return dirs[n++];
}

void fuzz_write_file(const char *dir, const char *name, const uint8_t *data, size_t size)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die(path);
    for (size_t done = 0; done < size;) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0)
            die(path);
        done += (size_t)w;
    }
    close(fd);
}

void fuzz_device(size_t i, struct fakehw_device *d)
{
    memset(d, 0, sizeof(*d));
    snprintf(d->name, sizeof(d->name), "gpu-%zu", i);
    d->index = (long)i;
    d->minor = (long)i;
    snprintf(d->uuid, sizeof(d->uuid), "GPU-a0a0a0a0-0000-4000-8000-%012zx", i);
    snprintf(d->product_name, sizeof(d->product_name), "NVIDIA H100 80GB HBM3");
    snprintf(d->architecture, sizeof(d->architecture), "Hopper");
    snprintf(d->brand, sizeof(d->brand), "Nvidia");
    d->memory_bytes = 85520809984ULL;
    snprintf(d->compute_capability, sizeof(d->compute_capability), "9.0");
    snprintf(d->driver_version, sizeof(d->driver_version), "580.95.05");
    snprintf(d->cuda_driver_version, sizeof(d->cuda_driver_version), "13.0");
    snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "0000:%02zx:00.0", 0x18 + i);
    snprintf(d->pcie_root, sizeof(d->pcie_root), "pci0000:17");
    d->numa_node = (long)(i / 4);
    snprintf(d->device_path, sizeof(d->device_path), "/dev/fakegpu%zu", i);
    d->healthy = i != 3;
    snprintf(d->health_reason, sizeof(d->health_reason), "%s", i == 3 ? "XID 79" : "");
    d->health_since = 1732252380;
}

static int fetch_404(void *ctx, const struct claim_ref *ref, json_t **claim, struct error *err)
{
    (void)ctx;
    (void)claim;
    return error_set(err, "GET /apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s: 404",
                     ref->ns, ref->name);
}

/* MIG partitions of gpu-0 for prepare's lookups: overlapping ones, so the
 * allocation checks have something to find. */
static const struct {
    const char *name;
    long start, size;
} fuzz_partitions[] = {
    {"gpu-0-mig-7g80gb-0", 0, 8}, {"gpu-0-mig-4g40gb-0", 0, 4}, {"gpu-0-mig-3g40gb-4", 4, 4},
    {"gpu-0-mig-2g20gb-2", 2, 2}, {"gpu-0-mig-1g10gb-3", 3, 1},
};

static int lookup(void *ctx, const char *name, struct fakehw_device *dev, struct error *err)
{
    (void)ctx;
    for (size_t i = 0; i < FUZZ_NDEVS; i++) {
        char n[32];
        snprintf(n, sizeof(n), "gpu-%zu", i);
        if (!strcmp(n, name)) {
            fuzz_device(i, dev);
            /* gpu-2 is shared by memory: default 10Gi, min 1Gi, step 1Gi. */
            if (i == 2) {
                dev->memory_sharing[0] = 10ULL << 30;
                dev->memory_sharing[1] = 1ULL << 30;
                dev->memory_sharing[2] = 1ULL << 30;
            }
            return 0;
        }
    }
    for (size_t k = 0; k < sizeof(fuzz_partitions) / sizeof(fuzz_partitions[0]); k++) {
        if (strcmp(fuzz_partitions[k].name, name) != 0)
            continue;
        fuzz_device(0, dev);
        snprintf(dev->name, sizeof(dev->name), "%s", name);
        snprintf(dev->parent, sizeof(dev->parent), "gpu-0");
        dev->index = (long)(FUZZ_NDEVS + k);
        dev->mig_placement[0] = fuzz_partitions[k].start;
        dev->mig_placement[1] = fuzz_partitions[k].size;
        dev->memory_bytes = dev->memory_bytes / 8 * (uint64_t)fuzz_partitions[k].size;
        return 0;
    }
    return error_set(err, "device %s not found", name);
}

struct prepare_state *fuzz_prepare_state(claim_fetch_fn fetch, void *fetch_ctx)
{
    static struct prepare_config cfg;
    cfg = (struct prepare_config){
        .driver_name = FUZZ_DRIVER,
        .node_name = FUZZ_NODE,
        .plugin_dir = fuzz_scratch_dir("plugin"),
        .cdi_root = fuzz_scratch_dir("cdi"),
        .fakehw_host_root = "/var/run/fakehw",
        .fakegpu_smi = "",
        .device_metadata = true,
        .fetch_claim = fetch ? fetch : fetch_404,
        .lookup_device = lookup,
        .fetch_ctx = fetch_ctx,
    };
    struct error err;
    struct prepare_state *st = prepare_state_open(&cfg, &err);
    if (st == NULL) {
        fprintf(stderr, "fuzz: prepare_state_open: %s\n", err.msg);
        abort();
    }
    return st;
}
