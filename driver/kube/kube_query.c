// SPDX-License-Identifier: Apache-2.0
/* Percent-encoding of query values (field selectors, resource versions). */
#include "kube_internal.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

char *kube_query_escape(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    char *out = xmalloc(n * 3 + 1);
    char *o = out;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        /* RFC 3986 unreserved characters pass; everything else, '=' and ','
         * of a selector included, is encoded. */
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '.' || *p == '_' || *p == '~') {
            *o++ = (char)*p;
        } else {
            *o++ = '%';
            *o++ = hex[*p >> 4];
            *o++ = hex[*p & 15];
        }
    }
    *o = '\0';
    return out;
}
