// SPDX-License-Identifier: Apache-2.0
/* A digest of the pool as the publisher wants it published: every desired
 * slice of a layout (slice_builder.h) as compact JSON with sorted keys, and
 * the comparison flag that decides which differences count.  Two inputs
 * with the same digest make the same API calls against the same pool, so a
 * device change that leaves the digest as it was (a state flipped and
 * flipped back, an attribute that is not published) needs no request at
 * all (slice_publisher.h).  Built one slice at a time, like a sync. */
#ifndef FAKEHW_DRIVER_SLICE_FINGERPRINT_H
#define FAKEHW_DRIVER_SLICE_FINGERPRINT_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "sha256.h"
#include "slice_builder.h"

struct slice_fingerprint {
    uint8_t digest[SHA256_DIGEST_LEN];
};

/* -1 with err when a slice cannot be built (out of memory). */
int slice_fingerprint_make(const struct slice_build_input *in, const struct slice_layout *layout,
                           bool ignore_taints, struct slice_fingerprint *out, struct error *err);

bool slice_fingerprint_equal(const struct slice_fingerprint *a, const struct slice_fingerprint *b);

#endif
