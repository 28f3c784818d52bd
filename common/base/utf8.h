// SPDX-License-Identifier: Apache-2.0
/* UTF-8 hygiene for text that leaves the program: proto3 string fields (the
 * kubelet decodes our answers with Go's protobuf library, which rejects a
 * whole message when any string field holds invalid UTF-8) and JSON strings
 * (jansson refuses them).  Free text (error messages, health reasons) is
 * cleaned with one rule everywhere, every invalid byte becomes '?', and cut
 * only between characters.  fakehw refuses such reasons when they are
 * written; the plugin cleans what a hand-made tree holds. */
#ifndef FAKEHW_COMMON_UTF8_H
#define FAKEHW_COMMON_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when s[0..len) is well-formed UTF-8 (no overlongs, no surrogates). */
bool utf8_valid(const char *s, size_t len);

/* Length of the longest prefix of s (a valid UTF-8 string) that is at most
 * max bytes and does not split a character. */
size_t utf8_prefix_len(const char *s, size_t max);

/* Copies s into a new string, replacing every invalid byte with '?' (out of
 * memory is fatal). */
char *utf8_sanitize(const char *s);

/* Copies src into dst (size bytes, size >= 1) with the same replacement,
 * cut between characters when it does not fit.  Returns dst. */
char *utf8_copy_clean(char *dst, size_t size, const char *src);

/* Offset of the first invalid byte of s[0..len), or len when all is valid. */
size_t utf8_invalid_at(const char *s, size_t len);

#endif
