// SPDX-License-Identifier: Apache-2.0
/* The version every program of the project reports (--version, the
 * plugin's start line and its build_info metric): one release number, and
 * the git commit the build was made from. */
#ifndef FAKEHW_COMMON_VERSION_H
#define FAKEHW_COMMON_VERSION_H

#include <stdio.h>

#include "flags.h"

/* The release.  The Helm chart's version is the same number (make test
 * checks that the two agree). */
#define FAKEHW_DRA_VERSION "0.1.0"

/* `git describe --always --dirty` of the build's sources ("8bda152",
 * "8bda152-dirty"), or FAKEHW_GIT_COMMIT given to make; "unknown" when the
 * sources had no git history (common/build.mk). */
extern const char fakehw_git_commit[];

/* Prints "<prog> 0.1.0 (git 8bda152)\n" to out. */
void version_print(FILE *out, const char *prog);

/* flags_read with --version answered too: version_print's line for the
 * program's name goes to stdout and FLAGS_VERSION is returned.  After
 * FLAGS_HELP or FLAGS_VERSION the program exits with success. */
int flags_read_versioned(const struct flag *flags, size_t nflags, int argc, char **argv,
                         const struct flags_program *program, int *next, struct error *err);

#endif
