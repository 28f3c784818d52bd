// SPDX-License-Identifier: Apache-2.0
/* Unit tests for attachable devices: the attach state machine, the
 * inventory's attach file and timer tick, and the `attach` config key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "config.h"
#include "fakehw_attach.h"
#include "inventory.h"
#include "monotonic.h"
#include "uuid.h"
#include "inventory_helpers.h"
#include "common/tests/test_main.h"

static const struct gpu_attach plain = {0};
static const struct gpu_attach slow = {.attachable = true, .delay_ms = 500};
static const struct gpu_attach quick = {.attachable = true};

static struct attach_command cmd(const char *text)
{
    struct attach_command c;
    struct error err;
    int rc = attach_parse_command(text, strlen(text), &c, &err);
    if (rc < 0)
        fail_msg("%s: %s", text, err.msg);
    return c;
}

static void apply(struct attach_live *l, const struct gpu_attach *cfg, const char *text,
                  int64_t now, bool want_changed)
{
    struct attach_command c = cmd(text);
    struct error err;
    bool changed;
    assert_int_equal(attach_apply(l, cfg, &c, now, &changed, &err), 0);
    assert_int_equal(changed, want_changed);
}

static void test_commands_parse_strictly(void **state)
{
    (void)state;
    struct attach_command c;
    struct error err;
    assert_int_equal(attach_parse_command("attach\n", 7, &c, &err), 0);
    assert_int_equal(c.verb, ATTACH_VERB_ATTACH);
    assert_int_equal(attach_parse_command("detach", 6, &c, &err), 0);
    assert_int_equal(c.verb, ATTACH_VERB_DETACH);
    assert_int_equal(attach_parse_command("fail always\n", 12, &c, &err), 0);
    assert_int_equal(c.verb, ATTACH_VERB_FAIL);
    assert_int_equal(c.failure, FAKEHW_ATTACH_FAIL_ALWAYS);
    assert_int_equal(attach_parse_command("delay 1h30m\n", 12, &c, &err), 0);
    assert_int_equal(c.verb, ATTACH_VERB_DELAY);
    assert_int_equal(c.delay_ms, 5400 * 1000);
    assert_int_equal(attach_parse_command("delay 0", 7, &c, &err), 0);
    assert_int_equal(c.delay_ms, 0);
    const char *bad_delay[] = {"delay",     "delay ",     "delay 5",
                               "delay -1s", "delay soon", "delay 400d"};
    for (size_t i = 0; i < sizeof(bad_delay) / sizeof(bad_delay[0]); i++) {
        errno = 0;
        assert_int_equal(attach_parse_command(bad_delay[i], strlen(bad_delay[i]), &c, &err), -1);
        assert_int_equal(errno, EINVAL);
        assert_true(strstr(err.msg, "attach: delay: ") == err.msg ||
                    strstr(err.msg, "not a command") != NULL);
    }
    const char *bad[] = {"",           "Attach",    "attach now", "fail", "fail sometimes",
                         "attach\n\n", "fail  next"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        errno = 0;
        assert_int_equal(attach_parse_command(bad[i], strlen(bad[i]), &c, &err), -1);
        assert_int_equal(errno, EINVAL);
        assert_non_null(strstr(err.msg, "not a command"));
    }
}

static void test_attach_waits_for_its_delay(void **state)
{
    (void)state;
    struct attach_live l;
    attach_init(&l, &slow);
    assert_int_equal(l.state, FAKEHW_ATTACH_DETACHED);
    apply(&l, &slow, "attach", 1000, true);
    assert_int_equal(l.state, FAKEHW_ATTACH_ATTACHING);
    apply(&l, &slow, "attach", 1100, false); /* already on its way: no restart */
    assert_false(attach_tick(&l, 1499));
    assert_int_equal(l.state, FAKEHW_ATTACH_ATTACHING);
    assert_true(attach_tick(&l, 1500));
    assert_int_equal(l.state, FAKEHW_ATTACH_ATTACHED);
    assert_false(attach_tick(&l, 9999));
    apply(&l, &slow, "detach", 2000, true);
    assert_int_equal(l.state, FAKEHW_ATTACH_DETACHED);
    apply(&l, &slow, "detach", 2000, false);
}

