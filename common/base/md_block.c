// SPDX-License-Identifier: Apache-2.0
/* The block framing of SHA-1 and SHA-256: see md_block.h. */
#include "md_block.h"

#include <string.h>

void md_block_init(struct md_block *md, const uint32_t *iv, size_t words)
{
    memset(md, 0, sizeof(*md));
    memcpy(md->state, iv, words * sizeof(*iv));
}

void md_block_update(struct md_block *md, md_compress_fn *compress, const void *data, size_t len)
{
    const uint8_t *p = data;
    md->total_len += len;
    while (len > 0) {
        size_t take = sizeof(md->block) - md->block_len;
        if (take > len)
            take = len;
        memcpy(md->block + md->block_len, p, take);
        md->block_len += take;
        p += take;
        len -= take;
        if (md->block_len == sizeof(md->block)) {
            compress(md->state, md->block);
            md->block_len = 0;
        }
    }
}

void md_block_final(struct md_block *md, md_compress_fn *compress, uint8_t *digest, size_t words)
{
    uint64_t bits = md->total_len * 8;
    static const uint8_t pad = 0x80;
    static const uint8_t zero[64] = {0};
    md_block_update(md, compress, &pad, 1);
    /* Zeros up to 8 bytes short of a block end, then the length. */
    size_t fill = (md->block_len <= 56 ? 56 : 120) - md->block_len;
    md_block_update(md, compress, zero, fill);
    uint8_t len_be[8];
    for (int i = 0; i < 8; i++)
        len_be[i] = (uint8_t)(bits >> (56 - 8 * i));
    md_block_update(md, compress, len_be, sizeof(len_be));
    for (size_t i = 0; i < words; i++) {
        digest[4 * i] = (uint8_t)(md->state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(md->state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(md->state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)md->state[i];
    }
}

uint32_t md_load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
