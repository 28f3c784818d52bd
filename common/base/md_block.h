// SPDX-License-Identifier: Apache-2.0
/* The 64-byte block framing SHA-1 and SHA-256 share (FIPS 180-4, 5.1.1,
 * 5.2.1, 6.1.2): input buffered into blocks, the padding with the message's
 * bit length, big-endian words in and out.  Each hash brings its initial
 * value and its compression function. */
#ifndef FAKEHW_COMMON_MD_BLOCK_H
#define FAKEHW_COMMON_MD_BLOCK_H

#include <stddef.h>
#include <stdint.h>

struct md_block {
    uint32_t state[8];  /* the hash's words; SHA-1 uses the first five */
    uint64_t total_len; /* bytes fed so far */
    uint8_t block[64];
    size_t block_len;
};

typedef void md_compress_fn(uint32_t state[8], const uint8_t block[64]);

void md_block_init(struct md_block *md, const uint32_t *iv, size_t words);
void md_block_update(struct md_block *md, md_compress_fn *compress, const void *data, size_t len);
/* Pads, compresses the last block(s) and writes the first `words` state
 * words big-endian into digest (4 * words bytes). */
void md_block_final(struct md_block *md, md_compress_fn *compress, uint8_t *digest, size_t words);
/* The big-endian 32-bit word at p: how both hashes read their blocks. */
uint32_t md_load_be32(const uint8_t *p);

#endif
