/* Unit tests for the strict fakehw tree reader (common/fakehw_tree.c), on
 * plain directories built in /tmp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fakehw_tree_read.h"

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

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    struct tree *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return -1;
    snprintf(t->root, sizeof(t->root), "/tmp/test_fakehw_tree.XXXXXX");
    if (mkdtemp(t->root) == NULL)
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
    nftw(t->root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(t);
    return 0;
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
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_read_device_good, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_sorted_by_index_then_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_empty_and_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_attribute, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_long_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tree_inconsistencies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_and_generation, setup, teardown),
    };
    return cmocka_run_group_tests_name("fakehw_tree", tests, NULL, NULL);
}
