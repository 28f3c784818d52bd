// SPDX-License-Identifier: Apache-2.0
/* REST paths: see kube_paths.h. */
#include "kube_paths.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static int format(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int format(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= size) {
        if (size > 0)
            buf[0] = '\0';
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

int kube_path_resourceclaim(char *buf, size_t size, const char *ns, const char *name)
{
    return format(buf, size, "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s", ns, name);
}

int kube_path_resourceslice(char *buf, size_t size, const char *name)
{
    return format(buf, size, "%s/%s", KUBE_PATH_RESOURCESLICES, name);
}

int kube_path_node(char *buf, size_t size, const char *name)
{
    return format(buf, size, "/api/v1/nodes/%s", name);
}
