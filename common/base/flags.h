// SPDX-License-Identifier: Apache-2.0
/* Command-line flags with environment fallbacks, for DaemonSet use.
 *
 * Precedence: built-in default < environment variable < command line.
 * Forms accepted: --name=value, --name value, -v N, -v=N; booleans also as
 * --name alone (true) or --name=false.  Parsing stops at the first argument
 * that is not a flag, or after "--".  Strings point into argv/environ and are
 * not copied. */
#ifndef FAKEHW_COMMON_FLAGS_H
#define FAKEHW_COMMON_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"

enum flag_type {
    FLAG_STRING, /* value is const char ** */
    FLAG_INT,    /* value is long * */
    FLAG_BOOL,   /* value is bool * */
    FLAG_VERSION /* --version: flags_parse returns FLAGS_VERSION; value unused */
};

struct flag {
    const char *name; /* without dashes: "driver-name", or "v" */
    const char *env;  /* environment variable, or NULL */
    enum flag_type type;
    void *value; /* holds the default on entry */
    const char *help;
};

#define FLAGS_HELP    1 /* flags_parse result: --help/-h was given */
#define FLAGS_VERSION 2 /* flags_parse result: the FLAG_VERSION flag was given */

/* The --version flag of a program's table: the program prints
 * version_print's line (version.h) when flags_parse returns FLAGS_VERSION. */
#define FLAG_VERSION_ENTRY                                                                         \
    {                                                                                              \
        "version", NULL, FLAG_VERSION, NULL, "print the version and exit"                          \
    }

/* Parses argv[1..]. On return *next is the index of the first positional
 * argument. Returns 0, FLAGS_HELP, FLAGS_VERSION, or -1 with err naming the
 * flag or variable. */
int flags_parse(const struct flag *flags, size_t nflags, int argc, char **argv, int *next,
                struct error *err);

/* Prints "Usage: <prog> <synopsis>", the description, and one line per flag
 * with its environment variable and default; -h/--help and a FLAG_VERSION
 * flag come last. */
void flags_usage(FILE *out, const char *prog, const char *synopsis, const char *description,
                 const struct flag *flags, size_t nflags);

/* What --help prints about a program: its name, its synopsis (what follows
 * the name on the usage line) and a description. */
struct flags_program {
    const char *name;
    const char *synopsis;
    const char *description;
};

/* flags_parse with --help answered: the usage (flags_usage) goes to stdout
 * and FLAGS_HELP is returned, for the program to exit with success.  Other
 * results are flags_parse's. */
int flags_read(const struct flag *flags, size_t nflags, int argc, char **argv,
               const struct flags_program *program, int *next, struct error *err);

/* flags_read for a program that takes flags only: an argument after them
 * is an error, -1 with err naming it ("unexpected argument \"x\" (see
 * --help)").  Other results are flags_read's. */
int flags_read_all(const struct flag *flags, size_t nflags, int argc, char **argv,
                   const struct flags_program *program, struct error *err);

/* What flags_main returns when the program goes on; any other result is the
 * status to exit with. */
#define FLAGS_GO_ON (-1)

/* The exit status of every program after a bad command line. */
#define FLAGS_EXIT_USAGE 2

/* A reader of a flag table: flags_read, or flags_read_versioned
 * (version.h), which answers --version too. */
typedef int flags_reader(const struct flag *flags, size_t nflags, int argc, char **argv,
                         const struct flags_program *program, int *next, struct error *err);

/* A program's main reading its flags with reader: FLAGS_GO_ON, or the exit
 * status: 0 after --help or --version, FLAGS_EXIT_USAGE after a bad flag,
 * said on stderr as "<name>: <what>".  With next NULL the program takes no
 * positional argument (one is flags_read_all's error); else *next is the
 * index of the first. */
int flags_main(flags_reader *reader, const struct flag *flags, size_t nflags, int argc, char **argv,
               const struct flags_program *program, int *next);

/* Says "<name>: <what>" on stderr about a bad command line: returns
 * FLAGS_EXIT_USAGE, for `return flags_usage_error(...)`. */
int flags_usage_error(const struct flags_program *program, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The number of entries of a flag table (an array, not a pointer). */
#define FLAGS_COUNT(table) (sizeof(table) / sizeof((table)[0]))

#endif
