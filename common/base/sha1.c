// SPDX-License-Identifier: Apache-2.0
/* SHA-1: see sha1.h. */
#include "sha1.h"

#include <string.h>

static uint32_t rol(uint32_t x, int n)
{
    return (x << n) | (x >> (32 - n));
}

static void compress(uint32_t state[8], const uint8_t block[64])
{
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = md_load_be32(block + 4 * i);
    for (int i = 16; i < 80; i++)
        w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) {
            f = (b & c) | (~b & d);
            k = 0x5a827999;
        } else if (i < 40) {
            f = b ^ c ^ d;
            k = 0x6ed9eba1;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8f1bbcdc;
        } else {
            f = b ^ c ^ d;
            k = 0xca62c1d6;
        }
        uint32_t t = rol(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = rol(b, 30);
        b = a;
        a = t;
    }
    const uint32_t add[5] = {a, b, c, d, e};
    for (int i = 0; i < 5; i++)
        state[i] += add[i];
}

void sha1_init(struct sha1 *ctx)
{
    static const uint32_t iv[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
    md_block_init(&ctx->md, iv, 5);
}

void sha1_update(struct sha1 *ctx, const void *data, size_t len)
{
    md_block_update(&ctx->md, compress, data, len);
}

void sha1_final(struct sha1 *ctx, uint8_t digest[SHA1_DIGEST_LEN])
{
    md_block_final(&ctx->md, compress, digest, SHA1_DIGEST_LEN / 4);
}
