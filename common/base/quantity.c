// SPDX-License-Identifier: Apache-2.0
/* Kubernetes quantities as byte counts: see quantity.h. */
#include "quantity.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef unsigned __int128 u128;

/* More significant digits than this could overflow the 128-bit arithmetic
 * below (10^20 * 1024^6 < 2^128); no byte count needs them. */
#define MAX_SIGNIFICANT_DIGITS 20
/* Decimal exponents beyond this cannot give a whole int64 from <= 20 digits. */
#define MAX_EXPONENT 60

static const char *const binary_suffixes[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

struct decimal_suffix {
    const char *text;
    int exp10;
};

static const struct decimal_suffix decimal_suffixes[] = {
    {"", 0}, {"m", -3}, {"k", 3}, {"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}, {"E", 18},
};

static int invalid(struct error *err, const char *text, const char *why)
{
    return error_set(err, "\"%.64s\" is not a valid quantity: %s", text, why);
}

/* Parses "e<int>" / "E<int>" (the caller checked the letter).  Returns 0 and
 * the exponent, or -1 when what follows the letter is not an integer. */
static int parse_exponent(const char *s, int *exp10)
{
    const char *p = s + 1;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (*p < '0' || *p > '9')
        return -1;
    int v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > MAX_EXPONENT * 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
    if (*p != '\0')
        return -1;
    *exp10 = neg ? -v : v;
    return 0;
}

int quantity_parse_bytes(const char *text, uint64_t *bytes, struct error *err)
{
    const char *p = text;
    if (*p == '\0')
        return invalid(err, text, "it is empty");
    if (*p == '-')
        return invalid(err, text, "a byte count cannot be negative");
    if (*p == '+')
        p++;

    u128 mantissa = 0;
    int significant = 0, frac_digits = 0, digits = 0;
    bool in_fraction = false;
    for (;; p++) {
        if (*p == '.' && !in_fraction) {
            in_fraction = true;
            continue;
        }
        if (*p < '0' || *p > '9')
            break;
        digits++;
        if (in_fraction)
            frac_digits++;
        if (mantissa != 0 || *p != '0')
            significant++;
        if (significant > MAX_SIGNIFICANT_DIGITS)
            return invalid(err, text, "too many digits");
        mantissa = mantissa * 10 + (u128)(*p - '0');
    }
    if (digits == 0)
        return invalid(err, text, "it does not start with a number");

    int binary_power = 0; /* value *= 1024^binary_power */
    int exp10 = 0;        /* value *= 10^exp10 */
    bool known = false;
    for (size_t i = 0; i < sizeof(binary_suffixes) / sizeof(binary_suffixes[0]); i++) {
        if (!strcmp(p, binary_suffixes[i])) {
            binary_power = (int)i + 1;
            known = true;
        }
    }
    for (size_t i = 0; !known && i < sizeof(decimal_suffixes) / sizeof(decimal_suffixes[0]); i++) {
        if (!strcmp(p, decimal_suffixes[i].text)) {
            exp10 = decimal_suffixes[i].exp10;
            known = true;
        }
    }
    if (!known && (*p == 'e' || *p == 'E') && parse_exponent(p, &exp10) == 0)
        known = true;
    if (!known) {
        char why[160];
        snprintf(why, sizeof(why),
                 "unknown suffix \"%.16s\" (use Ki, Mi, Gi, Ti, Pi, Ei, k, M, G, T, P, E or an "
                 "exponent like e9)",
                 p);
        return invalid(err, text, why);
    }

    const u128 limit = (u128)INT64_MAX;
    u128 v = mantissa;
    for (int i = 0; i < binary_power; i++)
        v *= 1024;
    int net = exp10 - frac_digits;
    for (; net > 0 && v != 0; net--) {
        v *= 10;
        if (v > limit)
            return invalid(err, text, "it is larger than 2^63-1 bytes");
    }
    for (; net < 0; net++) {
        if (v % 10 != 0)
            return invalid(err, text, "it is not a whole number of bytes");
        v /= 10;
    }
    if (v > limit)
        return invalid(err, text, "it is larger than 2^63-1 bytes");
    *bytes = (uint64_t)v;
    return 0;
}

int quantity_format_bytes(uint64_t bytes, char *buf, size_t size)
{
    static const char *const suffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    if (bytes > (uint64_t)INT64_MAX)
        bytes = (uint64_t)INT64_MAX;
    int n;
    if (bytes < 1024) {
        /* apimachinery prints BinarySI values below 1024 as DecimalSI. */
        n = bytes == 1000 ? snprintf(buf, size, "1k") : snprintf(buf, size, "%" PRIu64, bytes);
    } else {
        size_t power = 0;
        while (power + 1 < sizeof(suffixes) / sizeof(suffixes[0]) && bytes % 1024 == 0) {
            bytes /= 1024;
            power++;
        }
        n = snprintf(buf, size, "%" PRIu64 "%s", bytes, suffixes[power]);
    }
    if (n < 0 || (size_t)n >= size) {
        if (size > 0)
            buf[0] = '\0';
        return -1;
    }
    return n;
}