static void test_delay_set_at_run_time(void **state)
{
    (void)state;
    struct attach_live l;
    attach_init(&l, &slow);
    assert_int_equal(l.delay_ms, 500);
    apply(&l, &slow, "attach", 1000, true);
    /* A new delay leaves the attach in progress alone... */
    apply(&l, &slow, "delay 1h", 1100, true);
    apply(&l, &slow, "delay 1h", 1100, false);
    assert_true(attach_tick(&l, 1500));
    assert_int_equal(l.state, FAKEHW_ATTACH_ATTACHED);
    /* ...and the next one takes it. */
    apply(&l, &slow, "detach", 2000, true);
    apply(&l, &slow, "attach", 2000, true);
    assert_false(attach_tick(&l, 2000 + 3600 * 1000 - 1));
    assert_true(attach_tick(&l, 2000 + 3600 * 1000));
    /* Down to 0: at once. */
    apply(&l, &slow, "delay 0", 0, true);
    apply(&l, &slow, "detach", 0, true);
    apply(&l, &slow, "attach", 0, true);
    assert_int_equal(l.state, FAKEHW_ATTACH_ATTACHED);
}

static void test_scripted_failures(void **state)
{
    (void)state;
    struct attach_live l;
    attach_init(&l, &quick);
    apply(&l, &quick, "fail next", 0, true);
    apply(&l, &quick, "attach", 0, true); /* no delay: ends at once */
    assert_int_equal(l.state, FAKEHW_ATTACH_FAILED);
    assert_int_equal(l.failure, FAKEHW_ATTACH_FAIL_NEVER); /* next means once */
    apply(&l, &quick, "attach", 0, true);                  /* a retry */
    assert_int_equal(l.state, FAKEHW_ATTACH_ATTACHED);

    apply(&l, &quick, "detach", 0, true);
    apply(&l, &quick, "fail always", 0, true);
    for (int i = 0; i < 3; i++) {
        apply(&l, &quick, "attach", 0, true);
        assert_int_equal(l.state, FAKEHW_ATTACH_FAILED);
        assert_int_equal(l.failure, FAKEHW_ATTACH_FAIL_ALWAYS);
    }
    apply(&l, &quick, "fail never", 0, true);
    apply(&l, &quick, "attach", 0, true);
    assert_int_equal(l.state, FAKEHW_ATTACH_ATTACHED);

    /* The failure is decided when the attach ends, not when it starts. */
    struct attach_live s;
    attach_init(&s, &slow);
    apply(&s, &slow, "attach", 0, true);
    apply(&s, &slow, "fail next", 10, true);
    assert_true(attach_tick(&s, 500));
    assert_int_equal(s.state, FAKEHW_ATTACH_FAILED);
}

static void test_plain_devices_refuse_commands(void **state)
{
    (void)state;
    struct attach_live l;
    attach_init(&l, &plain);
    assert_int_equal(l.state, FAKEHW_ATTACH_NONE);
    struct attach_command c = cmd("attach");
    struct error err;
    bool changed = true;
    errno = 0;
    assert_int_equal(attach_apply(&l, &plain, &c, 0, &changed, &err), -1);
    assert_int_equal(errno, EINVAL);
    assert_false(changed);
    assert_non_null(strstr(err.msg, "not attachable"));
    assert_int_equal(l.state, FAKEHW_ATTACH_NONE);
}

static void test_names_round_trip(void **state)
{
    (void)state;
    for (int s = FAKEHW_ATTACH_NONE; s <= FAKEHW_ATTACH_FAILED; s++) {
        enum fakehw_attach back;
        assert_true(fakehw_attach_parse(fakehw_attach_name((enum fakehw_attach)s), &back));
        assert_int_equal(back, s);
    }
    enum fakehw_attach st;
    assert_false(fakehw_attach_parse("Attached", &st));
    enum fakehw_attach_failure f;
    assert_true(fakehw_attach_failure_parse("always", &f));
    assert_int_equal(f, FAKEHW_ATTACH_FAIL_ALWAYS);
    assert_false(fakehw_attach_failure_parse("", &f));
}

/* --- the inventory --- */

