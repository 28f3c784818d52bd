// SPDX-License-Identifier: Apache-2.0
/* Unit tests for SHA-1 and SHA-256 and the block framing they share
 * (md_block.h): FIPS 180's examples, fed whole and in pieces across block
 * bounds. */
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

enum hash { SHA1, SHA256 };

/* The hex digest of data[0..len), fed chunk bytes at a time. */
static void digest_hex(enum hash hash, const void *data, size_t len, size_t chunk, char *out)
{
    struct sha1 one;
    struct sha256 two;
    uint8_t d[SHA256_DIGEST_LEN];
    size_t digest_len = hash == SHA1 ? SHA1_DIGEST_LEN : SHA256_DIGEST_LEN;
    if (hash == SHA1)
        sha1_init(&one);
    else
        sha256_init(&two);
    for (size_t at = 0; at < len; at += chunk) {
        const char *piece = (const char *)data + at;
        size_t take = len - at < chunk ? len - at : chunk;
        if (hash == SHA1)
            sha1_update(&one, piece, take);
        else
            sha256_update(&two, piece, take);
    }
    if (hash == SHA1)
        sha1_final(&one, d);
    else
        sha256_final(&two, d);
    for (size_t i = 0; i < digest_len; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static void test_sha1(void **state)
{
    (void)state;
    char hex[2 * SHA1_DIGEST_LEN + 1];
    digest_hex(SHA1, "", 0, 1, hex);
    assert_string_equal(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    digest_hex(SHA1, "abc", 3, 3, hex);
    assert_string_equal(hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    digest_hex(SHA1, two, strlen(two), 7, hex);
    assert_string_equal(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    static char a[1000];
    memset(a, 'a', sizeof(a));
    digest_hex(SHA1, a, sizeof(a), 1000, hex);
    assert_string_equal(hex, "291e9a6c66994949b57ba5e650361e98fc36b1ba");
    digest_hex(SHA1, a, sizeof(a), 63, hex);
    assert_string_equal(hex, "291e9a6c66994949b57ba5e650361e98fc36b1ba");
}

static void test_sha256(void **state)
{
    (void)state;
    char hex[2 * SHA256_DIGEST_LEN + 1];
    digest_hex(SHA256, "", 0, 1, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    digest_hex(SHA256, "abc", 3, 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    for (size_t chunk = 1; chunk <= 64; chunk += 7) {
        digest_hex(SHA256, two, strlen(two), chunk, hex);
        assert_string_equal(hex,
                            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    }
    char *million = malloc(1000000);
    assert_non_null(million);
    memset(million, 'a', 1000000);
    digest_hex(SHA256, million, 1000000, 4099, hex);
    free(million);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Around the last 8 bytes of a block, where the padding and the length
 * spill into one more block (md_block_final); values from Python's hashlib. */
static void test_padding_bounds(void **state)
{
    (void)state;
    static const struct {
        size_t len;
        const char *sha1, *sha256;
    } cases[] = {
        {55, "c1c8bbdc22796e28c0e15163d20899b65621d65a",
         "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
        {56, "c2db330f6083854c99d4b5bfb6e8f29f201be699",
         "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
        {63, "03f09f5b158a7a8cdad920bddc29b81c18a551f5",
         "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
        {64, "0098ba824b5c16427bd7a1122a5a442a25ec644d",
         "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
    };
    char a[64], hex[2 * SHA256_DIGEST_LEN + 1];
    memset(a, 'a', sizeof(a));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        digest_hex(SHA1, a, cases[i].len, cases[i].len, hex);
        assert_string_equal(hex, cases[i].sha1);
        digest_hex(SHA256, a, cases[i].len, 5, hex);
        assert_string_equal(hex, cases[i].sha256);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha1),
        cmocka_unit_test(test_sha256),
        cmocka_unit_test(test_padding_bounds),
    };
    return cmocka_run_group_tests_name("sha", tests, NULL, NULL);
}
