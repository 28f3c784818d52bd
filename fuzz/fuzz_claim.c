// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: the ResourceClaim GET answer as prepare reads it.  The
 * input is the answer's JSON; prepare_plan_build (driver/prepare/) turns it
 * into what a prepare would write and answer: the uid and allocation checks
 * of claim_allocation, the opaque GpuConfig, the CDI specs and the device
 * metadata.  Nothing is written. */
#include <jansson.h>
#include <stdint.h>

#include "driver/prepare/prepare_state.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_UID "0e0d5e3c-8a53-4a4e-9b5d-1f0c1c2f7a10"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct prepare_state *st;
    if (st == NULL)
        st = fuzz_prepare_state(NULL, NULL);
    json_error_t jerr;
    json_t *claim = json_loadb((const char *)data, size, 0, &jerr);
    if (claim == NULL)
        return 0;
    struct prepare_plan plan;
    struct error err;
    const struct claim_ref ref = {.ns = "default", .name = "claim-1", .uid = FUZZ_UID};
    if (prepare_plan_build(st, &ref, claim, &plan, &err) == 0)
        prepare_plan_free(&plan);
    json_decref(claim);
    return 0;
}
