// SPDX-License-Identifier: Apache-2.0
/* What the unit tests of driver/publish share: the driver and node their
 * slices are for, the build input of a pool of devices, and the API
 * server's side of a create or an update. */
#ifndef FAKEHW_PUBLISH_TESTS_SLICE_FIXTURE_H
#define FAKEHW_PUBLISH_TESTS_SLICE_FIXTURE_H

#include <jansson.h>
#include <stddef.h>

#include "driver/publish/slice_builder.h"

#define DRIVER   "gpu.fakehw.example.com"
#define NODE     "node-1"
#define NODE_UID "6f9ab1a2-0000-4000-8000-000000000001"

/* The pool of devs on NODE, the tree up, NoSchedule taints, generation 1. */
struct slice_build_input slice_fixture_input(const struct fakehw_device *devs, size_t n);

/* What the server stores for a create or an update of obj (a new
 * reference): a generated name and a uid for a new object, a new
 * resourceVersion, and timeAdded on every taint without one. */
json_t *slice_fixture_stored(const json_t *obj);

#endif
