// SPDX-License-Identifier: Apache-2.0
/* Deterministic GPU UUIDs in the format NVIDIA's driver reports them:
 * "GPU-" followed by 32 lowercase hex digits grouped 8-4-4-4-12.
 *
 * The 16 bytes are the first half of
 *   SHA-256("fakehw-gpu-uuid/v1" NUL seed NUL device-name)
 * so the same seed (by default the node name) and device name give the same
 * UUID on every start, and any other seed or name gives another one. */
#ifndef FAKEHW_UUID_H
#define FAKEHW_UUID_H

#include <stdbool.h>

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" plus the NUL. */
#define GPU_UUID_SIZE 41

void gpu_uuid_derive(const char *seed, const char *device_name, char out[GPU_UUID_SIZE]);

/* True when s has the vendor's format (hex digits in either case). */
bool gpu_uuid_valid(const char *s);

#endif
