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

static const char description[] =
    "Shows the attach state of DEVICE (a device name, or \"all\") in a running fakehw tree, or\n"
    "changes it: attach, detach, script the outcome of attaches with fail next (the next\n"
    "one fails), fail always or fail never, or set how long the next attaches take with\n"
    "delay DURATION (e.g. 30s, 1h).  With \"all\", commands go to the attachable devices\n"
    "only.  Prints DEVICE: STATE (attachFailure FAILURE, attachDelayMs MS) for each device.  Exit\n"
    "status 1 when a device is missing, not attachable or refused the command, 2 for bad\n"
    "usage.  Reference: \"Attachable devices\" in fakehw.md of the fakehw-dra documentation.";

static const char name[] = "fakehw attach";

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

int attach_main(int argc, char **argv)
{
    const char *mount = cli_default_mount;
    const struct flag flags[] = {
        CLI_MOUNT_FLAG(mount),
    };
    const struct cli_command line = {
        .name = name,
        .usage = "[--mount DIR] DEVICE|all [attach|detach|fail next|always|never|delay DURATION]",
        .description = description,
        .flags = flags,
        .nflags = FLAGS_COUNT(flags),
        .maxpos = 3,
        .minpos = 1,
        .need = "DEVICE",
    };
    char *pos[3];
    int npos;
    int parsed = cli_parse(&line, argc, argv, pos, &npos);
    if (parsed >= 0)
        return parsed;
    const char *device = pos[0];
    char cmd[32];
    const char *command = NULL;
    if (npos > 1) {
        enum fakehw_attach_failure failure;
        bool ok;
        int64_t ms;
        struct error derr;
        if (!strcmp(pos[1], "fail"))
            ok = npos == 3 && fakehw_attach_failure_parse(pos[2], &failure);
        else if (!strcmp(pos[1], "delay")) {
            if (npos == 3 && duration_parse_ms(pos[2], &ms, &derr) < 0) {
                fprintf(stderr, "fakehw attach: delay: %s\n", derr.msg);
                return EXIT_USAGE;
            }
            ok = npos == 3;
        } else
            ok = npos == 2 && (!strcmp(pos[1], "attach") || !strcmp(pos[1], "detach"));
        if (!ok) {
            char given[64];
            snprintf(given, sizeof(given), "%s%s%s", pos[1], npos == 3 ? " " : "",
                     npos == 3 ? pos[2] : "");
            fprintf(stderr,
                    "fakehw attach: \"%s\" is not an attach command (attach, detach, fail "
                    "next|always|never, delay DURATION)\n",
                    given);
            return EXIT_USAGE;
        }
        snprintf(cmd, sizeof(cmd), "%s%s%s", pos[1], npos == 3 ? " " : "", npos == 3 ? pos[2] : "");
        command = cmd;
    }
    if (strcmp(device, FLIP_ALL_DEVICES) != 0)
        return run(mount, device, command) < 0 ? 1 : 0;
    return cli_for_each_device(name, mount, run_attachable, (void *)command);
}
