// SPDX-License-Identifier: Apache-2.0
#include "slice_fixture.h"

#include <stdio.h>

struct slice_build_input slice_fixture_input(const struct fakehw_device *devs, size_t n)
{
    struct slice_build_input in = {
        .driver = DRIVER,
        .node = NODE,
        .node_uid = NODE_UID,
        .devs = devs,
        .n_devs = n,
        .tree_up = true,
        .effect = TAINT_EFFECT_NO_SCHEDULE,
        .generation = 1,
    };
    return in;
}

json_t *slice_fixture_stored(const json_t *obj)
{
    static int serial;
    json_t *o = json_deep_copy(obj);
    json_t *meta = json_object_get(o, "metadata");
    char buf[96];
    if (json_object_get(meta, "name") == NULL) {
        snprintf(buf, sizeof(buf), "%s%05d",
                 json_string_value(json_object_get(meta, "generateName")), ++serial);
        json_object_set_new(meta, "name", json_string(buf));
        snprintf(buf, sizeof(buf), "uid-%d", serial);
        json_object_set_new(meta, "uid", json_string(buf));
        json_object_del(meta, "generateName");
    }
    snprintf(buf, sizeof(buf), "%d", ++serial);
    json_object_set_new(meta, "resourceVersion", json_string(buf));
    size_t i, j;
    json_t *d, *t;
    json_array_foreach(json_object_get(json_object_get(o, "spec"), "devices"), i, d)
    {
        json_array_foreach(json_object_get(d, "taints"), j, t)
        {
            if (json_object_get(t, "timeAdded") == NULL)
                json_object_set_new(t, "timeAdded", json_string("2025-11-22T05:00:00Z"));
        }
    }
    return o;
}
