// SPDX-License-Identifier: Apache-2.0
/* The fakehw commands; main.c picks one from argv[1].  Each takes argv with
 * the command name in argv[0] and returns the process exit code. */
#ifndef FAKEHW_CLI_H
#define FAKEHW_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "flags.h"

/* Exit code for bad usage (unknown flag, missing argument). */
#define EXIT_USAGE FLAGS_EXIT_USAGE

struct daemon_options {
    const char *config;    /* YAML config path */
    const char *mount;     /* where to mount the tree */
    const char *dev_dir;   /* where to make device nodes; NULL or "" = none */
    const char *node;      /* node name the config is resolved for */
    bool foreground;       /* stay attached (DaemonSets, tests) */
    bool clear_stale;      /* lazily unmount a stale mount first */
    bool allow_empty;      /* serve an empty tree when no config section matches the node */
    long takeover_timeout; /* seconds to wait for another fakehw to leave the mount; 0 = refuse */
};

/* Runs the daemon until SIGTERM/SIGINT or an external unmount. */
int daemon_run(const struct daemon_options *o);

/* fakehw flip --mount DIR DEVICE STATE [--reason TEXT] */
int flip_main(int argc, char **argv);

/* fakehw attach --mount DIR DEVICE|all [attach|detach|fail FAILURE] */
int attach_main(int argc, char **argv);

/* fakehw xid --mount DIR DEVICE|all [CODE | --clear] */
int xid_main(int argc, char **argv);

/* fakehw check --config FILE [--node NAME]: validates and prints the
 * inventory the node would get. */
int check_main(int argc, char **argv);

/* fakehw profiles: prints the built-in catalogue. */
int profiles_main(int argc, char **argv);

/* The node name to use when none was given: the hostname. */
int default_node_name(char *buf, unsigned long size);

/* The first line of a tree file, without its newline; -1 with errno. */
int cli_read_line(const char *path, char *buf, size_t size);

/* Why a path under the tree failed, in words. */
const char *cli_explain(int e);

/* Prints "CMD: what" for a failed open of path, a file of device under the
 * tree at mount: no such device, not a tree, or the errno. */
void cli_report_missing(const char *cmd, const char *mount, const char *device, const char *path,
                        int e);

/* The most positionals a tree command takes. */
#define CLI_MAX_POS 3

/* A tree command's command line: what --help says, and its positionals. */
struct cli_command {
    const char *name;        /* "fakehw flip", the prefix of every message */
    const char *usage;       /* what --help shows after the name */
    const char *description; /* the --help text */
    int maxpos;              /* at most CLI_MAX_POS */
    int minpos;              /* fewer positionals: "<name>: need <need> (see --help)" */
    const char *need;        /* what the first minpos positionals are: "DEVICE and STATE" */
};

/* A tree command's command line as parsed. */
struct cli_args {
    int status;             /* FLAGS_GO_ON, else the exit code (0 after --help) */
    const char *mount;      /* --mount DIR (FAKEHW_MOUNT), where the tree is */
    char *pos[CLI_MAX_POS]; /* the positionals, DEVICE|all first */
    int npos;
};

/* Parses argv (argv[0] is the command name): --mount and the command's own
 * flags (nflags of them, after --mount in --help) may come before, between
 * or after the positionals, of which there are c->minpos to c->maxpos, the
 * first, DEVICE|all, checked as a device.  A status of EXIT_USAGE comes
 * after a message. */
struct cli_args cli_parse(const struct cli_command *c, const struct flag *flags, size_t nflags,
                          int argc, char **argv);

/* Checks a device argument before any path is built from it: "all" when
 * all_ok, else a device name as fakehw makes them (a DNS label), so that
 * "../x" cannot reach files outside the tree.  0, or EXIT_USAGE after a
 * message for cmd. */
int cli_check_device(const char *cmd, const char *device, bool all_ok);

/* <mount>/devices/<device>/<attr> into buf; -1 when it does not fit, with a
 * message for cmd (none when cmd is NULL). */
int cli_device_path(char *buf, size_t size, const char *cmd, const char *mount, const char *device,
                    const char *attr);

/* Writes text to path, the file of device under the tree at mount, with one
 * write(2), as any writer of the tree would.  0 when all of it was written;
 * CLI_REPORTED when path cannot be opened (reported as cli_report_missing
 * for cmd); CLI_WRITE_FAILED with errno (0 after a short write) for the
 * caller to explain. */
#define CLI_REPORTED     (-1)
#define CLI_WRITE_FAILED (-2)
int cli_write_once(const char *cmd, const char *mount, const char *device, const char *path,
                   const char *text);

/* Explains for cmd a write of text to path that failed with errno e (0: a
 * short write), text shown up to its newline. */
void cli_report_write(const char *cmd, const char *path, const char *text, int e);

/* Calls fn for every device of the tree at mount; 1 when the tree cannot be
 * read (reported for cmd) or fn failed (-1) for a device, else 0. */
int cli_for_each_device(const char *cmd, const char *mount,
                        int (*fn)(const char *mount, const char *device, void *ctx), void *ctx);

#endif
