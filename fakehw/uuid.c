// SPDX-License-Identifier: Apache-2.0
/* Deterministic GPU UUIDs: see uuid.h. */
#include "uuid.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sha256.h"

/* Versions the derivation: changing it would change every node's UUIDs. */
static const char domain[] = "fakehw-gpu-uuid/v1";

void gpu_uuid_derive(const char *seed, const char *device_name, char out[GPU_UUID_SIZE])
{
    struct sha256 ctx;
    uint8_t d[SHA256_DIGEST_LEN];
    sha256_init(&ctx);
    sha256_update(&ctx, domain, sizeof(domain)); /* with its NUL as separator */
    sha256_update(&ctx, seed, strlen(seed) + 1);
    sha256_update(&ctx, device_name, strlen(device_name));
    sha256_final(&ctx, d);
    snprintf(out, GPU_UUID_SIZE,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", d[0], d[1],
             d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10], d[11], d[12], d[13], d[14],
             d[15]);
}

bool gpu_uuid_valid(const char *s)
{
    static const char pattern[] = "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
    if (strlen(s) != sizeof(pattern) - 1)
        return false;
    for (size_t i = 0; i < sizeof(pattern) - 1; i++) {
        if (pattern[i] == 'x' ? !isxdigit((unsigned char)s[i]) : s[i] != pattern[i])
            return false;
    }
    return true;
}
