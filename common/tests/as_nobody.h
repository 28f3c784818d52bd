// SPDX-License-Identifier: Apache-2.0
/* For the unit tests that run as root: what a check says when it runs as
 * nobody (uid and gid 65534), in a child process.  Include after
 * <cmocka.h>. */
#ifndef FAKEHW_TESTS_AS_NOBODY_H
#define FAKEHW_TESTS_AS_NOBODY_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/tests/fork_piped.h"

/* Writes its message into buf; false when it has none. */
typedef bool (*as_nobody_fn)(void *ctx, char *buf, size_t size);

/* Runs fn in a child that became nobody and puts the message it wrote into
 * out (NUL-terminated).  False when the child could not become nobody, fn
 * had no message or the child did not exit cleanly. */
static inline bool run_as_nobody(as_nobody_fn fn, void *ctx, char *out, size_t size)
{
    int pipefd[2];
    pid_t pid = fork_piped(pipefd, 1);
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(2);
        char buf[1024];
        bool told = fn(ctx, buf, sizeof(buf));
        _exit(told && write(pipefd[1], buf, strlen(buf)) > 0 ? 0 : 3);
    }
    memset(out, 0, size);
    ssize_t n = read(pipefd[0], out, size - 1);
    close(pipefd[0]);
    int status;
    waitpid(pid, &status, 0);
    return n > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

#endif
