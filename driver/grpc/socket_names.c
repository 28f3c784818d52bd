// SPDX-License-Identifier: Apache-2.0
#include "driver/grpc/socket_names.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sha256.h"

#define UID_HASH_BYTES    8  /* the Go helper's rollingUpdateUIDHashBytes */
#define DRIVER_HASH_BYTES 16 /* its rollingUpdateRegistrarSocketHashBytes */

int socket_names_check_uid(const char *uid, struct error *err)
{
    static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.";
    size_t n = strlen(uid);
    if (n == 0 || n > ROLLING_UPDATE_UID_MAX)
        return error_set(err, "\"%.40s%s\": want 1 to %d characters (a pod UID)", uid,
                         n > 40 ? "..." : "", ROLLING_UPDATE_UID_MAX);
    size_t bad = strspn(uid, ok);
    if (bad < n)
        return error_set(err,
                         "\"%s\": character %zu ('%c') is not a letter, digit, '-', '_' or '.'",
                         uid, bad + 1, uid[bad]);
    return 0;
}

/* base64url without padding of len bytes into out (4 * ceil(len / 3) + 1). */
static void base64url_raw(const uint8_t *in, size_t len, char *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        size_t left = len - i;
        if (left > 1)
            v |= (uint32_t)in[i + 1] << 8;
        if (left > 2)
            v |= in[i + 2];
        out[o++] = abc[(v >> 18) & 63];
        out[o++] = abc[(v >> 12) & 63];
        if (left > 1)
            out[o++] = abc[(v >> 6) & 63];
        if (left > 2)
            out[o++] = abc[v & 63];
    }
    out[o] = '\0';
}

/* base64url(SHA-256(a [NUL b])[:keep]) into out (at least 23 bytes). */
static void hash_part(const char *a, const char *b, size_t keep, char *out)
{
    struct sha256 h;
    uint8_t digest[SHA256_DIGEST_LEN];
    sha256_init(&h);
    sha256_update(&h, a, strlen(a));
    if (b != NULL) {
        sha256_update(&h, "", 1);
        sha256_update(&h, b, strlen(b));
    }
    sha256_final(&h, digest);
    base64url_raw(digest, keep, out);
}

static int path_fits(const char *path)
{
    return strlen(path) <= SOCKET_PATH_MAX;
}

/* The registration socket of a rolling update: the first candidate that
 * fits, else the last. */
static void rolling_registration(const char *dir, const char *driver, const char *uid, char *out,
                                 size_t size)
{
    char uid_hash[32], driver_hash[32];
    hash_part(uid, NULL, UID_HASH_BYTES, uid_hash);
    hash_part(driver, uid, DRIVER_HASH_BYTES, driver_hash);
    snprintf(out, size, "%s/%s-%s-reg.sock", dir, driver, uid);
    if (path_fits(out))
        return;
    snprintf(out, size, "%s/%s-%s-reg.sock", dir, driver, uid_hash);
    if (path_fits(out))
        return;
    snprintf(out, size, "%s/dra-%s-reg.sock", dir, driver_hash);
}

int socket_names_build(const char *registrar_dir, const char *plugin_dir, const char *driver,
                       const char *uid, struct socket_names *out, struct error *err)
{
    bool rolling = uid != NULL && *uid != '\0';
    if (rolling && socket_names_check_uid(uid, err) < 0)
        return -1;
    /* Longer than PATH_MAX would be cut; the length check below refuses it. */
    if (rolling) {
        rolling_registration(registrar_dir, driver, uid, out->registration,
                             sizeof(out->registration));
        snprintf(out->dra, sizeof(out->dra), "%s/dra-%s.sock", plugin_dir, uid);
    } else {
        snprintf(out->registration, sizeof(out->registration), "%s/%s-reg.sock", registrar_dir,
                 driver);
        snprintf(out->dra, sizeof(out->dra), "%s/dra.sock", plugin_dir);
    }
    const char *paths[] = {out->registration, out->dra};
    for (size_t i = 0; i < 2; i++)
        if (!path_fits(paths[i]))
            return error_set(err, "socket path %.120s... is %zu bytes long, longer than %d",
                             paths[i], strlen(paths[i]), SOCKET_PATH_MAX);
    return 0;
}
