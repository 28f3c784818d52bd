// SPDX-License-Identifier: Apache-2.0
/* kubelet-standin: entry point and subcommand dispatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standin.h"

static const char usage[] =
    "Usage: kubelet-standin COMMAND [flags] [args]\n"
    "\n"
    "Does what the kubelet does with a DRA kubelet plugin, over the same gRPC\n"
    "APIs, for tests without a cluster.  Flags come before arguments; every\n"
    "command has --help.\n"
    "\n"
    "Commands:\n"
    "  register      find the plugin's registration socket, GetInfo, pick the API\n"
    "                version, NotifyRegistrationStatus; prints key=value lines\n"
    "  prepare       NodePrepareResources for NS/NAME/UID claims; one line per device\n"
    "  unprepare     NodeUnprepareResources for NS/NAME/UID claims; one line per claim\n"
    "  watch-health  open NodeWatchResources and print every message\n"
    "  call          call any method with raw hex bytes; prints the status\n"
    "\n"
    "Exit codes: 0 ok, 1 a claim failed / registration refused / health stream\n"
    "ended badly, 2 usage, 3 could not connect or the RPC failed.\n";

int parse_seconds(const char *text, double *out)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || v < 0)
        return -1;
    *out = v;
    return 0;
}

void print_oneline(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, out);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {
        {"register", cmd_register},         {"prepare", cmd_prepare}, {"unprepare", cmd_unprepare},
        {"watch-health", cmd_watch_health}, {"call", cmd_call},
    };
    if (argc < 2) {
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        fputs(usage, stdout);
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (!strcmp(argv[1], cmds[i].name))
            return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "kubelet-standin: unknown command \"%s\" (see --help)\n", argv[1]);
    return EXIT_USAGE;
}
