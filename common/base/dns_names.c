// SPDX-License-Identifier: Apache-2.0
/* RFC 1123 names: see dns_names.h.  Plain ASCII tests, not <ctype.h>, so the
 * rule does not depend on the locale. */
#include "dns_names.h"

#include <string.h>

static bool is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool dns_label_valid_n(const char *s, size_t n)
{
    if (n == 0 || n > DNS_LABEL_MAX || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
        return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!is_lower_alnum(s[i]) && s[i] != '-')
            return false;
    return true;
}

bool dns_subdomain_valid_n(const char *s, size_t n)
{
    if (n == 0 || n > DNS_SUBDOMAIN_MAX)
        return false;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '.') {
            if (!dns_label_valid_n(s + start, i - start))
                return false;
            start = i + 1;
        }
    }
    return true;
}

bool dns_label_valid(const char *s)
{
    return s != NULL && dns_label_valid_n(s, strlen(s));
}

bool dns_subdomain_valid(const char *s)
{
    return s != NULL && dns_subdomain_valid_n(s, strlen(s));
}
