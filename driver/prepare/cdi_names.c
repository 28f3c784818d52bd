// SPDX-License-Identifier: Apache-2.0
#include "cdi_names.h"

#include <stdio.h>
#include <string.h>

static bool is_letter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_alnum(char c)
{
    return is_letter(c) || (c >= '0' && c <= '9');
}

/* first: rule for the first character; extra: allowed besides letters and
 * digits; the last character must be a letter or digit. */
static bool name_ok(const char *s, size_t n, bool (*first)(char), const char *extra)
{
    if (n == 0 || !first(s[0]) || !is_alnum(s[n - 1]))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!is_alnum(s[i]) && strchr(extra, s[i]) == NULL)
            return false;
    return true;
}

bool cdi_is_vendor(const char *s)
{
    return s != NULL && name_ok(s, strlen(s), is_letter, "_.-");
}

static bool class_ok(const char *s, size_t n)
{
    return n <= CDI_CLASS_MAX && name_ok(s, n, is_letter, "_-");
}

bool cdi_is_class(const char *s)
{
    return s != NULL && class_ok(s, strlen(s));
}

bool cdi_is_device_name(const char *s)
{
    return s != NULL && name_ok(s, strlen(s), is_alnum, "_.:-");
}

int cdi_check_kind(const char *kind, struct error *err)
{
    const char *slash = kind ? strchr(kind, '/') : NULL;
    if (slash == NULL)
        return error_set(err, "CDI kind \"%s\": want vendor/class", kind ? kind : "");
    size_t vlen = (size_t)(slash - kind);
    if (!name_ok(kind, vlen, is_letter, "_.-"))
        return error_set(err,
                         "CDI kind \"%s\": vendor \"%.*s\" must start with a letter, end with a "
                         "letter or digit and hold only letters, digits, '_', '.' and '-'",
                         kind, (int)vlen, kind);
    if (!class_ok(slash + 1, strlen(slash + 1)))
        return error_set(err,
                         "CDI kind \"%s\": class \"%s\" must start with a letter, end with a "
                         "letter or digit, hold only letters, digits, '_' and '-' and be at most "
                         "%d characters",
                         kind, slash + 1, CDI_CLASS_MAX);
    return 0;
}

int cdi_check_device_name(const char *name, struct error *err)
{
    if (cdi_is_device_name(name))
        return 0;
    return error_set(err,
                     "CDI device name \"%s\": must start and end with a letter or digit and "
                     "hold only letters, digits, '_', '.', ':' and '-'",
                     name ? name : "");
}
