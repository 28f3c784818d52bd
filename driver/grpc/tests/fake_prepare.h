// SPDX-License-Identifier: Apache-2.0
/* A fake of the prepare API (driver/prepare/prepare.h) for the gRPC tests:
 * answers are derived from the claim name, so a test picks the outcome by
 * naming its claims:
 *   fail*      prepare and unprepare fail: "claim NS/NAME (uid UID): fake failure"
 *   failutf8*  as fail, with a byte that is not UTF-8 in the message
 *   slow*      prepare takes FAKE_PREPARE_SLOW_MS, then succeeds
 *   slowun*    unprepare takes FAKE_PREPARE_SLOW_MS too
 *   empty*     prepared with no devices
 *   two*       two devices (gpu-0 for request "gpu", gpu-1 for "gpu" and "extra")
 *   *shared*   devices carry share_id "share-<uid>"
 *   anything else: one device gpu-0 of request "gpu"
 * Devices are in pool "node-a"; CDI ids are k8s.gpu.fakehw.example.com/gpu=<uid>-<device>. */
#ifndef FAKEHW_TEST_FAKE_PREPARE_H
#define FAKEHW_TEST_FAKE_PREPARE_H

#include <stddef.h>

#include "driver/prepare/prepare.h"

#define FAKE_PREPARE_SLOW_MS 1500

struct prepare_state *fake_prepare_new(void);
void fake_prepare_free(struct prepare_state *st);

/* Calls seen so far (tests check that each claim is handled once). */
size_t fake_prepare_calls(struct prepare_state *st);
size_t fake_unprepare_calls(struct prepare_state *st);

#endif
