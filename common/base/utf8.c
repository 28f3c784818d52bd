// SPDX-License-Identifier: Apache-2.0
#include "utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* Length of the well-formed character at s (n bytes left), 0 if invalid. */
static size_t char_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0; /* overlong or out of range */
    if (cp >= 0xd800 && cp <= 0xdfff)
        return 0; /* surrogates are not characters */
    return len;
}

bool utf8_valid(const char *s, size_t len)
{
    return utf8_invalid_at(s, len) == len;
}

size_t utf8_prefix_len(const char *s, size_t max)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = strlen(s);
    if (len <= max)
        return len;
    size_t i = max;
    /* Back up over continuation bytes to the start of the cut character. */
    while (i > 0 && (p[i] & 0xc0) == 0x80)
        i--;
    return i;
}

/* Cleaning keeps the length (one '?' a bad byte), so the whole of s fits. */
char *utf8_sanitize(const char *s)
{
    size_t size = strlen(s) + 1;
    return utf8_copy_clean(xmalloc(size), size, s);
}

char *utf8_copy_clean(char *dst, size_t size, const char *src)
{
    const unsigned char *p = (const unsigned char *)src;
    size_t len = strlen(src), i = 0, o = 0;
    while (i < len) {
        size_t l = char_len(p + i, len - i);
        size_t w = l ? l : 1;
        if (o + w >= size)
            break;
        if (l == 0)
            dst[o] = '?';
        else
            memcpy(dst + o, src + i, l);
        o += w;
        i += w;
    }
    dst[o] = '\0';
    return dst;
}

size_t utf8_invalid_at(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        size_t l = char_len(p + i, len - i);
        if (l == 0)
            return i;
        i += l;
    }
    return len;
}
