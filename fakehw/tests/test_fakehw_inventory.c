// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the live inventory: rendering, health writes, generation,
 * listeners, reloads, concurrency. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inventory.h"
#include "uuid.h"
#include "inventory_helpers.h"
#include "common/tests/test_main.h"

static void make_device(struct gpu_device *d, long index, const char *name)
{
    make_h100(d, index, name);
    d->numa_node = index / 2;
}

struct fixture {
    struct gpu_device devs[3];
    struct live_inventory *inv;
    _Atomic uint64_t last_notified;
    atomic_int notifications; /* listeners run on the writers' threads */
};

static void listener(void *ctx, uint64_t generation)
{
    struct fixture *f = ctx;
    f->last_notified = generation;
    f->notifications++;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (f == NULL)
        return -1;
    make_device(&f->devs[0], 0, "gpu-0");
    make_device(&f->devs[1], 1, "gpu-1");
    make_device(&f->devs[2], 2, "big-0");
    f->devs[2].healthy = false;
    snprintf(f->devs[2].health_reason, sizeof(f->devs[2].health_reason), "XID 79");
    struct error err;
    f->inv = inventory_new("test-node", "/dev/fake", f->devs, 3, &err);
    if (f->inv == NULL)
        return -1;
    inventory_set_listener(f->inv, listener, f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    inventory_free(f->inv);
    free(f);
    return 0;
}

static void test_render(void **state)
{
    struct fixture *f = *state;
    expect_file(f->inv, NULL, "node", "test-node\n");
    expect_file(f->inv, NULL, "generation", "1\n");
    expect_file(f->inv, "gpu-1", "name", "gpu-1\n");
    expect_file(f->inv, "gpu-1", "index", "1\n");
    expect_file(f->inv, "gpu-1", "minor", "1\n");
    expect_file(f->inv, "gpu-1", "memory", "85520809984\n");
    expect_file(f->inv, "gpu-1", "productName", "NVIDIA H100 80GB HBM3\n");
    expect_file(f->inv, "gpu-1", "computeCapability", "9.0\n");
    expect_file(f->inv, "gpu-1", "pciBusID", "0000:09:00.0\n");
    expect_file(f->inv, "gpu-1", "pcieRoot", "pci0000:07\n");
    expect_file(f->inv, "gpu-1", "numaNode", "0\n");
    expect_file(f->inv, "gpu-1", "driverVersion", "580.95.05\n");
    expect_file(f->inv, "gpu-1", "cudaDriverVersion", "13.0\n");
    expect_file(f->inv, "gpu-1", "devicePath", "/dev/fake/fakegpu1\n");
    expect_file(f->inv, "gpu-1", "health", "healthy\n");
    expect_file(f->inv, "gpu-1", "healthReason", "\n");
    expect_file(f->inv, "big-0", "health", "unhealthy\n");
    expect_file(f->inv, "big-0", "healthReason", "XID 79\n");

    char buf[64];
    size_t len;
    int64_t mtime;
    uint64_t gen;
    struct error err;
    assert_int_equal(
        inventory_read_file(f->inv, "gpu-9", "uuid", buf, sizeof(buf), &len, &mtime, &gen, &err),
        -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(
        inventory_read_file(f->inv, "gpu-0", "colour", buf, sizeof(buf), &len, &mtime, &gen, &err),
        -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(
        inventory_read_file(f->inv, "gpu-0", "productName", buf, 8, &len, &mtime, &gen, &err), -1);
    assert_int_equal(errno, EOVERFLOW);

    /* Every attribute renders as one line. */
    for (const char *const *a = inventory_attributes(); *a != NULL; a++) {
        char line[INVENTORY_FILE_MAX];
        assert_int_equal(
            inventory_read_file(f->inv, "gpu-0", *a, line, sizeof(line), &len, &mtime, &gen, &err),
            0);
        assert_true(len >= 1 && line[len - 1] == '\n');
        assert_null(memchr(line, '\n', len - 1));
    }
    assert_true(inventory_attribute_writable("health"));
    assert_false(inventory_attribute_writable("uuid"));
}

static void test_no_dev_dir(void **state)
{
    (void)state;
    struct gpu_device d;
    make_device(&d, 0, "gpu-0");
    struct error err;
    struct live_inventory *inv = inventory_new("n", "", &d, 1, &err);
    assert_non_null(inv);
    expect_file(inv, "gpu-0", "devicePath", "\n");
    inventory_free(inv);
}

static void test_health_commands(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        int ok;
        bool healthy;
        const char *reason;
    } cases[] = {
        {"unhealthy\n", 1, false, ""},
        {"unhealthy", 1, false, ""},
        {"unhealthy XID 79: GPU has fallen off the bus\n", 1, false,
         "XID 79: GPU has fallen off the bus"},
        {"healthy\n", 1, true, ""},
        {"healthy repaired\n", 1, true, "repaired"},
        {"Healthy\n", 0, false, NULL},
        {"", 0, false, NULL},
        {"\n", 0, false, NULL},
        {"sick\n", 0, false, NULL},
        {"unhealthy\n\n", 0, false, NULL},
        {"unhealthy a\nb\n", 0, false, NULL},
        {"healthyish\n", 0, false, NULL},
        {" healthy\n", 0, false, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        bool healthy = !cases[i].healthy;
        char reason[FAKEHW_REASON_MAX];
        struct error err;
        int rc = health_parse_command(cases[i].in, strlen(cases[i].in), &healthy, reason,
                                      sizeof(reason), &err);
        if (cases[i].ok) {
            if (rc != 0)
                fail_msg("\"%s\": %s", cases[i].in, err.msg);
            assert_int_equal(healthy, cases[i].healthy);
            assert_string_equal(reason, cases[i].reason);
        } else {
            if (rc != -1)
                fail_msg("\"%s\" accepted", cases[i].in);
            assert_int_equal(errno, EINVAL);
        }
    }
    char big[FAKEHW_REASON_MAX + 32];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    memcpy(big, "unhealthy ", 10);
    bool healthy;
    char reason[FAKEHW_REASON_MAX];
    struct error err;
    assert_int_equal(health_parse_command(big, strlen(big), &healthy, reason, sizeof(reason), &err),
                     -1);
    char want[64];
    snprintf(want, sizeof(want), "health: the reason is longer than %d bytes",
             FAKEHW_REASON_MAX - 1);
    assert_string_equal(err.msg, want);
}

static void test_write_and_generation(void **state)
{
    struct fixture *f = *state;
    struct error err;
    time_t before = time(NULL);
    assert_int_equal(inventory_write_health(f->inv, "gpu-1", "unhealthy XID 48\n", 17, &err), 0);
    assert_int_equal(inventory_generation(f->inv), 2);
    assert_int_equal(f->notifications, 1);
    assert_int_equal(f->last_notified, 2);
    expect_file(f->inv, "gpu-1", "health", "unhealthy\n");
    expect_file(f->inv, "gpu-1", "healthReason", "XID 48\n");
    expect_file(f->inv, NULL, "generation", "2\n");
    char since[32];
    size_t len;
    int64_t mtime;
    uint64_t gen;
    assert_int_equal(inventory_read_file(f->inv, "gpu-1", "healthSince", since, sizeof(since), &len,
                                         &mtime, &gen, &err),
                     0);
    assert_true(atoll(since) >= before && atoll(since) <= time(NULL));
    assert_int_equal(mtime, atoll(since));

    /* The same state and reason again changes nothing. */
    assert_int_equal(inventory_write_health(f->inv, "gpu-1", "unhealthy XID 48", 16, &err), 0);
    assert_int_equal(inventory_generation(f->inv), 2);
    assert_int_equal(f->notifications, 1);

    /* A new reason is a change; healthy without a reason clears it. */
    assert_int_equal(inventory_set_health(f->inv, "gpu-1", false, "XID 79", &err), 0);
    assert_int_equal(inventory_generation(f->inv), 3);
    assert_int_equal(inventory_set_health(f->inv, "gpu-1", true, NULL, &err), 0);
    assert_int_equal(inventory_generation(f->inv), 4);
    expect_file(f->inv, "gpu-1", "healthReason", "\n");

    /* Bad values and unknown devices change nothing. */
    assert_int_equal(inventory_write_health(f->inv, "gpu-1", "broken\n", 7, &err), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(inventory_write_health(f->inv, "gpu-7", "healthy\n", 8, &err), -1);
    assert_int_equal(errno, ENOENT);
    assert_string_equal(err.msg, "no device gpu-7 on node test-node");
    assert_int_equal(inventory_generation(f->inv), 4);
    assert_int_equal(f->notifications, 3);
    expect_file(f->inv, "gpu-1", "health", "healthy\n");
}

/* What a write to xid may say: table-driven. */
static void test_xid_commands(void **state)
{
    (void)state;
    const struct {
        const char *in;
        bool ok;
        long xid;
    } cases[] = {
        {"79", true, 79},       {"79\n", true, 79},   {"0", true, 0},       {"0\n", true, 0},
        {"99999", true, 99999}, {"100000", false, 0}, {"079", false, 0},    {"", false, 0},
        {"\n", false, 0},       {"-1", false, 0},     {"+79", false, 0},    {"79 ", false, 0},
        {" 79", false, 0},      {"79\n\n", false, 0}, {"XID 79", false, 0}, {"0x4f", false, 0},
        {"7\t9", false, 0},     {"clear", false, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        long xid = -5;
        struct error err;
        int rc = xid_parse_command(cases[i].in, strlen(cases[i].in), &xid, &err);
        if (cases[i].ok) {
            if (rc != 0)
                fail_msg("\"%s\": %s", cases[i].in, err.msg);
            assert_int_equal(xid, cases[i].xid);
        } else {
            if (rc != -1)
                fail_msg("\"%s\" accepted", cases[i].in);
            assert_int_equal(errno, EINVAL);
        }
    }
    long xid;
    struct error err;
    assert_int_equal(xid_parse_command("XID 79\n", 7, &xid, &err), -1);
    assert_string_equal(err.msg,
                        "xid: \"XID 79\" is not an XID (a decimal 1..99999, or 0 to clear)");
}

static void test_xid_write(void **state)
{
    struct fixture *f = *state;
    struct error err;
    expect_file(f->inv, "gpu-1", "xid", "0\n");
    assert_int_equal(inventory_write_xid(f->inv, "gpu-1", "79\n", 3, &err), 0);
    assert_int_equal(inventory_generation(f->inv), 2);
    assert_int_equal(f->notifications, 1);
    expect_file(f->inv, "gpu-1", "xid", "79\n");
    /* The XID is not the health state: health and reason stay. */
    expect_file(f->inv, "gpu-1", "health", "healthy\n");
    expect_file(f->inv, "gpu-1", "healthReason", "\n");
    expect_file(f->inv, "gpu-0", "xid", "0\n");
    /* The same XID again changes nothing; another one does, 0 clears. */
    assert_int_equal(inventory_set_xid(f->inv, "gpu-1", 79, &err), 0);
    assert_int_equal(inventory_generation(f->inv), 2);
    assert_int_equal(inventory_set_xid(f->inv, "gpu-1", 48, &err), 0);
    assert_int_equal(inventory_generation(f->inv), 3);
    assert_int_equal(inventory_write_xid(f->inv, "gpu-1", "0", 1, &err), 0);
    expect_file(f->inv, "gpu-1", "xid", "0\n");
    assert_int_equal(inventory_generation(f->inv), 4);
    /* Bad values and unknown devices change nothing. */
    assert_int_equal(inventory_write_xid(f->inv, "gpu-1", "abc", 3, &err), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(inventory_set_xid(f->inv, "gpu-1", FAKEHW_XID_MAX + 1, &err), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(inventory_write_xid(f->inv, "gpu-7", "79", 2, &err), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(inventory_generation(f->inv), 4);
    /* Every device at once: one bump. */
    assert_int_equal(inventory_set_xid_all(f->inv, 31, &err), 0);
    assert_int_equal(inventory_generation(f->inv), 5);
    expect_file(f->inv, "big-0", "xid", "31\n");
    assert_true(inventory_attribute_writable("xid"));
    /* A reload of the same config keeps the live XID. */
    bool changed;
    assert_int_equal(inventory_replace(f->inv, f->devs, 3, &changed, &err), 0);
    assert_false(changed);
    expect_file(f->inv, "gpu-0", "xid", "31\n");
}

static void test_all(void **state)
{
    struct fixture *f = *state;
    struct error err;
    assert_int_equal(inventory_set_health_all(f->inv, false, "maintenance", &err), 0);
    assert_int_equal(inventory_generation(f->inv), 2); /* one bump for all */
    expect_file(f->inv, "gpu-0", "healthReason", "maintenance\n");
    expect_file(f->inv, "big-0", "healthReason", "maintenance\n");
    assert_int_equal(inventory_set_health_all(f->inv, false, "maintenance", &err), 0);
    assert_int_equal(inventory_generation(f->inv), 2);
}

static void test_names(void **state)
{
    struct fixture *f = *state;
    char(*names)[FAKEHW_NAME_MAX];
    size_t n;
    struct error err;
    assert_int_equal(inventory_device_names(f->inv, &names, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_string_equal(names[0], "gpu-0");
    assert_string_equal(names[2], "big-0");
    free(names);
    assert_true(inventory_has_device(f->inv, "big-0"));
    assert_false(inventory_has_device(f->inv, "big-1"));
}

static void test_replace(void **state)
{
    struct fixture *f = *state;
    struct error err;
    bool changed;
    assert_int_equal(inventory_set_health(f->inv, "gpu-0", false, "flipped", &err), 0);
    assert_int_equal(inventory_generation(f->inv), 2);

    /* The same config: nothing changes, the live health stays. */
    assert_int_equal(inventory_replace(f->inv, f->devs, 3, &changed, &err), 0);
    assert_false(changed);
    assert_int_equal(inventory_generation(f->inv), 2);
    expect_file(f->inv, "gpu-0", "health", "unhealthy\n");

    /* gpu-1 changes memory, big-0 goes, gpu-2 arrives. */
    struct gpu_device next[3];
    next[0] = f->devs[0];
    next[1] = f->devs[1];
    next[1].memory_bytes = 96ULL << 30;
    make_device(&next[2], 2, "gpu-2");
    assert_int_equal(inventory_replace(f->inv, next, 3, &changed, &err), 0);
    assert_true(changed);
    assert_int_equal(inventory_generation(f->inv), 3);
    assert_int_equal(f->last_notified, 3);
    expect_file(f->inv, "gpu-0", "health", "unhealthy\n"); /* unchanged device keeps it */
    expect_file(f->inv, "gpu-0", "healthReason", "flipped\n");
    expect_file(f->inv, "gpu-1", "memory", "103079215104\n");
    expect_file(f->inv, "gpu-2", "health", "healthy\n");
    assert_false(inventory_has_device(f->inv, "big-0"));

    /* Fewer devices is a change. */
    assert_int_equal(inventory_replace(f->inv, next, 1, &changed, &err), 0);
    assert_true(changed);
    assert_int_equal(inventory_generation(f->inv), 4);
    assert_false(inventory_has_device(f->inv, "gpu-1"));

    struct gpu_device *snap;
    size_t n;
    assert_int_equal(inventory_snapshot(f->inv, &snap, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(snap[0].name, "gpu-0");
    free(snap);

    /* Two devices with one name are refused, and nothing changes. */
    struct gpu_device twins[2] = {next[0], next[0]};
    twins[1].index = twins[1].minor = 1;
    assert_int_equal(inventory_replace(f->inv, twins, 2, &changed, &err), -1);
    assert_int_equal(inventory_generation(f->inv), 4);
    assert_true(inventory_has_device(f->inv, "gpu-0"));
}

struct flipper {
    struct live_inventory *inv;
    const char *device;
};

static void *flip_many(void *arg)
{
    struct flipper *fl = arg;
    struct error err;
    for (int i = 0; i < 1000; i++)
        if (inventory_set_health(fl->inv, fl->device, i % 2 == 1, i % 2 ? NULL : "x", &err) != 0)
            return (void *)1;
    return NULL;
}

/* Concurrent writers: every change counts exactly once. */
static void test_concurrent(void **state)
{
    struct fixture *f = *state;
    pthread_t t[3];
    struct flipper fl[3] = {{f->inv, "gpu-0"}, {f->inv, "gpu-1"}, {f->inv, "big-0"}};
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&t[i], NULL, flip_many, &fl[i]), 0);
    for (int i = 0; i < 3; i++) {
        void *rc;
        pthread_join(t[i], &rc);
        assert_null(rc);
    }
    /* big-0 started unhealthy with "XID 79": its first write changes the
     * reason only, still a change; so all 3000 writes changed something. */
    assert_int_equal(inventory_generation(f->inv), 1 + 3000);
    assert_int_equal(f->notifications, 3000);
}

/* Appends to out what snapshot must say for one file: "key <content>". */
static void append_expected(char *out, size_t size, struct live_inventory *inv, const char *dev,
                            const char *file)
{
    char buf[INVENTORY_FILE_MAX];
    size_t len, used = strlen(out);
    int64_t mtime;
    uint64_t gen;
    struct error err;
    if (inventory_read_file(inv, dev, file, buf, sizeof(buf), &len, &mtime, &gen, &err) != 0)
        fail_msg("%s/%s: %s", dev ? dev : "", file, err.msg);
    snprintf(out + used, size - used, "%s %s", file, buf);
}

static char *render_snapshot(struct live_inventory *inv, uint64_t *gen)
{
    char *text;
    size_t len;
    struct error err;
    if (inventory_render_snapshot(inv, &text, &len, gen, &err) != 0)
        fail_msg("%s", err.msg);
    /* Tests compare it as a string. */
    char *copy = malloc(len + 1);
    assert_non_null(copy);
    memcpy(copy, text, len);
    copy[len] = '\0';
    free(text);
    return copy;
}

/* Every line is "key" and the content of the file of that name. */
static void test_render_snapshot(void **state)
{
    struct fixture *f = *state;
    struct error err;
    assert_int_equal(inventory_set_health(f->inv, "gpu-1", false, "XID 48:  two spaces ", &err), 0);
    assert_int_equal(f->notifications, 1);
    uint64_t gen = 0;
    char *text = render_snapshot(f->inv, &gen);
    assert_int_equal(gen, 2);

    char want[16384] = "";
    append_expected(want, sizeof(want), f->inv, NULL, "generation");
    append_expected(want, sizeof(want), f->inv, NULL, "node");
    const char *order[] = {"gpu-0", "gpu-1", "big-0"}; /* index order */
    for (size_t i = 0; i < 3; i++) {
        snprintf(want + strlen(want), sizeof(want) - strlen(want), "device %s\n", order[i]);
        for (const char *const *a = inventory_attributes(); *a != NULL; a++)
            append_expected(want, sizeof(want), f->inv, order[i], *a);
    }
    snprintf(want + strlen(want), sizeof(want) - strlen(want), "end 3\n");
    assert_string_equal(text, want);
    assert_non_null(
        strstr(text, "generation 2\nnode test-node\ndevice gpu-0\nname gpu-0\nindex 0\n"));
    assert_non_null(strstr(text, "\nhealthReason XID 48:  two spaces \n"));
    assert_non_null(strstr(text, "\nhealthReason \n"));
    assert_non_null(strstr(text, "\ndevicePath /dev/fake/fakegpu1\n"));
    free(text);

    /* Rendering is no change. */
    assert_int_equal(inventory_generation(f->inv), 2);
    assert_int_equal(f->notifications, 1);

    struct live_inventory *empty = inventory_new("n", "", NULL, 0, &err);
    assert_non_null(empty);
    text = render_snapshot(empty, &gen);
    assert_string_equal(text, "generation 1\nnode n\nend 0\n");
    free(text);
    inventory_free(empty);
}

/* A newline (any control character) would split a file or a snapshot line. */
static void test_values_are_one_line(void **state)
{
    struct fixture *f = *state;
    struct error err;
    assert_null(inventory_new("kind\nworker", "", f->devs, 3, &err));
    assert_int_equal(errno, EINVAL);
    assert_string_equal(err.msg,
                        "node name \"kind\nworker\" is empty or holds a control character");
    assert_null(inventory_new("", "", f->devs, 3, &err));
    assert_int_equal(errno, EINVAL);
    assert_null(inventory_new("n", "/dev/x\ny", f->devs, 3, &err));
    assert_int_equal(errno, EINVAL);
    assert_string_equal(err.msg, "device directory \"/dev/x\ny\" holds a control character");

    assert_int_equal(inventory_set_health(f->inv, "gpu-0", false, "XID 79\nend 0", &err), -1);
    assert_int_equal(errno, EINVAL);
    assert_string_equal(err.msg, "reason holds a control character");
    assert_int_equal(inventory_set_health_all(f->inv, false, "tab\there", &err), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(inventory_write_health(f->inv, "gpu-0", "unhealthy a\nb", 13, &err), -1);
    assert_int_equal(errno, EINVAL);
    /* Bytes that are not UTF-8 would reach the plugin's UTF-8 only fields. */
    assert_int_equal(inventory_write_health(f->inv, "gpu-0", "unhealthy XID \xff", 15, &err), -1);
    assert_int_equal(errno, EINVAL);
    assert_string_equal(err.msg, "reason is not valid UTF-8 (byte 4)");
    assert_int_equal(inventory_set_health(f->inv, "gpu-0", false, "\xe2\x82", &err), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(inventory_generation(f->inv), 1);
    expect_file(f->inv, "gpu-0", "health", "healthy\n");
}

static void *toggle_gpu0(void *arg)
{
    struct live_inventory *inv = arg;
    struct error err;
    for (int i = 0; i < 2000; i++) {
        char reason[32];
        snprintf(reason, sizeof(reason), "step %d", i);
        if (inventory_set_health(inv, "gpu-0", i % 2 == 1, i % 2 ? NULL : reason, &err) != 0)
            return (void *)1;
    }
    return NULL;
}

/* While gpu-0 toggles, every snapshot shows one generation: after k
 * changes (generation 1 + k) gpu-0 is unhealthy exactly when k is odd, with
 * the reason of change k - 1. */
static void test_snapshot_consistent_under_flips(void **state)
{
    struct fixture *f = *state;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, toggle_gpu0, f->inv), 0);
    int checked = 0;
    for (int i = 0; i < 300; i++) {
        uint64_t gen;
        char *text = render_snapshot(f->inv, &gen);
        unsigned long long shown;
        assert_int_equal(sscanf(text, "generation %llu\n", &shown), 1);
        assert_int_equal(shown, gen);
        const char *health = strstr(text, "\nhealth ");
        const char *reason = strstr(text, "\nhealthReason ");
        assert_non_null(health);
        assert_non_null(reason);
        uint64_t k = gen - 1;
        char want[64];
        if (k % 2 == 1) {
            assert_memory_equal(health, "\nhealth unhealthy\n", 18);
            snprintf(want, sizeof(want), "\nhealthReason step %llu\n", (unsigned long long)(k - 1));
        } else {
            assert_memory_equal(health, "\nhealth healthy\n", 16);
            snprintf(want, sizeof(want), "\nhealthReason \n");
        }
        assert_memory_equal(reason, want, strlen(want));
        checked++;
        free(text);
    }
    void *rc;
    pthread_join(t, &rc);
    assert_null(rc);
    assert_int_equal(inventory_generation(f->inv), 2001);
    assert_int_equal(checked, 300);
}

TEST_MAIN_LIST("fakehw inventory", cmocka_unit_test_setup_teardown(test_render, setup, teardown),
               cmocka_unit_test(test_no_dev_dir), cmocka_unit_test(test_health_commands),
               cmocka_unit_test(test_xid_commands),
               cmocka_unit_test_setup_teardown(test_xid_write, setup, teardown),
               cmocka_unit_test_setup_teardown(test_write_and_generation, setup, teardown),
               cmocka_unit_test_setup_teardown(test_all, setup, teardown),
               cmocka_unit_test_setup_teardown(test_names, setup, teardown),
               cmocka_unit_test_setup_teardown(test_replace, setup, teardown),
               cmocka_unit_test_setup_teardown(test_concurrent, setup, teardown),
               cmocka_unit_test_setup_teardown(test_render_snapshot, setup, teardown),
               cmocka_unit_test_setup_teardown(test_values_are_one_line, setup, teardown),
               cmocka_unit_test_setup_teardown(test_snapshot_consistent_under_flips, setup,
                                               teardown))
