// SPDX-License-Identifier: Apache-2.0
/* fakehw xid: shows, reports or clears a device's XID through the tree,
 * exactly as any writer would (one write(2) to <mount>/devices/<device>/xid),
 * then reads it back. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "fakehw_tree.h"
#include "flags.h"
#include "inventory.h"

static const char name[] = "fakehw xid";

static const char description[] =
    "Reports XID CODE (an NVIDIA driver error code, 1..99999, e.g. 79: GPU has fallen off the\n"
    "bus) on DEVICE (a device name, or \"all\") in a running fakehw tree, clears it with\n"
    "--clear, or shows it with neither.  Readers of the tree see the change and the\n"
    "generation counter bumps; the kubelet plugin classifies the XID as NVIDIA's driver does\n"
    "(fatal, or an ignored application error).  Prints DEVICE: xid CODE, or DEVICE: no xid.\n"
    "Exit status 1 when a device is missing or refused the write, 2 for bad usage.\n"
    "Reference: \"XIDs\" in fakehw.md of the fakehw-dra documentation.";

/* Prints a device's XID; -1 (reported) when it cannot be read. */
static int show(const char *mount, const char *device)
{
    char path[PATH_MAX], value[32];
    if (cli_device_path(path, sizeof(path), name, mount, device, FAKEHW_ATTR(XID)) < 0)
        return -1;
    if (cli_read_line(path, value, sizeof(value)) < 0) {
        cli_report_missing(name, mount, device, path, errno);
        return -1;
    }
    if (!strcmp(value, "0"))
        printf("%s: no xid\n", device);
    else
        printf("%s: xid %s\n", device, value);
    return 0;
}

/* Writes cmd ("CODE\n", or NULL to only show) and shows the result. */
static int apply(const char *mount, const char *device, void *ctx)
{
    const char *cmd = ctx;
    if (cmd == NULL)
        return show(mount, device);
    char path[PATH_MAX];
    if (cli_device_path(path, sizeof(path), name, mount, device, FAKEHW_ATTR(XID)) < 0)
        return -1;
    int rc = cli_write_once(name, mount, device, path, cmd);
    if (rc == CLI_WRITE_FAILED)
        cli_report_write(name, path, cmd, errno);
    return rc < 0 ? -1 : show(mount, device);
}

static const struct cli_command xid_cli = {
    name, "[--mount DIR] DEVICE|all [CODE | --clear]", description, 2, 1, "DEVICE"};

int xid_main(int argc, char **argv)
{
    bool clear = false;
    const struct flag clear_flag = {"clear", NULL, FLAG_BOOL, &clear,
                                    "clear the device's XID (it reads 0)"};
    struct cli_args a = cli_parse(&xid_cli, &clear_flag, 1, argc, argv);
    if (a.status != FLAGS_GO_ON)
        return a.status;
    if (clear && a.npos == 2) {
        fprintf(stderr, "%s: give CODE or --clear, not both\n", name);
        return EXIT_USAGE;
    }
    char cmd[32];
    long code = 0;
    struct error err;
    if (a.npos == 2 &&
        (xid_parse_command(a.pos[1], strlen(a.pos[1]), &code, &err) < 0 || code == 0)) {
        fprintf(stderr, "%s: \"%.16s%s\" is not an XID (a decimal 1..%d; --clear clears it)\n",
                name, a.pos[1], strlen(a.pos[1]) > 16 ? "..." : "", FAKEHW_XID_MAX);
        return EXIT_USAGE;
    }
    snprintf(cmd, sizeof(cmd), "%ld\n", code);
    void *ctx = a.npos == 2 || clear ? cmd : NULL;
    if (strcmp(a.pos[0], FLIP_ALL_DEVICES) != 0)
        return apply(a.mount, a.pos[0], ctx) < 0 ? 1 : 0;
    return cli_for_each_device(name, a.mount, apply, ctx);
}
