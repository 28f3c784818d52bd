// SPDX-License-Identifier: Apache-2.0
/* fakehw attach: shows or changes the attach state of attachable devices
 * through the tree, exactly as any writer would (one write(2) to
 * <mount>/devices/<device>/attach), then reads the state back. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "duration.h"
#include "fakehw_attach.h"
#include "fakehw_tree.h"
#include "flags.h"

static const char name[] = "fakehw attach";

static const char description[] =
    "Shows the attach state of DEVICE (a device name, or \"all\") in a running fakehw tree, or\n"
    "changes it: attach, detach, script the outcome of attaches with fail next (the next\n"
    "one fails), fail always or fail never, or set how long the next attaches take with\n"
    "delay DURATION (e.g. 30s, 1h).  With \"all\", commands go to the attachable devices\n"
    "only.  Prints DEVICE: STATE (attachFailure FAILURE, attachDelayMs MS) for each device.  Exit\n"
    "status 1 when a device is missing, not attachable or refused the command, 2 for bad\n"
    "usage.  Reference: \"Attachable devices\" in fakehw.md of the fakehw-dra documentation.";

/* Prints a device's state; -1 (reported) when it cannot be read. */
static int show(const char *mount, const char *device)
{
    char path[PATH_MAX], fpath[PATH_MAX], dpath[PATH_MAX], state[64], failure[64], delay[32];
    if (cli_device_path(path, sizeof(path), name, mount, device, FAKEHW_ATTR(ATTACH)) < 0 ||
        cli_device_path(fpath, sizeof(fpath), name, mount, device, FAKEHW_ATTR(ATTACH_FAILURE)) <
            0 ||
        cli_device_path(dpath, sizeof(dpath), name, mount, device, FAKEHW_ATTR(ATTACH_DELAY_MS)) <
            0)
        return -1;
    if (cli_read_line(path, state, sizeof(state)) < 0) {
        cli_report_missing(name, mount, device, path, errno);
        return -1;
    }
    if (cli_read_line(fpath, failure, sizeof(failure)) < 0) {
        fprintf(stderr, "%s: %s: %s\n", name, fpath, cli_explain(errno));
        return -1;
    }
    /* attachDelayMs is newer than attach: a tree without it shows none. */
    if (cli_read_line(dpath, delay, sizeof(delay)) < 0) {
        if (errno != ENOENT) {
            fprintf(stderr, "%s: %s: %s\n", name, dpath, cli_explain(errno));
            return -1;
        }
        printf("%s: %s (attachFailure %s)\n", device, state, failure);
        return 0;
    }
    printf("%s: %s (attachFailure %s, attachDelayMs %s)\n", device, state, failure, delay);
    return 0;
}

/* Writes cmd to a device's attach file and shows the result. */
static int apply(const char *mount, const char *device, const char *cmd)
{
    char path[PATH_MAX];
    if (cli_device_path(path, sizeof(path), name, mount, device, FAKEHW_ATTR(ATTACH)) < 0)
        return -1;
    int rc = cli_write_once(name, mount, device, path, cmd);
    if (rc == CLI_WRITE_FAILED) {
        int e = errno;
        char state[64];
        /* EINVAL on a valid command means the device is not attachable. */
        if (e == EINVAL && cli_read_line(path, state, sizeof(state)) == 0 &&
            !strcmp(state, fakehw_attach_name(FAKEHW_ATTACH_NONE)))
            fprintf(stderr, "%s: %s is not attachable (%s reads \"%s\")\n", name, device, path,
                    state);
        else
            cli_report_write(name, path, cmd, e);
    }
    return rc < 0 ? -1 : show(mount, device);
}

/* Whether a device under the tree is attachable (its attach is not none). */
static bool attachable(const char *mount, const char *device)
{
    char path[PATH_MAX], state[64];
    if (cli_device_path(path, sizeof(path), NULL, mount, device, FAKEHW_ATTR(ATTACH)) < 0)
        return true; /* let apply report it */
    if (cli_read_line(path, state, sizeof(state)) < 0)
        return true;
    return strcmp(state, fakehw_attach_name(FAKEHW_ATTACH_NONE)) != 0;
}

/* One device: shows it (cmd NULL) or sends it cmd. */
static int run(const char *mount, const char *device, const char *cmd)
{
    return cmd == NULL ? show(mount, device) : apply(mount, device, cmd);
}

/* run for one device of "all": commands go to the attachable ones only. */
static int run_attachable(const char *mount, const char *device, void *ctx)
{
    const char *cmd = ctx;
    if (cmd != NULL && !attachable(mount, device))
        return 0;
    return run(mount, device, cmd);
}

static const struct cli_command attach_cli = {
    name,        "[--mount DIR] DEVICE|all [attach|detach|fail next|always|never|delay DURATION]",
    description, 3,
    1,           "DEVICE"};

/* The attach command the n words after DEVICE make into cmd ("" for none:
 * only show): 0, or EXIT_USAGE after a message. */
static int parse_command(char *const *words, int n, char *cmd, size_t size)
{
    cmd[0] = '\0';
    if (n == 0)
        return 0;
    bool ok;
    if (!strcmp(words[0], "fail")) {
        enum fakehw_attach_failure failure;
        ok = n == 2 && fakehw_attach_failure_parse(words[1], &failure);
    } else if (!strcmp(words[0], "delay")) {
        int64_t ms;
        struct error derr;
        if (n == 2 && duration_parse_ms(words[1], &ms, &derr) < 0) {
            fprintf(stderr, "%s: delay: %s\n", name, derr.msg);
            return EXIT_USAGE;
        }
        ok = n == 2;
    } else {
        ok = n == 1 && (!strcmp(words[0], "attach") || !strcmp(words[0], "detach"));
    }
    char given[64];
    snprintf(given, sizeof(given), "%s%s%s", words[0], n == 2 ? " " : "", n == 2 ? words[1] : "");
    if (!ok) {
        fprintf(stderr,
                "%s: \"%s\" is not an attach command (attach, detach, fail next|always|never, "
                "delay DURATION)\n",
                name, given);
        return EXIT_USAGE;
    }
    snprintf(cmd, size, "%s", given);
    return 0;
}

int attach_main(int argc, char **argv)
{
    struct cli_args a = cli_parse(&attach_cli, NULL, 0, argc, argv);
    if (a.status != FLAGS_GO_ON)
        return a.status;
    char cmd[32];
    if (parse_command(a.pos + 1, a.npos - 1, cmd, sizeof(cmd)) != 0)
        return EXIT_USAGE;
    const char *command = cmd[0] != '\0' ? cmd : NULL;
    if (strcmp(a.pos[0], FLIP_ALL_DEVICES) != 0)
        return run(a.mount, a.pos[0], command) < 0 ? 1 : 0;
    return cli_for_each_device(name, a.mount, run_attachable, (void *)command);
}
