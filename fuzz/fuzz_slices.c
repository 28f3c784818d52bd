// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: a ResourceSlice LIST answer as the publisher reads it.
 * The input is the answer's JSON; its items go, as in the publisher's list
 * step, into slice_sync_plan against the pool slice_build makes for the
 * fake inventory, which decides what to update, create and delete from the
 * fields of every existing slice (driver, node, pool, generation, names,
 * owner, spec and its devices and taints). */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#include "driver/publish/slice_builder.h"
#include "driver/publish/slice_sync.h"
#include "driver/publish/tests/slice_fixture.h"
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NODE_UID "5b1c2d3e-4f50-4a6b-8c7d-8e9fa0b1c2d3"

/* The fake inventory's pool as the publisher's unit tests build it, owned
 * by the node of the corpus's slices; and the slices it makes. */
static struct slice_build_input pool;
static json_t *desired;

static void setup(void)
{
    static struct fakehw_device devs[FUZZ_NDEVS];
    for (size_t i = 0; i < FUZZ_NDEVS; i++)
        fuzz_device(i, &devs[i]);
    pool = slice_fixture_input(devs, FUZZ_NDEVS);
    pool.node_uid = FUZZ_NODE_UID;
    struct slice_build_result r;
    struct error err;
    if (slice_build(&pool, &r, &err) < 0)
        abort();
    desired = json_incref(r.slices);
    slice_build_result_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (desired == NULL)
        setup();
    json_error_t jerr;
    json_t *answer = json_loadb((const char *)data, size, 0, &jerr);
    if (answer == NULL)
        return 0;
    /* As the publisher's list step: items must be a list when present. */
    json_t *items = json_object_get(answer, "items");
    if (items == NULL || json_is_array(items)) {
        json_t *existing = items ? json_incref(items) : json_array();
        struct slice_sync_input in = {
            .driver = pool.driver,
            .node = pool.node,
            .node_uid = pool.node_uid,
            .existing = existing,
            .desired = desired,
        };
        struct slice_sync_plan plan;
        struct error err;
        if (slice_sync_plan(&in, &plan, &err) == 0)
            slice_sync_plan_free(&plan);
        json_decref(existing);
    }
    json_decref(answer);
    return 0;
}
