// SPDX-License-Identifier: Apache-2.0
#include "version.h"

/* Generated into the build's gen directory by common/build.mk; a build
 * without it (another build system) still compiles. */
#if __has_include("fakehw_git.h")
#include "fakehw_git.h"
#endif
#ifndef FAKEHW_GIT_COMMIT
#define FAKEHW_GIT_COMMIT "unknown"
#endif

const char fakehw_git_commit[] = FAKEHW_GIT_COMMIT;

void version_print(FILE *out, const char *prog)
{
    fprintf(out, "%s %s (git %s)\n", prog, FAKEHW_DRA_VERSION, fakehw_git_commit);
}

int flags_read_versioned(const struct flag *flags, size_t nflags, int argc, char **argv,
                         const struct flags_program *program, int *next, struct error *err)
{
    int rc = flags_read(flags, nflags, argc, argv, program, next, err);
    if (rc == FLAGS_VERSION)
        version_print(stdout, program->name);
    return rc;
}