static void make_device(struct gpu_device *d, long index, const char *name,
                        const struct gpu_attach *attach)
{
    make_h100(d, index, name);
    d->attach = *attach;
}

static int wakes;
static void count_wake(void *ctx)
{
    (void)ctx;
    wakes++;
}

static void write_attach(struct live_inventory *inv, const char *dev, const char *text, int want_rc)
{
    struct error err;
    assert_int_equal(inventory_write_attach(inv, dev, text, strlen(text), &err), want_rc);
}

static void test_inventory_attach_file_and_tick(void **state)
{
    (void)state;
    struct gpu_device devs[2];
    make_device(&devs[0], 0, "gpu-0", &plain);
    struct gpu_attach hour = {.attachable = true, .delay_ms = 3600 * 1000};
    make_device(&devs[1], 1, "gpu-1", &hour);
    struct error err;
    struct live_inventory *inv = inventory_new("node-a", "", devs, 2, &err);
    assert_non_null(inv);
    inventory_set_attach_waker(inv, count_wake, NULL);
    assert_true(inventory_attribute_writable(FAKEHW_ATTR(ATTACH)));
    assert_false(inventory_attribute_writable(FAKEHW_ATTR(ATTACH_FAILURE)));
    expect_file(inv, "gpu-0", FAKEHW_ATTR(ATTACH), "none\n");
    expect_file(inv, "gpu-1", FAKEHW_ATTR(ATTACH), "detached\n");
    expect_file(inv, "gpu-1", FAKEHW_ATTR(ATTACH_FAILURE), "never\n");

    write_attach(inv, "gpu-0", "attach", -1);
    write_attach(inv, "gpu-9", "attach", -1);
    write_attach(inv, "gpu-1", "bogus", -1);
    assert_int_equal(inventory_generation(inv), 1);

    wakes = 0;
    write_attach(inv, "gpu-1", "attach\n", 0);
    assert_int_equal(wakes, 1);
    assert_int_equal(inventory_generation(inv), 2);
    expect_file(inv, "gpu-1", FAKEHW_ATTR(ATTACH), "attaching\n");
    int64_t now = monotonic_ms();
    int64_t due = inventory_attach_tick(inv, now);
    assert_true(due > now + 3500 * 1000 && due <= now + 3600 * 1000);
    assert_int_equal(inventory_generation(inv), 2); /* nothing ended */
    assert_int_equal(inventory_attach_tick(inv, due), -1);
    assert_int_equal(inventory_generation(inv), 3);
    expect_file(inv, "gpu-1", FAKEHW_ATTR(ATTACH), "attached\n");

    write_attach(inv, "gpu-1", "fail always", 0);
    expect_file(inv, "gpu-1", FAKEHW_ATTR(ATTACH_FAILURE), "always\n");
    assert_int_equal(inventory_generation(inv), 4);
    expect_file(inv, "gpu-1", FAKEHW_ATTR(ATTACH_DELAY_MS), "3600000\n");
    write_attach(inv, "gpu-1", "delay 2s", 0);
    expect_file(inv, "gpu-1", FAKEHW_ATTR(ATTACH_DELAY_MS), "2000\n");
    assert_int_equal(inventory_generation(inv), 5);
    expect_file(inv, "gpu-0", FAKEHW_ATTR(ATTACH_DELAY_MS), "0\n");

    /* The snapshot carries both files, in tree order after healthSince. */
    char *text;
    size_t len;
    uint64_t gen;
    assert_int_equal(inventory_render_snapshot(inv, &text, &len, &gen, &err), 0);
    char *tail = strstr(text, "device gpu-1\n");
    assert_non_null(tail);
    assert_non_null(strstr(tail, "\nhealthSince "));
    assert_non_null(strstr(
        tail, "\nattach attached\nattachFailure always\nattachDelayMs 2000\nvirtual false\n"));
    assert_non_null(strstr(tail, "\nend 2\n"));
    free(text);
    inventory_free(inv);
}

