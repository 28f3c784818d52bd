// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: the kubeconfig loader (driver/kube/kube_config.c) on a
 * scratch file; the relative file names it may hold resolve in a directory
 * with a CA, a client certificate and key and a token. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "driver/kube/kube_client.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PEM_CERT "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
#define PEM_KEY  "-----BEGIN EC PRIVATE KEY-----\nMHcfake\n-----END EC PRIVATE KEY-----\n"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *dir;
    static char path[512];
    if (dir == NULL) {
        dir = fuzz_scratch_dir("kube");
        fuzz_write_file(dir, "ca.crt", (const uint8_t *)PEM_CERT, strlen(PEM_CERT));
        fuzz_write_file(dir, "client.crt", (const uint8_t *)PEM_CERT, strlen(PEM_CERT));
        fuzz_write_file(dir, "client.key", (const uint8_t *)PEM_KEY, strlen(PEM_KEY));
        fuzz_write_file(dir, "token", (const uint8_t *)"fuzz-token\n", 11);
        snprintf(path, sizeof(path), "%s/config", dir);
    }
    fuzz_write_file(dir, "config", data, size);
    struct kube_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    struct error err;
    if (kube_config_load(path, &cfg, &err) == 0)
        kube_config_free(&cfg);
    return 0;
}
