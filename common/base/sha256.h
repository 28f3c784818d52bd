// SPDX-License-Identifier: Apache-2.0
/* SHA-256 (FIPS 180-4), small and self-contained: fakehw derives its
 * deterministic GPU UUIDs from it, the plugin shortens over-long directory
 * names with it; neither needs a crypto library for that. */
#ifndef FAKEHW_COMMON_SHA256_H
#define FAKEHW_COMMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "md_block.h"

#define SHA256_DIGEST_LEN 32

struct sha256 {
    struct md_block md;
};

void sha256_init(struct sha256 *ctx);
void sha256_update(struct sha256 *ctx, const void *data, size_t len);
void sha256_final(struct sha256 *ctx, uint8_t digest[SHA256_DIGEST_LEN]);

#endif
