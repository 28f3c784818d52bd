// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the strict fakehw tree reader (common/fakehw/fakehw_tree.c), on
 * plain directories built in /tmp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fakehw_tree_read.h"
#include "common/tests/test_main.h"
#include "common/tests/tmp_dir.h"

struct tree {
    char root[64];
};

static void write_file(const char *root, const char *rel, const char *content)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(content, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static void write_attr(const char *root, const char *dev, const char *attr, const char *content)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "devices/%s/%s", dev, attr);
    write_file(root, rel, content);
}

/* A complete, valid device directory, as fakehw serves it. */
static void make_device(const char *root, const char *name, int index, const char *uuid)
{
    char path[512], v[256];
    snprintf(path, sizeof(path), "%s/devices/%s", root, name);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(v, sizeof(v), "%s\n", name);
    write_attr(root, name, "name", v);
    snprintf(v, sizeof(v), "%d\n", index);
    write_attr(root, name, "index", v);
    write_attr(root, name, "minor", v);
    snprintf(v, sizeof(v), "%s\n", uuid);
    write_attr(root, name, "uuid", v);
    write_attr(root, name, "productName", "NVIDIA H100 80GB HBM3\n");
    write_attr(root, name, "architecture", "Hopper\n");
    write_attr(root, name, "brand", "Nvidia\n");
    write_attr(root, name, "memory", "85520809984\n");
    write_attr(root, name, "computeCapability", "9.0\n");
    write_attr(root, name, "driverVersion", "550.127.05\n");
    write_attr(root, name, "cudaDriverVersion", "12.4\n");
    snprintf(v, sizeof(v), "0000:%02x:00.0\n", 0x18 + index);
    write_attr(root, name, "pciBusID", v);
    write_attr(root, name, "pcieRoot", "pci0000:17\n");
    write_attr(root, name, "numaNode", "1\n");
    snprintf(v, sizeof(v), "/dev/fakegpu%d\n", index);
    write_attr(root, name, "devicePath", v);
    write_attr(root, name, "health", "healthy\n");
    write_attr(root, name, "healthReason", "\n");
    write_attr(root, name, "healthSince", "1732252380\n");
}

static int setup(void **state)
{
    struct tree *t = calloc(1, sizeof(*t));
    if (t == NULL || !tmp_dir_make(t->root, sizeof(t->root), "test_fakehw_tree"))
        return -1;
    char path[128];
    snprintf(path, sizeof(path), "%s/devices", t->root);
    if (mkdir(path, 0755) < 0)
        return -1;
    write_file(t->root, "node", "kind-worker\n");
    write_file(t->root, "generation", "42\n");
    make_device(t->root, "gpu-0", 0, "GPU-a0a0a0a0-0000-4000-8000-000000000000");
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    struct tree *t = *state;
    int rc = tmp_dir_remove(t->root);
    free(t);
    return rc;
}

static void test_read_device_good(void **state)
{
    struct tree *t = *state;
    struct fakehw_device d;
    struct error err;
    assert_int_equal(fakehw_tree_read_device(t->root, "gpu-0", &d, &err), 0);
    assert_string_equal(d.name, "gpu-0");
    assert_int_equal(d.index, 0);
    assert_string_equal(d.uuid, "GPU-a0a0a0a0-0000-4000-8000-000000000000");
    assert_string_equal(d.product_name, "NVIDIA H100 80GB HBM3");
    assert_string_equal(d.architecture, "Hopper");
    assert_string_equal(d.brand, "Nvidia");
    assert_true(d.memory_bytes == 85520809984ULL);
    assert_string_equal(d.compute_capability, "9.0");
    assert_string_equal(d.driver_version, "550.127.05");
    assert_string_equal(d.cuda_driver_version, "12.4");
    assert_string_equal(d.pci_bus_id, "0000:18:00.0");
    assert_string_equal(d.pcie_root, "pci0000:17");
    assert_int_equal(d.numa_node, 1);
    assert_int_equal(d.minor, 0);
    assert_string_equal(d.device_path, "/dev/fakegpu0");
    assert_true(d.healthy);
    assert_string_equal(d.health_reason, "");
    assert_int_equal(d.health_since, 1732252380);

    /* An unhealthy device with a reason, a value without "\n", no NUMA node. */
    write_attr(t->root, "gpu-0", "health", "unhealthy\n");
    write_attr(t->root, "gpu-0", "healthReason", "XID 79: fallen off the bus\n");
    write_attr(t->root, "gpu-0", "numaNode", "-1");
    write_attr(t->root, "gpu-0", "devicePath", "");
    assert_int_equal(fakehw_tree_read_device(t->root, "gpu-0", &d, &err), 0);
    assert_false(d.healthy);
    assert_string_equal(d.health_reason, "XID 79: fallen off the bus");
    assert_int_equal(d.numa_node, -1);
    assert_string_equal(d.device_path, "");
}

