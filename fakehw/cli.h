// SPDX-License-Identifier: Apache-2.0
/* The fakehw commands; main.c picks one from argv[1].  Each takes argv with
 * the command name in argv[0] and returns the process exit code. */
#ifndef FAKEHW_CLI_H
#define FAKEHW_CLI_H

#include <stdbool.h>
#include <stddef.h>

/* Exit code for bad usage (unknown flag, missing argument). */
#define EXIT_USAGE 2

struct daemon_options {
    const char *config;  /* YAML config path */
    const char *mount;   /* where to mount the tree */
    const char *dev_dir; /* where to make device nodes; NULL or "" = none */
    const char *node;    /* node name the config is resolved for */
    bool foreground;     /* stay attached (DaemonSets, tests) */
    bool clear_stale;    /* lazily unmount a stale mount first */
    bool allow_empty;    /* serve an empty tree when no config section matches the node */
};

/* Runs the daemon until SIGTERM/SIGINT or an external unmount. */
int daemon_run(const struct daemon_options *o);

/* fakehw flip --mount DIR DEVICE STATE [--reason TEXT] */
int flip_main(int argc, char **argv);

/* fakehw attach --mount DIR DEVICE|all [attach|detach|fail FAILURE] */
int attach_main(int argc, char **argv);

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

#endif
