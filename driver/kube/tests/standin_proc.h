// SPDX-License-Identifier: Apache-2.0
/* Starting and stopping apiserver-standin from a test program (it lives next
 * to the test binary in $(BIN)). */
#ifndef FAKEHW_KUBE_TESTS_STANDIN_PROC_H
#define FAKEHW_KUBE_TESTS_STANDIN_PROC_H

#include <sys/types.h>

struct standin {
    pid_t pid;
    int port;
    char dir[64];  /* temp dir holding the port file */
    char url[128]; /* http(s)://127.0.0.1:<port> */
};

/* Starts the stand-in with the extra arguments (NULL-terminated, may be NULL)
 * and waits up to 10 s for its port.  0 or -1 (message on stderr). */
int standin_start(struct standin *s, const char *const *extra);
/* SIGTERM and wait; returns its exit status (0 on a clean shutdown), -1 when
 * it had to be killed. */
int standin_stop(struct standin *s);

#endif
