// SPDX-License-Identifier: Apache-2.0
/* SHA-1 (FIPS 180-4), small and self-contained, for name-based UUIDs of
 * version 5 (RFC 9562), which NVIDIA's DRA driver gives its VFIO devices.
 * Not for anything that needs a secure hash. */
#ifndef FAKEHW_COMMON_SHA1_H
#define FAKEHW_COMMON_SHA1_H

#include <stddef.h>
#include <stdint.h>

#include "md_block.h"

#define SHA1_DIGEST_LEN 20

struct sha1 {
    struct md_block md;
};

void sha1_init(struct sha1 *ctx);
void sha1_update(struct sha1 *ctx, const void *data, size_t len);
void sha1_final(struct sha1 *ctx, uint8_t digest[SHA1_DIGEST_LEN]);

#endif