static void test_reload_keeps_attach_of_unchanged_devices(void **state)
{
    (void)state;
    struct gpu_device devs[2];
    make_device(&devs[0], 0, "gpu-0", &quick);
    make_device(&devs[1], 1, "gpu-1", &quick);
    struct error err;
    struct live_inventory *inv = inventory_new("node-a", "", devs, 2, &err);
    assert_non_null(inv);
    write_attach(inv, "gpu-0", "attach", 0);
    write_attach(inv, "gpu-1", "attach", 0);
    devs[1].attach.delay_ms = 10; /* a changed config starts over */
    bool changed;
    assert_int_equal(inventory_replace(inv, devs, 2, &changed, &err), 0);
    assert_true(changed);
    expect_file(inv, "gpu-0", FAKEHW_ATTR(ATTACH), "attached\n");
    expect_file(inv, "gpu-1", FAKEHW_ATTR(ATTACH), "detached\n");
    inventory_free(inv);
}

/* --- the config key --- */

static void test_config_attach_key(void **state)
{
    (void)state;
    const char *yaml = "defaults:\n"
                       "  devices:\n"
                       "    - profile: A100-SXM4-80GB\n"
                       "    - profile: H100-SXM5-80GB\n"
                       "      attach:\n"
                       "        delay: 1m30s\n"
                       "        failure: always\n"
                       "    - profile: H100-SXM5-80GB\n"
                       "      attach: {}\n"
                       "    - profile: L4\n"
                       "      virtual: true\n";
    struct config cfg;
    struct error err;
    assert_int_equal(config_load_string(yaml, strlen(yaml), "a.yaml", "n", &cfg, &err), 0);
    assert_int_equal(cfg.ndevices, 4);
    assert_false(cfg.devices[0].attach.attachable);
    assert_true(cfg.devices[1].attach.attachable);
    assert_int_equal(cfg.devices[1].attach.delay_ms, 90000);
    assert_int_equal(cfg.devices[1].attach.failure, FAKEHW_ATTACH_FAIL_ALWAYS);
    assert_true(cfg.devices[2].attach.attachable);
    assert_int_equal(cfg.devices[2].attach.delay_ms, 0);
    assert_int_equal(cfg.devices[2].attach.failure, FAKEHW_ATTACH_FAIL_NEVER);
    assert_false(cfg.devices[2].virtual_gpu);
    assert_true(cfg.devices[3].virtual_gpu);
    config_free(&cfg);
}

static void expect_config_error(const char *yaml, const char *want)
{
    struct config cfg;
    struct error err;
    assert_int_equal(config_load_string(yaml, strlen(yaml), "a.yaml", "n", &cfg, &err), -1);
    if (strcmp(err.msg, want) != 0)
        fail_msg("got  %s\nwant %s", err.msg, want);
}

static void test_config_attach_errors(void **state)
{
    (void)state;
    expect_config_error("defaults:\n  devices:\n    - profile: T4\n      attach:\n"
                        "        failure: sometimes\n",
                        "a.yaml:5:18: defaults.devices[0].attach.failure: \"sometimes\" is not an "
                        "attach failure (never, next or always)");
    expect_config_error("defaults:\n  devices:\n    - profile: T4\n      attach:\n"
                        "        delay: 5\n",
                        "a.yaml:5:16: defaults.devices[0].attach.delay: \"5\" is not a valid "
                        "duration: a unit is missing (e.g. 30s, 500ms, 1m30s)");
    expect_config_error("defaults:\n  devices:\n    - profile: T4\n      attach:\n"
                        "        speed: fast\n",
                        "a.yaml:5:9: defaults.devices[0].attach.speed: unknown key (known keys "
                        "here: delay, failure)");
    expect_config_error(
        "defaults:\n  devices:\n    - profile: T4\n      virtual: maybe\n",
        "a.yaml:4:16: defaults.devices[0].virtual: \"maybe\" is not a boolean (true "
        "or false)");
    expect_config_error(
        "defaults:\n  devices:\n    - profile: T4\n      attach: yes\n",
        "a.yaml:4:15: defaults.devices[0].attach: expected a mapping (key: value lines), got "
        "a string");
}

TEST_MAIN("fakehw attach", test_commands_parse_strictly, test_attach_waits_for_its_delay,
          test_delay_set_at_run_time, test_scripted_failures, test_plain_devices_refuse_commands,
          test_names_round_trip, test_inventory_attach_file_and_tick,
          test_reload_keeps_attach_of_unchanged_devices, test_config_attach_key,
          test_config_attach_errors)
