// SPDX-License-Identifier: Apache-2.0
/* Unit tests for SHA-1 and SHA-256 and the block framing they share
 * (md_block.h): FIPS 180's examples and runs of 'a' around the block
 * bounds, each fed whole and in pieces of many sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha1.h"
#include "sha256.h"

/* The hex digests of data[0..len), fed chunk bytes at a time. */
static void digests_hex(const char *data, size_t len, size_t chunk, char *sha1_hex,
                        char *sha256_hex)
{
    struct sha1 one;
    struct sha256 two;
    uint8_t d1[SHA1_DIGEST_LEN], d2[SHA256_DIGEST_LEN];
    sha1_init(&one);
    sha256_init(&two);
    for (size_t at = 0; at < len; at += chunk) {
        size_t take = len - at < chunk ? len - at : chunk;
        sha1_update(&one, data + at, take);
        sha256_update(&two, data + at, take);
    }
    sha1_final(&one, d1);
    sha256_final(&two, d2);
    for (size_t i = 0; i < sizeof(d1); i++)
        sprintf(sha1_hex + 2 * i, "%02x", d1[i]);
    for (size_t i = 0; i < sizeof(d2); i++)
        sprintf(sha256_hex + 2 * i, "%02x", d2[i]);
}

/* FIPS 180's examples ("", "abc", the 448-bit message, a million 'a'), and
 * runs of 'a' (text NULL) where the padding and the length spill into one
 * more block (md_block_final); the others from Python's hashlib. */
static const struct vector {
    const char *text;
    size_t a_count;
    const char *sha1, *sha256;
} vectors[] = {
    {"", 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709",
     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"abc", 0, "a9993e364706816aba3e25717850c26c9cd0d89d",
     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 0,
     "84983e441c3bd26ebaae4aa1f95129e5e54670f1",
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    {NULL, 55, "c1c8bbdc22796e28c0e15163d20899b65621d65a",
     "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
    {NULL, 56, "c2db330f6083854c99d4b5bfb6e8f29f201be699",
     "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
    {NULL, 63, "03f09f5b158a7a8cdad920bddc29b81c18a551f5",
     "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
    {NULL, 64, "0098ba824b5c16427bd7a1122a5a442a25ec644d",
     "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
    {NULL, 1000, "291e9a6c66994949b57ba5e650361e98fc36b1ba",
     "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"},
    {NULL, 1000000, "34aa973cd4c4daa4f61eeb2bdbad27316534016f",
     "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
};

/* Piece sizes: single bytes, odd ones across block bounds, whole blocks,
 * several blocks at once; 0 stands for the whole input in one piece. */
static const size_t chunks[] = {0, 1, 3, 5, 7, 8, 15, 22, 29, 36, 43, 50, 57, 63, 64, 4099};

static void test_vectors(void **state)
{
    (void)state;
    char *many_a = malloc(1000000);
    assert_non_null(many_a);
    memset(many_a, 'a', 1000000);
    for (size_t v = 0; v < sizeof(vectors) / sizeof(vectors[0]); v++) {
        const struct vector *t = &vectors[v];
        const char *data = t->text ? t->text : many_a;
        size_t len = t->text ? strlen(t->text) : t->a_count;
        for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
            char sha1_hex[2 * SHA1_DIGEST_LEN + 1], sha256_hex[2 * SHA256_DIGEST_LEN + 1];
            size_t chunk = chunks[c] ? chunks[c] : len + 1;
            digests_hex(data, len, chunk, sha1_hex, sha256_hex);
            if (strcmp(sha1_hex, t->sha1) != 0 || strcmp(sha256_hex, t->sha256) != 0) {
                free(many_a);
                fail_msg("%zu bytes in pieces of %zu: SHA-1 %s, SHA-256 %s", len, chunk, sha1_hex,
                         sha256_hex);
            }
        }
    }
    free(many_a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
    };
    return cmocka_run_group_tests_name("sha", tests, NULL, NULL);
}
