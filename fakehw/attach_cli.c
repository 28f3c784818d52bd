// SPDX-License-Identifier: Apache-2.0
/* fakehw attach: shows or changes the attach state of attachable devices
 * through the tree, exactly as any writer would (one write(2) to
 * <mount>/devices/<device>/attach), then reads the state back. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
    "usage.  Reference: docs/fakehw.md, \"Attachable devices\".";

/* Prints a device's state; -1 (reported) when it cannot be read. */
static int show(const char *mount, const char *device)
{
    char path[PATH_MAX], fpath[PATH_MAX], dpath[PATH_MAX], state[64], failure[64], delay[32];
    if (snprintf(path, sizeof(path), "%s/%s/%s/%s", mount, FAKEHW_DIR_DEVICES, device,
                 FAKEHW_ATTR(ATTACH)) >= (int)sizeof(path) ||
        snprintf(fpath, sizeof(fpath), "%s/%s/%s/%s", mount, FAKEHW_DIR_DEVICES, device,
                 FAKEHW_ATTR(ATTACH_FAILURE)) >= (int)sizeof(fpath) ||
        snprintf(dpath, sizeof(dpath), "%s/%s/%s/%s", mount, FAKEHW_DIR_DEVICES, device,
                 FAKEHW_ATTR(ATTACH_DELAY_MS)) >= (int)sizeof(dpath)) {
        fprintf(stderr, "fakehw attach: path under %s too long\n", mount);
        return -1;
    }
    if (cli_read_line(path, state, sizeof(state)) < 0) {
        cli_report_missing("fakehw attach", mount, device, path, errno);
        return -1;
    }
    if (cli_read_line(fpath, failure, sizeof(failure)) < 0) {
        fprintf(stderr, "fakehw attach: %s: %s\n", fpath, cli_explain(errno));
        return -1;
    }
    /* attachDelayMs is newer than attach: a tree without it shows none. */
    if (cli_read_line(dpath, delay, sizeof(delay)) < 0) {
        if (errno != ENOENT) {
            fprintf(stderr, "fakehw attach: %s: %s\n", dpath, cli_explain(errno));
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
    if (snprintf(path, sizeof(path), "%s/%s/%s/%s", mount, FAKEHW_DIR_DEVICES, device,
                 FAKEHW_ATTR(ATTACH)) >= (int)sizeof(path)) {
        fprintf(stderr, "fakehw attach: path under %s too long\n", mount);
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        cli_report_missing("fakehw attach", mount, device, path, errno);
        return -1;
    }
    ssize_t n = write(fd, cmd, strlen(cmd));
    int e = errno;
    close(fd);
    if (n != (ssize_t)strlen(cmd)) {
        char state[64];
        /* EINVAL on a valid command means the device is not attachable. */
        if (n < 0 && e == EINVAL && cli_read_line(path, state, sizeof(state)) == 0 &&
            !strcmp(state, fakehw_attach_name(FAKEHW_ATTACH_NONE)))
            fprintf(stderr, "fakehw attach: %s is not attachable (%s reads \"%s\")\n", device, path,
                    state);
        else
            fprintf(stderr, "fakehw attach: writing \"%s\" to %s: %s\n", cmd, path,
                    n < 0 ? cli_explain(e) : "short write");
        return -1;
    }
    return show(mount, device);
}

/* Whether a device under the tree is attachable (its attach is not none). */
static bool attachable(const char *mount, const char *device)
{
    char path[PATH_MAX], state[64];
    if (snprintf(path, sizeof(path), "%s/%s/%s/%s", mount, FAKEHW_DIR_DEVICES, device,
                 FAKEHW_ATTR(ATTACH)) >= (int)sizeof(path))
        return true; /* let apply report it */
    if (cli_read_line(path, state, sizeof(state)) < 0)
        return true;
    return strcmp(state, fakehw_attach_name(FAKEHW_ATTACH_NONE)) != 0;
}

static int run(const char *mount, const char *device, const char *cmd)
{
    return cmd == NULL ? show(mount, device) : apply(mount, device, cmd);
}

int attach_main(int argc, char **argv)
{
    const char *mount = FAKEHW_DEFAULT_ROOT;
    const struct flag flags[] = {
        {"mount", "FAKEHW_MOUNT", FLAG_STRING, &mount, "where the fakehw tree is mounted"},
    };
    const size_t nflags = sizeof(flags) / sizeof(flags[0]);
    struct error err;
    char *pos[3];
    int npos = 0;
    /* Flags may come anywhere; later rounds must not re-apply the
     * environment over the command line. */
    struct flag later[sizeof(flags) / sizeof(flags[0])];
    for (size_t i = 0; i < nflags; i++) {
        later[i] = flags[i];
        later[i].env = NULL;
    }
    for (int i = 0; i < argc;) {
        int next;
        int rc = flags_parse(i == 0 ? flags : later, nflags, argc - i, argv + i, &next, &err);
        if (rc == FLAGS_HELP) {
            flags_usage(
                stdout, "fakehw attach",
                "[--mount DIR] DEVICE|all [attach|detach|fail next|always|never|delay DURATION]",
                description, flags, nflags);
            return 0;
        }
        if (rc < 0) {
            fprintf(stderr, "fakehw attach: %s\n", err.msg);
            return EXIT_USAGE;
        }
        i += next;
        if (i >= argc)
            break;
        if (npos == 3) {
            fprintf(stderr, "fakehw attach: unexpected argument \"%s\" (see --help)\n", argv[i]);
            return EXIT_USAGE;
        }
        pos[npos++] = argv[i];
    }
    if (npos == 0) {
        fprintf(stderr, "fakehw attach: need DEVICE (see --help)\n");
        return EXIT_USAGE;
    }
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

    char devices[PATH_MAX];
    snprintf(devices, sizeof(devices), "%s/%s", mount, FAKEHW_DIR_DEVICES);
    DIR *dir = opendir(devices);
    if (dir == NULL) {
        int e = errno;
        if (e == ENOENT)
            fprintf(stderr, "fakehw attach: %s is not a fakehw tree (no %s)\n", mount, devices);
        else
            fprintf(stderr, "fakehw attach: %s: %s\n", devices, cli_explain(e));
        return 1;
    }
    int status = 0;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        if (de->d_name[0] == '.' || (command != NULL && !attachable(mount, de->d_name)))
            continue;
        if (run(mount, de->d_name, command) < 0)
            status = 1;
    }
    closedir(dir);
    return status;
}
