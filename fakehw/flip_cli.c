// SPDX-License-Identifier: Apache-2.0
/* fakehw flip: changes a device's health through the tree, exactly as any
 * writer would (one write(2) to <mount>/devices/<device>/health), then
 * reads it back. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "fakehw_tree.h"
#include "flags.h"
#include "inventory.h"

static const char name[] = "fakehw flip";

static const char description[] =
    "Sets the health of DEVICE (a device name, or \"all\") in a running fakehw tree:\n"
    "STATE is healthy or unhealthy; --reason sets healthReason (e.g. \"XID 79: GPU has fallen\n"
    "off the bus\").  Readers of the tree see the change and the generation counter bumps.";

static int flip_one(const char *mount, const char *device, void *ctx)
{
    const char *cmd = ctx;
    char path[PATH_MAX], rpath[PATH_MAX];
    if (cli_device_path(path, sizeof(path), name, mount, device, FAKEHW_ATTR(HEALTH)) < 0 ||
        cli_device_path(rpath, sizeof(rpath), name, mount, device, FAKEHW_ATTR(HEALTH_REASON)) < 0)
        return -1;
    int rc = cli_write_once(name, mount, device, path, cmd);
    if (rc == CLI_WRITE_FAILED)
        cli_report_write(name, path, cmd, errno);
    if (rc < 0)
        return -1;
    char state[64], reason[FAKEHW_REASON_MAX];
    if (cli_read_line(path, state, sizeof(state)) < 0 ||
        cli_read_line(rpath, reason, sizeof(reason)) < 0) {
        fprintf(stderr, "%s: reading back %s: %s\n", name, path, cli_explain(errno));
        return -1;
    }
    if (reason[0] != '\0')
        printf("%s: %s (%s)\n", device, state, reason);
    else
        printf("%s: %s\n", device, state);
    return 0;
}

static const struct cli_command flip_cli = {
    name, "[--mount DIR] DEVICE|all STATE [--reason TEXT]", description, 2, 2, "DEVICE and STATE"};

int flip_main(int argc, char **argv)
{
    const char *reason = NULL;
    const struct flag reason_flag = {"reason", NULL, FLAG_STRING, &reason,
                                     "reason text, shown in healthReason"};
    struct cli_args a = cli_parse(&flip_cli, &reason_flag, 1, argc, argv);
    if (a.status != FLAGS_GO_ON)
        return a.status;
    const char *device = a.pos[0], *state = a.pos[1];
    if (strcmp(state, FAKEHW_HEALTHY) != 0 && strcmp(state, FAKEHW_UNHEALTHY) != 0) {
        fprintf(stderr, "%s: \"%s\" is not a health state (healthy or unhealthy)\n", name, state);
        return EXIT_USAGE;
    }
    char cmd[FAKEHW_REASON_MAX + 32];
    int n = snprintf(cmd, sizeof(cmd), "%s%s%s\n", state, reason && *reason ? " " : "",
                     reason ? reason : "");
    bool healthy;
    char parsed[FAKEHW_REASON_MAX];
    struct error err;
    if (n < 0 || (size_t)n >= sizeof(cmd) ||
        health_parse_command(cmd, (size_t)n, &healthy, parsed, sizeof(parsed), &err) < 0) {
        fprintf(stderr, "%s: --reason must be one line of at most %d bytes\n", name,
                FAKEHW_REASON_MAX - 1);
        return EXIT_USAGE;
    }
    if (strcmp(device, FLIP_ALL_DEVICES) != 0)
        return flip_one(a.mount, device, cmd) < 0 ? 1 : 0;
    return cli_for_each_device(name, a.mount, flip_one, cmd);
}
