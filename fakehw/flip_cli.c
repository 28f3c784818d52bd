// SPDX-License-Identifier: Apache-2.0
/* fakehw flip: changes a device's health through the tree, exactly as any
 * writer would (one write(2) to <mount>/devices/<device>/health), then
 * reads it back. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "fakehw_tree.h"
#include "flags.h"
#include "inventory.h"

static const char description[] =
    "Sets the health of DEVICE (a device name, or \"all\") in a running fakehw tree:\n"
    "STATE is healthy or unhealthy; --reason sets healthReason (e.g. \"XID 79: GPU has fallen\n"
    "off the bus\").  Readers of the tree see the change and the generation counter bumps.";

static int flip_one(const char *mount, const char *device, const char *cmd)
{
    char path[PATH_MAX], rpath[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/%s/%s/%s", mount, FAKEHW_DIR_DEVICES, device,
                 FAKEHW_ATTR(HEALTH)) >= (int)sizeof(path) ||
        snprintf(rpath, sizeof(rpath), "%s/%s/%s/%s", mount, FAKEHW_DIR_DEVICES, device,
                 FAKEHW_ATTR(HEALTH_REASON)) >= (int)sizeof(rpath)) {
        fprintf(stderr, "fakehw flip: path under %s too long\n", mount);
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        cli_report_missing("fakehw flip", mount, device, path, errno);
        return -1;
    }
    ssize_t n = write(fd, cmd, strlen(cmd));
    int e = errno;
    close(fd);
    if (n != (ssize_t)strlen(cmd)) {
        fprintf(stderr, "fakehw flip: writing \"%.*s\" to %s: %s\n", (int)strcspn(cmd, "\n"), cmd,
                path, n < 0 ? cli_explain(e) : "short write");
        return -1;
    }
    char state[64], reason[FAKEHW_REASON_MAX];
    if (cli_read_line(path, state, sizeof(state)) < 0 ||
        cli_read_line(rpath, reason, sizeof(reason)) < 0) {
        fprintf(stderr, "fakehw flip: reading back %s: %s\n", path, cli_explain(errno));
        return -1;
    }
    if (reason[0] != '\0')
        printf("%s: %s (%s)\n", device, state, reason);
    else
        printf("%s: %s\n", device, state);
    return 0;
}

int flip_main(int argc, char **argv)
{
    const char *mount = FAKEHW_DEFAULT_ROOT, *reason = NULL;
    const struct flag flags[] = {
        {"mount", "FAKEHW_MOUNT", FLAG_STRING, &mount, "where the fakehw tree is mounted"},
        {"reason", NULL, FLAG_STRING, &reason, "reason text, shown in healthReason"},
    };
    const size_t nflags = sizeof(flags) / sizeof(flags[0]);
    struct error err;
    char *pos[2];
    int npos = 0;
    /* Flags may come before, between or after the two positionals; later
     * rounds must not re-apply the environment over the command line. */
    struct flag later[sizeof(flags) / sizeof(flags[0])];
    for (size_t i = 0; i < nflags; i++) {
        later[i] = flags[i];
        later[i].env = NULL;
    }
    for (int i = 0; i < argc;) {
        int next;
        int rc = flags_parse(i == 0 ? flags : later, nflags, argc - i, argv + i, &next, &err);
        if (rc == FLAGS_HELP) {
            flags_usage(stdout, "fakehw flip", "[--mount DIR] DEVICE|all STATE [--reason TEXT]",
                        description, flags, nflags);
            return 0;
        }
        if (rc < 0) {
            fprintf(stderr, "fakehw flip: %s\n", err.msg);
            return EXIT_USAGE;
        }
        i += next;
        if (i >= argc)
            break;
        if (npos == 2) {
            fprintf(stderr, "fakehw flip: unexpected argument \"%s\" (see --help)\n", argv[i]);
            return EXIT_USAGE;
        }
        pos[npos++] = argv[i];
        /* argv[i] becomes the argv[0] flags_parse skips on the next round. */
    }
    if (npos != 2) {
        fprintf(stderr, "fakehw flip: need DEVICE and STATE (see --help)\n");
        return EXIT_USAGE;
    }
    const char *device = pos[0], *state = pos[1];
    if (strcmp(state, FAKEHW_HEALTHY) != 0 && strcmp(state, FAKEHW_UNHEALTHY) != 0) {
        fprintf(stderr, "fakehw flip: \"%s\" is not a health state (healthy or unhealthy)\n",
                state);
        return EXIT_USAGE;
    }
    char cmd[FAKEHW_REASON_MAX + 32];
    int n = snprintf(cmd, sizeof(cmd), "%s%s%s\n", state, reason && *reason ? " " : "",
                     reason ? reason : "");
    bool healthy;
    char parsed[FAKEHW_REASON_MAX];
    if (n < 0 || (size_t)n >= sizeof(cmd) ||
        health_parse_command(cmd, (size_t)n, &healthy, parsed, sizeof(parsed), &err) < 0) {
        fprintf(stderr, "fakehw flip: --reason must be one line of at most %d bytes\n",
                FAKEHW_REASON_MAX - 1);
        return EXIT_USAGE;
    }
    if (strcmp(device, FLIP_ALL_DEVICES) != 0)
        return flip_one(mount, device, cmd) < 0 ? 1 : 0;

    char devices[PATH_MAX];
    snprintf(devices, sizeof(devices), "%s/%s", mount, FAKEHW_DIR_DEVICES);
    DIR *dir = opendir(devices);
    if (dir == NULL) {
        fprintf(stderr, "fakehw flip: %s: %s\n", devices, cli_explain(errno));
        return 1;
    }
    int status = 0;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (flip_one(mount, de->d_name, cmd) < 0)
            status = 1;
    }
    closedir(dir);
    return status;
}
