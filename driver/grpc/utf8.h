/* UTF-8 hygiene for proto3 string fields.  The kubelet decodes our answers
 * with Go's protobuf library, which rejects a whole message when any string
 * field holds invalid UTF-8; free text (error messages, health messages) is
 * therefore cleaned before it is encoded, and cut only between characters. */
#ifndef FAKEHW_DRIVER_UTF8_H
#define FAKEHW_DRIVER_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when s[0..len) is well-formed UTF-8 (no overlongs, no surrogates). */
bool utf8_valid(const char *s, size_t len);

/* Length of the longest prefix of s (a valid UTF-8 string) that is at most
 * max bytes and does not split a character. */
size_t utf8_prefix_len(const char *s, size_t max);

/* Copies s into a new string, replacing every invalid byte with '?'.
 * Returns NULL only when out of memory. */
char *utf8_sanitize(const char *s);

#endif