static void test_list_sorted_by_index_then_name(void **state)
{
    struct tree *t = *state;
    make_device(t->root, "gpu-10", 2, "GPU-a0a0a0a0-0000-4000-8000-000000000010");
    make_device(t->root, "gpu-2", 1, "GPU-a0a0a0a0-0000-4000-8000-000000000002");
    /* Hidden entries (e.g. temp files of an atomic write) are not devices. */
    write_file(t->root, "devices/.tmp.123", "x\n");
    struct fakehw_device *devs = NULL;
    size_t n = 0;
    struct error err;
    assert_int_equal(fakehw_tree_list(t->root, &devs, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_string_equal(devs[0].name, "gpu-0");
    assert_string_equal(devs[1].name, "gpu-2");
    assert_string_equal(devs[2].name, "gpu-10");
    free(devs);
}

static void test_list_empty_and_missing(void **state)
{
    struct tree *t = *state;
    char path[256];
    snprintf(path, sizeof(path), "%s/devices/gpu-0", t->root);
    tmp_dir_remove(path);
    struct fakehw_device *devs = (struct fakehw_device *)&devs;
    size_t n = 99;
    struct error err;
    assert_int_equal(fakehw_tree_list(t->root, &devs, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_null(devs);

    snprintf(path, sizeof(path), "%s/devices", t->root);
    assert_int_equal(rmdir(path), 0);
    assert_int_equal(fakehw_tree_list(t->root, &devs, &n, &err), -1);
    assert_int_equal(errno, ENOENT);
    char want[512];
    snprintf(want, sizeof(want), "%s/devices: No such file or directory", t->root);
    assert_string_equal(err.msg, want);
}

static void test_missing_attribute(void **state)
{
    struct tree *t = *state;
    char path[256], want[512];
    snprintf(path, sizeof(path), "%s/devices/gpu-0/memory", t->root);
    assert_int_equal(unlink(path), 0);
    struct fakehw_device d;
    memset(&d, 0x5a, sizeof(d));
    struct error err;
    assert_int_equal(fakehw_tree_read_device(t->root, "gpu-0", &d, &err), -1);
    assert_int_equal(errno, ENOENT);
    snprintf(want, sizeof(want), "%s: No such file or directory", path);
    assert_string_equal(err.msg, want);
    assert_int_equal(d.name[0], 0x5a); /* untouched on failure */

    /* A broken device fails the whole list: no half-read inventory. */
    struct fakehw_device *devs = NULL;
    size_t n = 0;
    assert_int_equal(fakehw_tree_list(t->root, &devs, &n, &err), -1);
    assert_string_equal(err.msg, want);
    assert_null(devs);
}

/* Writes value into attr of gpu-0 and expects the read to fail with
 * "<path>: <claim>" and errno. */
static void expect_bad(struct tree *t, const char *attr, const char *value, const char *claim,
                       int errnum)
{
    char path[256], want[1024];
    snprintf(path, sizeof(path), "%s/devices/gpu-0/%s", t->root, attr);
    write_attr(t->root, "gpu-0", attr, value);
    struct fakehw_device d;
    struct error err;
    assert_int_equal(fakehw_tree_read_device(t->root, "gpu-0", &d, &err), -1);
    assert_int_equal(errno, errnum);
    snprintf(want, sizeof(want), "%s: %s", path, claim);
    assert_string_equal(err.msg, want);
}

static void test_malformed_values(void **state)
{
    struct tree *t = *state;
    expect_bad(t, "memory", "80Gx\n", "\"80Gx\" is not a byte count", EINVAL);
    expect_bad(t, "memory", "-1\n", "\"-1\" is not a byte count", EINVAL);
    expect_bad(t, "memory", "99999999999999999999999\n",
               "\"99999999999999999999999\" is not a byte count", EINVAL);
    expect_bad(t, "memory", " 1\n", "\" 1\" is not a byte count", EINVAL);
    write_attr(t->root, "gpu-0", "memory", "1024\n");
    expect_bad(t, "index", "-1\n", "\"-1\" is not a non-negative integer", EINVAL);
    expect_bad(t, "index", "\n", "\"\" is not a non-negative integer", EINVAL);
    write_attr(t->root, "gpu-0", "index", "0\n");
    expect_bad(t, "numaNode", "-2\n", "\"-2\" is not a NUMA node (an integer >= -1)", EINVAL);
    write_attr(t->root, "gpu-0", "numaNode", "0\n");
    expect_bad(t, "health", "sick\n", "\"sick\" is not \"healthy\" or \"unhealthy\"", EINVAL);
    expect_bad(t, "health", "healthy\nunhealthy\n", "holds more than one line", EINVAL);
    write_attr(t->root, "gpu-0", "health", "healthy\n");
    expect_bad(t, "pciBusID", "18:00.0\n", "\"18:00.0\" is not a PCI bus id like \"0000:18:00.0\"",
               EINVAL);
    write_attr(t->root, "gpu-0", "pciBusID", "0000:18:00.0\n");
    expect_bad(t, "uuid", "GPU-1, GPU-2\n",
               "\"GPU-1, GPU-2\" is not a UUID (non-empty, no blanks or commas)", EINVAL);
    write_attr(t->root, "gpu-0", "uuid", "GPU-1\n");
    expect_bad(t, "productName", "A100\tX\n",
               "\"A100\\x09X\" holds a control character (byte 0x09)", EINVAL);
    expect_bad(t, "productName", "\n", "is empty", EINVAL);
    write_attr(t->root, "gpu-0", "productName", "A100\n");
    expect_bad(t, "computeCapability", "nine\n",
               "\"nine\" is not a compute capability like \"9.0\"", EINVAL);
    write_attr(t->root, "gpu-0", "computeCapability", "\n");
    expect_bad(t, "devicePath", "dev/fakegpu0\n", "\"dev/fakegpu0\" is not an absolute path",
               EINVAL);
    write_attr(t->root, "gpu-0", "devicePath", "\n");
    expect_bad(t, "healthSince", "yesterday\n", "\"yesterday\" is not a Unix time in seconds",
               EINVAL);
    write_attr(t->root, "gpu-0", "healthSince", "0\n");
    expect_bad(t, "attachDelayMs", "1s\n", "\"1s\" is not a number of milliseconds", EINVAL);
    write_attr(t->root, "gpu-0", "attachDelayMs", "0\n");
    expect_bad(t, "name", "gpu-1\n", "\"gpu-1\" does not match the directory name \"gpu-0\"",
               EINVAL);
    expect_bad(t, "name", "GPU_0\n",
               "\"GPU_0\" is not a DNS label (1-63 of a-z, 0-9, '-', alphanumeric at the ends)",
               EINVAL);
    write_attr(t->root, "gpu-0", "name", "gpu-0\n");
    struct fakehw_device d;
    struct error err;
    assert_int_equal(fakehw_tree_read_device(t->root, "gpu-0", &d, &err), 0);
}

/* The kinds test_malformed_values leaves out: each rule of the kind table
 * names what a bad value is not, and a good value reads back typed. */
static void test_malformed_state_values(void **state)
{
    struct tree *t = *state;
    expect_bad(t, "attach", "plugged\n",
               "\"plugged\" is not an attach state (none, detached, attaching, attached, failed)",
               EINVAL);
    write_attr(t->root, "gpu-0", "attach", "attaching\n");
    expect_bad(t, "attachFailure", "sometimes\n",
               "\"sometimes\" is not an attach failure (never, next, always)", EINVAL);
    write_attr(t->root, "gpu-0", "attachFailure", "next\n");
    expect_bad(t, "virtual", "yes\n", "\"yes\" is not \"true\" or \"false\"", EINVAL);
    write_attr(t->root, "gpu-0", "virtual", "true\n");
    struct fakehw_device d;
    struct error err;
    assert_int_equal(fakehw_tree_read_device(t->root, "gpu-0", &d, &err), 0);
    assert_int_equal(d.attach, FAKEHW_ATTACH_ATTACHING);
    assert_int_equal(d.attach_failure, FAKEHW_ATTACH_FAIL_NEXT);
    assert_true(d.virtual_gpu);
}

static void test_too_long_values(void **state)
{
    struct tree *t = *state;
    char v[FAKEHW_TEXT_MAX + 4];
    struct fakehw_device d;
    struct error err;
    /* 127 bytes fit productName[128], with or without the "\n". */
    memset(v, 'x', FAKEHW_TEXT_MAX - 1);
    strcpy(v + FAKEHW_TEXT_MAX - 1, "\n");
    write_attr(t->root, "gpu-0", "productName", v);
    assert_int_equal(fakehw_tree_read_device(t->root, "gpu-0", &d, &err), 0);
    assert_int_equal(strlen(d.product_name), FAKEHW_TEXT_MAX - 1);
    v[FAKEHW_TEXT_MAX - 1] = '\0';
    write_attr(t->root, "gpu-0", "productName", v);
    assert_int_equal(fakehw_tree_read_device(t->root, "gpu-0", &d, &err), 0);
    /* 128 bytes do not: an error, never a truncated name. */
    memset(v, 'x', FAKEHW_TEXT_MAX);
    strcpy(v + FAKEHW_TEXT_MAX, "\n");
    expect_bad(t, "productName", v, "value is longer than 127 bytes", EOVERFLOW);
    v[FAKEHW_TEXT_MAX] = '\0';
    expect_bad(t, "productName", v, "value is longer than 127 bytes", EOVERFLOW);
    write_attr(t->root, "gpu-0", "productName", "A100\n");
    /* name[64]: a 64-byte value is one too many. */
    memset(v, 'a', 64);
    strcpy(v + 64, "\n");
    expect_bad(t, "name", v, "value is longer than 63 bytes", EOVERFLOW);
}

static void test_tree_inconsistencies(void **state)
{
    struct tree *t = *state;
    struct fakehw_device *devs = NULL;
    size_t n = 0;
    struct error err;
    char want[512];
    make_device(t->root, "gpu-1", 0, "GPU-a0a0a0a0-0000-4000-8000-000000000001");
    assert_int_equal(fakehw_tree_list(t->root, &devs, &n, &err), -1);
    snprintf(want, sizeof(want), "%s/devices: devices gpu-0 and gpu-1 both have index 0", t->root);
    assert_string_equal(err.msg, want);
    write_attr(t->root, "gpu-1", "index", "1\n");
    write_attr(t->root, "gpu-1", "uuid", "GPU-a0a0a0a0-0000-4000-8000-000000000000\n");
    assert_int_equal(fakehw_tree_list(t->root, &devs, &n, &err), -1);
    snprintf(want, sizeof(want),
             "%s/devices: devices gpu-0 and gpu-1 both have uuid "
             "GPU-a0a0a0a0-0000-4000-8000-000000000000",
             t->root);
    assert_string_equal(err.msg, want);
    write_attr(t->root, "gpu-1", "uuid", "GPU-a0a0a0a0-0000-4000-8000-000000000001\n");
    assert_int_equal(fakehw_tree_list(t->root, &devs, &n, &err), 0);
    free(devs);

    write_file(t->root, "devices/README", "not a device\n");
    assert_int_equal(fakehw_tree_list(t->root, &devs, &n, &err), -1);
    assert_int_equal(errno, EINVAL);
    snprintf(want, sizeof(want),
             "%s/devices: entry \"README\" is not a DNS label (a device directory name)", t->root);
    assert_string_equal(err.msg, want);
    char path[256];
    snprintf(path, sizeof(path), "%s/devices/README", t->root);
    unlink(path);
    write_file(t->root, "devices/readme", "not a device\n");
    assert_int_equal(fakehw_tree_list(t->root, &devs, &n, &err), -1);
    assert_int_equal(errno, ENOTDIR);
    snprintf(want, sizeof(want), "%s/devices/readme: is not a directory", t->root);
    assert_string_equal(err.msg, want);

    /* A caller-supplied name never escapes the devices directory. */
    struct fakehw_device d;
    assert_int_equal(fakehw_tree_read_device(t->root, "../devices/gpu-0", &d, &err), -1);
    assert_int_equal(errno, EINVAL);
}

static void test_node_and_generation(void **state)
{
    struct tree *t = *state;
    char node[254];
    uint64_t gen = 0;
    struct error err;
    assert_int_equal(fakehw_tree_read_node(t->root, node, sizeof(node), &err), 0);
    assert_string_equal(node, "kind-worker");
    assert_int_equal(fakehw_tree_read_generation(t->root, &gen, &err), 0);
    assert_int_equal(gen, 42);
    write_file(t->root, "generation", "18446744073709551615");
    assert_int_equal(fakehw_tree_read_generation(t->root, &gen, &err), 0);
    assert_true(gen == UINT64_MAX);

    char want[512];
    write_file(t->root, "generation", "18446744073709551616\n");
    assert_int_equal(fakehw_tree_read_generation(t->root, &gen, &err), -1);
    snprintf(want, sizeof(want),
             "%s/generation: \"18446744073709551616\" is not a generation counter (decimal)",
             t->root);
    assert_string_equal(err.msg, want);
    assert_true(gen == UINT64_MAX);
    write_file(t->root, "generation", "7x\n");
    assert_int_equal(fakehw_tree_read_generation(t->root, &gen, &err), -1);
    assert_int_equal(errno, EINVAL);

    char small[8];
    assert_int_equal(fakehw_tree_read_node(t->root, small, sizeof(small), &err), -1);
    assert_int_equal(errno, EOVERFLOW);
    snprintf(want, sizeof(want), "%s/node: value is longer than 7 bytes", t->root);
    assert_string_equal(err.msg, want);
    write_file(t->root, "node", "\n");
    assert_int_equal(fakehw_tree_read_node(t->root, node, sizeof(node), &err), -1);
    snprintf(want, sizeof(want), "%s/node: is empty", t->root);
    assert_string_equal(err.msg, want);

    /* The watcher parses what it preads; a NUL is not a digit. */
    assert_int_equal(fakehw_tree_parse_generation("g",
                                                  "12\0"
                                                  "3",
                                                  4, &gen, &err),
                     -1);
    assert_int_equal(fakehw_tree_parse_generation("g", "12\n", 3, &gen, &err), 0);
    assert_int_equal(gen, 12);
}

/* ---- <root>/snapshot ---- */

/* A snapshot as lines, without their "\n", so tests can change single lines. */
struct lines {
    char line[64][600];
    size_t n;
};

/* The attribute lines of one device, as fakehw renders them (make_device's
 * values, health as given). */
static void add_device_lines(struct lines *l, const char *name, int index, const char *uuid,
                             const char *health, const char *reason)
{
    snprintf(l->line[l->n++], 600, "device %s", name);
    snprintf(l->line[l->n++], 600, "name %s", name);
    snprintf(l->line[l->n++], 600, "index %d", index);
    snprintf(l->line[l->n++], 600, "uuid %s", uuid);
    snprintf(l->line[l->n++], 600, "productName NVIDIA H100 80GB HBM3");
    snprintf(l->line[l->n++], 600, "architecture Hopper");
    snprintf(l->line[l->n++], 600, "brand Nvidia");
    snprintf(l->line[l->n++], 600, "memory 85520809984");
    snprintf(l->line[l->n++], 600, "computeCapability 9.0");
    snprintf(l->line[l->n++], 600, "driverVersion 550.127.05");
    snprintf(l->line[l->n++], 600, "cudaDriverVersion 12.4");
    snprintf(l->line[l->n++], 600, "pciBusID 0000:%02x:00.0", 0x18 + index);
    snprintf(l->line[l->n++], 600, "pcieRoot pci0000:17");
    snprintf(l->line[l->n++], 600, "numaNode 1");
    snprintf(l->line[l->n++], 600, "minor %d", index);
    snprintf(l->line[l->n++], 600, "devicePath /dev/fakegpu%d", index);
    snprintf(l->line[l->n++], 600, "health %s", health);
    snprintf(l->line[l->n++], 600, "healthReason %s", reason);
    snprintf(l->line[l->n++], 600, "healthSince 1732252380");
}

#define UUID0 "GPU-a0a0a0a0-0000-4000-8000-000000000000"
#define UUID1 "GPU-a0a0a0a0-0000-4000-8000-000000000001"

/* generation, node, gpu-0 (lines 3-21: name 4 ... memory 10 ... healthSince
 * 21), gpu-1 (lines 22-40), "end 2" (line 41). */
static void base_lines(struct lines *l)
{
    l->n = 0;
    snprintf(l->line[l->n++], 600, "generation 42");
    snprintf(l->line[l->n++], 600, "node kind-worker");
    add_device_lines(l, "gpu-0", 0, UUID0, "healthy", "");
    add_device_lines(l, "gpu-1", 1, UUID1, "unhealthy", "XID 79: GPU has fallen off the bus");
    snprintf(l->line[l->n++], 600, "end 2");
}

static void set_line(struct lines *l, size_t number, const char *text)
{
    snprintf(l->line[number - 1], 600, "%s", text);
}

static void delete_line(struct lines *l, size_t number)
{
    memmove(l->line[number - 1], l->line[number], (l->n - number) * sizeof(l->line[0]));
    l->n--;
}

static void insert_line(struct lines *l, size_t number, const char *text)
{
    memmove(l->line[number], l->line[number - 1], (l->n - number + 1) * sizeof(l->line[0]));
    l->n++;
    set_line(l, number, text);
}

/* Writes <root>/snapshot: the lines, each with "\n", then tail verbatim. */
static void write_snapshot(const struct tree *t, const struct lines *l, const char *tail)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/snapshot", t->root);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (size_t i = 0; i < l->n; i++)
        fprintf(f, "%s\n", l->line[i]);
    fputs(tail, f);
    assert_int_equal(fclose(f), 0);
}

static void assert_same_devices(const struct fakehw_device *a, const struct fakehw_device *b,
                                size_t n)
{
    for (size_t i = 0; i < n; i++, a++, b++) {
        assert_string_equal(a->name, b->name);
        assert_int_equal(a->index, b->index);
        assert_string_equal(a->uuid, b->uuid);
        assert_string_equal(a->product_name, b->product_name);
        assert_string_equal(a->architecture, b->architecture);
        assert_string_equal(a->brand, b->brand);
        assert_true(a->memory_bytes == b->memory_bytes);
        assert_string_equal(a->compute_capability, b->compute_capability);
        assert_string_equal(a->driver_version, b->driver_version);
        assert_string_equal(a->cuda_driver_version, b->cuda_driver_version);
        assert_string_equal(a->pci_bus_id, b->pci_bus_id);
        assert_string_equal(a->pcie_root, b->pcie_root);
        assert_int_equal(a->numa_node, b->numa_node);
        assert_int_equal(a->minor, b->minor);
        assert_string_equal(a->device_path, b->device_path);
        assert_int_equal(a->healthy, b->healthy);
        assert_string_equal(a->health_reason, b->health_reason);
        assert_int_equal(a->health_since, b->health_since);
    }
}

/* The same inventory as files and as a snapshot reads the same. */
static void test_snapshot_reads_as_the_files(void **state)
{
    struct tree *t = *state;
    make_device(t->root, "gpu-1", 1, UUID1);
    write_attr(t->root, "gpu-1", "health", "unhealthy\n");
    write_attr(t->root, "gpu-1", "healthReason", "XID 79: GPU has fallen off the bus\n");
    write_attr(t->root, "gpu-1", "devicePath", "\n");
    struct fakehw_device *walked = NULL, *snapped = NULL;
    size_t n_walked = 0, n_snapped = 0;
    struct error err;
    assert_int_equal(fakehw_tree_list(t->root, &walked, &n_walked, &err), 0);
    assert_int_equal(n_walked, 2);

    /* Blocks in another order than the index, attributes in another order
     * than fakehw writes them: both are fine. */
    struct lines l;
    l.n = 0;
    snprintf(l.line[l.n++], 600, "generation 7");
    snprintf(l.line[l.n++], 600, "node kind-worker");
    add_device_lines(&l, "gpu-1", 1, UUID1, "unhealthy", "XID 79: GPU has fallen off the bus");
    set_line(&l, 18, "devicePath ");
    add_device_lines(&l, "gpu-0", 0, UUID0, "healthy", "");
    char first[600];
    memcpy(first, l.line[22], sizeof(first)); /* gpu-0's name line */
    memcpy(l.line[22], l.line[30], sizeof(first));
    memcpy(l.line[30], first, sizeof(first));
    snprintf(l.line[l.n++], 600, "end 2");
    write_snapshot(t, &l, "");
    assert_int_equal(fakehw_tree_list(t->root, &snapped, &n_snapped, &err), 0);
    assert_int_equal(n_snapped, 2);
    assert_same_devices(walked, snapped, 2);
    assert_string_equal(snapped[1].health_reason, "XID 79: GPU has fallen off the bus");
    assert_string_equal(snapped[1].device_path, "");
    free(walked);
    free(snapped);

    /* The snapshot wins over the files when both are there. */
    base_lines(&l);
    set_line(&l, 19, "health unhealthy");
    set_line(&l, 20, "healthReason  two  spaces ");
    write_snapshot(t, &l, "");
    assert_int_equal(fakehw_tree_list(t->root, &snapped, &n_snapped, &err), 0);
    assert_false(snapped[0].healthy);
    assert_string_equal(snapped[0].health_reason, " two  spaces ");
    free(snapped);

    /* No devices: end 0. */
    l.n = 2;
    snprintf(l.line[l.n++], 600, "end 0");
    write_snapshot(t, &l, "");
    snapped = (struct fakehw_device *)&snapped;
    assert_int_equal(fakehw_tree_list(t->root, &snapped, &n_snapped, &err), 0);
    assert_int_equal(n_snapped, 0);
    assert_null(snapped);
}

/* Writes l (and tail) as the snapshot and expects fakehw_tree_list to fail
 * with "<root>/snapshot<claim>" and errnum, leaving its outputs alone; a
 * failure names the claim. */
static void expect_bad_snapshot(const struct tree *t, const struct lines *l, const char *tail,
                                const char *claim, int errnum)
{
    char want[1024];
    write_snapshot(t, l, tail);
    struct fakehw_device *devs = (struct fakehw_device *)&devs;
    size_t n = 99;
    struct error err;
    if (fakehw_tree_list(t->root, &devs, &n, &err) != -1)
        fail_msg("snapshot%s: read without an error", claim);
    if (errno != errnum)
        fail_msg("snapshot%s: errno %d, not %d", claim, errno, errnum);
    snprintf(want, sizeof(want), "%s/snapshot%s", t->root, claim);
    assert_string_equal(err.msg, want);
    if (devs != (struct fakehw_device *)&devs || n != 99)
        fail_msg("snapshot%s: the outputs were changed", claim);
}

/* A snapshot made from base_lines by one edit, and the error it must give. */
struct bad_snapshot {
    enum { SET, INSERT, DELETE, KEEP } edit;
    size_t line;       /* the line set, inserted or deleted; KEEP: how many stay */
    const char *text;  /* the line set or inserted */
    const char *tail;  /* written verbatim after the lines (NULL: none) */
    const char *claim; /* the error after "<root>/snapshot" */
    int errnum;
};

static void expect_bad_snapshots(const struct tree *t, const struct bad_snapshot *cases, size_t n)
{
    for (const struct bad_snapshot *c = cases; c < cases + n; c++) {
        struct lines l;
        base_lines(&l);
        if (c->edit == SET)
            set_line(&l, c->line, c->text);
        else if (c->edit == INSERT)
            insert_line(&l, c->line, c->text);
        else if (c->edit == DELETE)
            delete_line(&l, c->line);
        else
            l.n = c->line;
        expect_bad_snapshot(t, &l, c->tail ? c->tail : "", c->claim, c->errnum);
    }
}

#define N_CASES(a) (sizeof(a) / sizeof((a)[0]))

static const struct bad_snapshot bad_lines[] = {
    {INSERT, 5, "colour red", NULL, " line 5: unknown key \"colour\"", EINVAL},
    {DELETE, 10, NULL, NULL, " line 3: device gpu-0: no memory line in its block", EINVAL},
    {DELETE, 40, NULL, NULL, " line 22: device gpu-1: no healthSince line in its block", EINVAL},
    {INSERT, 12, "memory 1024", NULL, " line 12: memory: a second memory line for device gpu-0",
     EINVAL},
    {SET, 10, "memory 80Gx", NULL, " line 10: memory: \"80Gx\" is not a byte count", EINVAL},
    {SET, 5, "index -1", NULL, " line 5: index: \"-1\" is not a non-negative integer", EINVAL},
    {SET, 16, "numaNode -2", NULL,
     " line 16: numaNode: \"-2\" is not a NUMA node (an integer >= -1)", EINVAL},
    {SET, 40, "healthSince yesterday", NULL,
     " line 40: healthSince: \"yesterday\" is not a Unix time in seconds", EINVAL},
    {SET, 19, "health sick", NULL, " line 19: health: \"sick\" is not \"healthy\" or \"unhealthy\"",
     EINVAL},
    {SET, 7, "productName A100\tX", NULL,
     " line 7: productName: \"A100\\x09X\" holds a control character (byte 0x09)", EINVAL},
    {SET, 18, "devicePath dev/fakegpu0", NULL,
     " line 18: devicePath: \"dev/fakegpu0\" is not an absolute path", EINVAL},
    {SET, 3, "device GPU_0", NULL,
     " line 3: device: \"GPU_0\" is not a DNS label (a device directory name)", EINVAL},
    {SET, 4, "name gpu-9", NULL,
     " line 4: name: \"gpu-9\" does not match the device line (line 3) \"gpu-0\"", EINVAL},
    {SET, 24, "index 0", NULL, ": devices gpu-0 and gpu-1 both have index 0", EINVAL},
    {SET, 25, "uuid " UUID0, NULL, ": devices gpu-0 and gpu-1 both have uuid " UUID0, EINVAL},
};

static void test_snapshot_bad_lines(void **state)
{
    struct tree *t = *state;
    struct lines l;
    char v[600];

    expect_bad_snapshots(t, bad_lines, N_CASES(bad_lines));
    base_lines(&l);
    set_line(&l, 22, "device gpu-0");
    set_line(&l, 23, "name gpu-0");
    expect_bad_snapshot(t, &l, "",
                        " line 22: device gpu-0: a second block for it (the first is at line 3)",
                        EINVAL);

    /* Too long: an error, never a truncated value. */
    base_lines(&l);
    memset(v, 'x', sizeof(v));
    snprintf(l.line[6], 600, "productName %.*s", FAKEHW_TEXT_MAX - 1, v);
    write_snapshot(t, &l, "");
    struct fakehw_device *devs = NULL;
    size_t n = 0;
    struct error err;
    assert_int_equal(fakehw_tree_list(t->root, &devs, &n, &err), 0);
    assert_int_equal(strlen(devs[0].product_name), FAKEHW_TEXT_MAX - 1);
    free(devs);
    snprintf(l.line[6], 600, "productName %.*s", FAKEHW_TEXT_MAX, v);
    expect_bad_snapshot(t, &l, "", " line 7: productName: value is longer than 127 bytes",
                        EOVERFLOW);
    base_lines(&l);
    snprintf(l.line[38], 600, "healthReason %.*s", FAKEHW_REASON_MAX, v);
    expect_bad_snapshot(t, &l, "", " line 39: healthReason: value is longer than 511 bytes",
                        EOVERFLOW);
    base_lines(&l);
    snprintf(l.line[2], 600, "device %.*s", FAKEHW_NAME_MAX, v);
    expect_bad_snapshot(t, &l, "", " line 3: device: value is longer than 63 bytes", EOVERFLOW);
}

static const struct bad_snapshot bad_shapes[] = {
    /* The header. */
    {KEEP, 0, NULL, NULL, ": is empty (no generation line)", EINVAL},
    {DELETE, 1, NULL, NULL, " line 1: expected the generation line, found key \"node\"", EINVAL},
    {SET, 1, "generation 4x", NULL,
     " line 1: generation: \"4x\" is not a generation counter (decimal)", EINVAL},
    {SET, 2, "node ", NULL, " line 2: node: is empty", EINVAL},
    {INSERT, 22, "generation 43", NULL, " line 22: a second generation line", EINVAL},
    {INSERT, 3, "memory 1024", NULL, " line 3: memory: comes before the first device line", EINVAL},
    /* Lines without the KEY VALUE shape. */
    {SET, 20, "healthReason", NULL,
     " line 20: \"healthReason\" has no space and value after the key", EINVAL},
    {INSERT, 22, "", NULL, " line 22: is empty", EINVAL},
    /* A read that was cut short: mid-line, or without the end line. */
    {KEEP, 9, NULL, "memory 8552", " line 10: cut short (no newline at the end of the file)",
     EINVAL},
    {KEEP, 40, NULL, NULL, ": ends after line 40 without the end line (cut short)", EINVAL},
    {KEEP, 40, NULL, "end 2", " line 41: cut short (no newline at the end of the file)", EINVAL},
    {KEEP, 2, NULL, NULL, ": ends after line 2 without the end line (cut short)", EINVAL},
    /* The end line. */
    {SET, 41, "end 3", NULL, " line 41: end: says 3 devices, the snapshot has 2", EINVAL},
    {SET, 41, "end two", NULL, " line 41: end: \"two\" is not a device count", EINVAL},
    {SET, 41, "end 2", "device gpu-2\n", " line 42: comes after the end line (line 41)", EINVAL},
};

static void test_snapshot_bad_shape(void **state)
{
    struct tree *t = *state;
    expect_bad_snapshots(t, bad_shapes, N_CASES(bad_shapes));

    /* A NUL byte on line 2. */
    char path[128], want[256];
    snprintf(path, sizeof(path), "%s/snapshot", t->root);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite("generation 1\nnode a\0b\nend 0\n", 1, 29, f), 29);
    assert_int_equal(fclose(f), 0);
    struct fakehw_device *devs = NULL;
    size_t n = 0;
    struct error err;
    assert_int_equal(fakehw_tree_list(t->root, &devs, &n, &err), -1);
    snprintf(want, sizeof(want), "%s line 2: holds a NUL byte", path);
    assert_string_equal(err.msg, want);
}

/* Only a missing snapshot means "walk the files"; any other failure to
 * read it is an error. */
static void test_snapshot_unreadable(void **state)
{
    struct tree *t = *state;
    char path[128], want[256];
    snprintf(path, sizeof(path), "%s/snapshot", t->root);
    assert_int_equal(mkdir(path, 0755), 0);
    struct fakehw_device *devs = NULL;
    size_t n = 0;
    struct error err;
    assert_int_equal(fakehw_tree_list(t->root, &devs, &n, &err), -1);
    assert_int_equal(errno, EISDIR);
    snprintf(want, sizeof(want), "%s: Is a directory", path);
    assert_string_equal(err.msg, want);
    assert_int_equal(rmdir(path), 0);
    assert_int_equal(fakehw_tree_list(t->root, &devs, &n, &err), 0);
    assert_int_equal(n, 1);
    free(devs);
}

/* Writes a snapshot of n complete device blocks (gpu-0 ... gpu-<n-1>). */
static void write_many_blocks(const struct tree *t, size_t n)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/snapshot", t->root);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "generation 42\nnode kind-worker\n");
    for (size_t i = 0; i < n; i++) {
        struct lines l = {.n = 0};
        char name[32], uuid[64];
        snprintf(name, sizeof(name), "gpu-%zu", i);
        snprintf(uuid, sizeof(uuid), "GPU-a0a0a0a0-0000-4000-8000-%012zx", i);
        add_device_lines(&l, name, (int)i, uuid, "healthy", "");
        snprintf(l.line[11], 600, "pciBusID 0000:18:00.0"); /* the reader does not compare them */
        for (size_t j = 0; j < l.n; j++)
            fprintf(f, "%s\n", l.line[j]);
    }
    fprintf(f, "end %zu\n", n);
    assert_int_equal(fclose(f), 0);
}

/* The reader takes at most FAKEHW_TREE_MAX_DEVICES devices: the next device
 * line is refused by its line number.  4,096 blocks of 19 lines after the
 * 2 header lines put the 4,097th device line at line 77,827. */
static void test_snapshot_device_limit(void **state)
{
    struct tree *t = *state;
    write_many_blocks(t, FAKEHW_TREE_MAX_DEVICES);
    struct fakehw_device *devs = NULL;
    size_t n = 0;
    struct error err;
    if (fakehw_tree_list(t->root, &devs, &n, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(n, FAKEHW_TREE_MAX_DEVICES);
    free(devs);

    write_many_blocks(t, FAKEHW_TREE_MAX_DEVICES + 1);
    char path[128], want[256];
    snprintf(path, sizeof(path), "%s/snapshot", t->root);
    devs = (struct fakehw_device *)&devs;
    assert_int_equal(fakehw_tree_list(t->root, &devs, &n, &err), -1);
    assert_int_equal(errno, EOVERFLOW);
    snprintf(want, sizeof(want), "%s line 77827: device gpu-4096: more than 4096 devices", path);
    assert_string_equal(err.msg, want);
    assert_ptr_equal(devs, (struct fakehw_device *)&devs);
}

/* A hostile snapshot: a million "device" lines and nothing else (13 MB).
 * The reader must fail at the first block (line 4) without first reserving
 * room for a million devices (about 2 GB): it runs in a child whose data
 * limit is 256 MiB above what the child already maps, so such a reservation
 * fails and shows up as "out of memory" instead of the line-4 error.
 * AddressSanitizer maps terabytes of shadow memory, so there the limit part
 * is skipped (the device limit test still bounds the memory). */
static void test_snapshot_hostile_count(void **state)
{
    struct tree *t = *state;
    char path[128], want[256];
    snprintf(path, sizeof(path), "%s/snapshot", t->root);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "generation 1\nnode n\n");
    for (int i = 0; i < 1000000; i++)
        fputs("device gpu-0\n", f);
    assert_int_equal(fclose(f), 0);
    snprintf(want, sizeof(want), "%s line 3: device gpu-0: no name line in its block", path);
#if defined(__SANITIZE_ADDRESS__)
    bool limit = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    bool limit = false;
#else
    bool limit = true;
#endif
#else
    bool limit = true;
#endif
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (limit) {
            long data_kb = 0;
            char line[256];
            FILE *st = fopen("/proc/self/status", "r");
            while (st && fgets(line, sizeof(line), st))
                if (sscanf(line, "VmData: %ld kB", &data_kb) == 1)
                    break;
            if (st)
                fclose(st);
            rlim_t cap = ((rlim_t)data_kb << 10) + (256u << 20);
            struct rlimit rl = {cap, cap};
            if (data_kb == 0 || setrlimit(RLIMIT_DATA, &rl) < 0)
                _exit(3);
        }
        struct fakehw_device *devs = NULL;
        size_t n = 0;
        struct error err;
        if (fakehw_tree_list(t->root, &devs, &n, &err) == 0)
            _exit(2);
        if (strcmp(err.msg, want) != 0) {
            fprintf(stderr, "got: %s\nwant: %s\n", err.msg, want);
            _exit(1);
        }
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* The MIG and sharing files: absent reads as a GPU with MIG off, not
 * shared; present, they are parsed and checked. */
static void test_mig_and_sharing_files(void **state)
{
    struct tree *t = *state;
    struct fakehw_device d;
    struct error err;
    assert_int_equal(fakehw_tree_read_device(t->root, "gpu-0", &d, &err), 0);
    assert_string_equal(d.mig_mode, "");
    assert_string_equal(d.parent, "");
    assert_int_equal(d.mig_placement[1], 0);
    assert_true(d.memory_sharing[0] == 0);

    write_attr(t->root, "gpu-0", "migMode", "\n");
    write_attr(t->root, "gpu-0", "parent", "gpu-7\n");
    write_attr(t->root, "gpu-0", "migProfile", "3g.40gb\n");
    write_attr(t->root, "gpu-0", "migPlacement", "4:4\n");
    write_attr(t->root, "gpu-0", "memorySharing", "10737418240 1073741824 1073741824\n");
    assert_int_equal(fakehw_tree_read_device(t->root, "gpu-0", &d, &err), 0);
    assert_string_equal(d.parent, "gpu-7");
    assert_string_equal(d.mig_profile, "3g.40gb");
    assert_int_equal(d.mig_placement[0], 4);
    assert_int_equal(d.mig_placement[1], 4);
    assert_true(d.memory_sharing[0] == 10737418240ULL && d.memory_sharing[2] == 1073741824ULL);

    expect_bad(t, "migMode", "sometimes\n",
               "\"sometimes\" is not a MIG mode (off, dynamic, static or empty)", EINVAL);
    write_attr(t->root, "gpu-0", "migMode", "dynamic\n");
    expect_bad(t, "parent", "GPU 0\n", "\"GPU 0\" is not empty or a DNS label", EINVAL);
    write_attr(t->root, "gpu-0", "parent", "\n");
    expect_bad(t, "migPlacement", "6:4\n",
               "\"6:4\" is not a MIG placement (START:SIZE within 8 memory slices)", EINVAL);
    expect_bad(t, "migPlacement", "4\n",
               "\"4\" is not a MIG placement (START:SIZE within 8 memory slices)", EINVAL);
    write_attr(t->root, "gpu-0", "migPlacement", "\n");
    expect_bad(t, "memorySharing", "1024 2048 1\n",
               "\"1024 2048 1\" is not \"DEFAULT MIN STEP\" (bytes, 0 < MIN <= DEFAULT, STEP > 0)",
               EINVAL);
    expect_bad(t, "memorySharing", "1024 1 0\n",
               "\"1024 1 0\" is not \"DEFAULT MIN STEP\" (bytes, 0 < MIN <= DEFAULT, STEP > 0)",
               EINVAL);
    write_attr(t->root, "gpu-0", "memorySharing", "\n");
    assert_int_equal(fakehw_tree_read_device(t->root, "gpu-0", &d, &err), 0);
    assert_string_equal(d.mig_mode, "dynamic");
}

/* The attribute table (FAKEHW_DEVICE_ATTRIBUTES): file names are unique and
 * no snapshot key of its own; every attribute of the first tree is required
 * (a device without it fails to read), the later ones are optional (the
 * device of setup has none of them and reads). */
static void test_attribute_table(void **state)
{
    struct tree *t = *state;
    const char *keys[] = {FAKEHW_FILE_GENERATION, FAKEHW_FILE_NODE, FAKEHW_SNAPSHOT_DEVICE,
                          FAKEHW_SNAPSHOT_END};
    for (int i = 0; i < FAKEHW_ATTR_COUNT; i++) {
        const struct fakehw_attr *a = &fakehw_device_attributes[i];
        assert_non_null(a->file);
        for (int j = 0; j < i; j++)
            if (!strcmp(a->file, fakehw_device_attributes[j].file))
                fail_msg("attribute %s is in the table twice", a->file);
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
            if (!strcmp(a->file, keys[k]))
                fail_msg("attribute %s is a snapshot key", a->file);
        assert_int_equal(a->size > 0, FAKEHW_KIND_IS_TEXT(a->kind));
    }
    assert_string_equal(FAKEHW_ATTR(HEALTH), "health");

    struct fakehw_device d;
    struct error err;
    assert_int_equal(fakehw_tree_read_device(t->root, "gpu-0", &d, &err), 0);
    for (int i = 0; i < FAKEHW_ATTR_COUNT; i++) {
        const struct fakehw_attr *a = &fakehw_device_attributes[i];
        if (a->optional)
            continue;
        char path[256], moved[300];
        snprintf(path, sizeof(path), "%s/devices/gpu-0/%s", t->root, a->file);
        snprintf(moved, sizeof(moved), "%s/devices/gpu-0/.%s", t->root, a->file);
        assert_int_equal(rename(path, moved), 0);
        errno = 0;
        if (fakehw_tree_read_device(t->root, "gpu-0", &d, &err) != -1 || errno != ENOENT)
            fail_msg("a device without %s was read", a->file);
        assert_int_equal(rename(moved, path), 0);
    }
}

TEST_MAIN_FIXTURE("fakehw_tree", setup, teardown, test_read_device_good,
                  test_list_sorted_by_index_then_name, test_list_empty_and_missing,
                  test_missing_attribute, test_attribute_table, test_malformed_values,
                  test_malformed_state_values, test_too_long_values, test_tree_inconsistencies,
                  test_node_and_generation, test_snapshot_reads_as_the_files,
                  test_snapshot_bad_lines, test_snapshot_bad_shape, test_snapshot_unreadable,
                  test_snapshot_device_limit, test_snapshot_hostile_count,
                  test_mig_and_sharing_files)
