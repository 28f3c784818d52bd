// SPDX-License-Identifier: Apache-2.0
/* Kubernetes resource quantities ("80Gi", "81920Mi", "40G", "1.5Gi", "1e9",
 * plain bytes) for byte counts: the memory of a GPU in the fakehw config and
 * the capacities the driver publishes in ResourceSlices.
 *
 * Grammar (as k8s.io/apimachinery/pkg/api/resource):
 *   [+]<digits>[.<digits>] followed by one of
 *   binary suffix  Ki Mi Gi Ti Pi Ei        (powers of 1024)
 *   decimal suffix m "" k M G T P E          (powers of 1000; m = 1/1000)
 *   exponent       e<int> or E<int>          (powers of 10)
 * A byte count must come out as a whole number between 0 and 2^63-1;
 * negative values, fractions of a byte and unknown suffixes are errors. */
#ifndef FAKEHW_COMMON_QUANTITY_H
#define FAKEHW_COMMON_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Room for any quantity_format_bytes result, NUL included. */
#define QUANTITY_STR_MAX 32

/* Parses text as a byte count.  On failure err says what is wrong, e.g.
 * "\"80Gx\" is not a valid quantity: unknown suffix \"Gx\" (...)". */
int quantity_parse_bytes(const char *text, uint64_t *bytes, struct error *err);

/* Formats bytes as the canonical Kubernetes quantity, the string
 * resource.NewQuantity(bytes, resource.BinarySI).String() gives: the largest
 * binary suffix that keeps the number whole ("80Gi", "81559Mi", "1536"),
 * and below 1024 the decimal form ("512", "1k").  Values above 2^63-1 are
 * clamped to it (a Quantity is an int64).  Returns the length written, or -1
 * when size is too small (buf then holds ""). */
int quantity_format_bytes(uint64_t bytes, char *buf, size_t size);

#endif
