// SPDX-License-Identifier: Apache-2.0
/* The unreachable socket, explained: see podresources_reach.h. */
#include "podresources_reach.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* What to check when no kubelet answers, and how to name another socket. */
#define WHAT_TO_CHECK                                                                              \
    "Is the kubelet running on this node, and is its PodResources API enabled? "                   \
    "--socket (or PODRESOURCES_SOCKET) names another socket."

#define NO_PERMISSION                                                                              \
    "the kubelet's socket and its directory belong to root: run as root on the node, or in a "     \
    "privileged pod that mounts /var/lib/kubelet/pod-resources."

/* connect(2)'s errno on socket_path, 0 when it connects. */
static int try_connect(const char *socket_path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof(a.sun_path))
        return ENAMETOOLONG;
    memcpy(a.sun_path, socket_path, strlen(socket_path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    int e = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 ? 0 : errno;
    close(fd);
    return e;
}

bool podres_explain_unreachable(const char *socket_path, char *buf, size_t size)
{
    const char *api = "cannot reach the kubelet's PodResources API at";
    struct stat st;
    if (stat(socket_path, &st) < 0) {
        int e = errno;
        if (e == EACCES)
            snprintf(buf, size, "%s %s: permission denied: %s", api, socket_path, NO_PERMISSION);
        else if (e == ENOENT || e == ENOTDIR)
            snprintf(buf, size, "%s %s: there is no such socket. %s", api, socket_path,
                     WHAT_TO_CHECK);
        else
            snprintf(buf, size, "%s %s: %s. %s", api, socket_path, strerror(e), WHAT_TO_CHECK);
        return true;
    }
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(buf, size, "%s %s: that is not a socket. %s", api, socket_path, WHAT_TO_CHECK);
        return true;
    }
    int e = try_connect(socket_path);
    if (e == 0)
        return false;
    if (e == EACCES || e == EPERM)
        snprintf(buf, size, "%s %s: permission denied: %s", api, socket_path, NO_PERMISSION);
    else if (e == ECONNREFUSED)
        snprintf(buf, size,
                 "%s %s: nothing listens there (a socket left by a kubelet that is gone?). %s", api,
                 socket_path, WHAT_TO_CHECK);
    else
        snprintf(buf, size, "%s %s: %s. %s", api, socket_path, strerror(e), WHAT_TO_CHECK);
    return true;
}
