// SPDX-License-Identifier: Apache-2.0
/* The served resource types: nodes, resourceclaims, deviceclasses, resourceslices. */
#include "resources.h"

#include <stdio.h>
#include <string.h>

#include "k8s.io/api/core/v1/generated.pb-c.h"
#include "k8s.io/api/resource/v1/generated.pb-c.h"

#define LABEL(f)    (1u << (f))
#define META_LABELS (LABEL(FIELD_NAME) | LABEL(FIELD_NAMESPACE))

const struct resource RES_NODES = {
    .id = 0,
    .group = "",
    .version = "v1",
    .api_version = "v1",
    .plural = "nodes",
    .kind = "Node",
    .field_labels = LABEL(FIELD_NAME),
    .pb = &k8s__io__api__core__v1__node__descriptor,
    .pb_list = &k8s__io__api__core__v1__node_list__descriptor,
};

const struct resource RES_RESOURCECLAIMS = {
    .id = 1,
    .group = "resource.k8s.io",
    .version = "v1",
    .api_version = "resource.k8s.io/v1",
    .plural = "resourceclaims",
    .kind = "ResourceClaim",
    .namespaced = true,
    .has_status = true,
    .has_generation = true,
    .spec_immutable = true,
    .field_labels = META_LABELS,
    .pb = &k8s__io__api__resource__v1__resource_claim__descriptor,
    .pb_list = &k8s__io__api__resource__v1__resource_claim_list__descriptor,
};

const struct resource RES_DEVICECLASSES = {
    .id = 2,
    .group = "resource.k8s.io",
    .version = "v1",
    .api_version = "resource.k8s.io/v1",
    .plural = "deviceclasses",
    .kind = "DeviceClass",
    .has_generation = true,
    .field_labels = LABEL(FIELD_NAME),
    .pb = &k8s__io__api__resource__v1__device_class__descriptor,
    .pb_list = &k8s__io__api__resource__v1__device_class_list__descriptor,
};

/* The ResourceSlice field labels of pkg/apis/resource/v1 conversion.go. */
const struct resource RES_RESOURCESLICES = {
    .id = 3,
    .group = "resource.k8s.io",
    .version = "v1",
    .api_version = "resource.k8s.io/v1",
    .plural = "resourceslices",
    .kind = "ResourceSlice",
    .has_generation = true,
    .field_labels = LABEL(FIELD_NAME) | LABEL(FIELD_NODE_NAME) | LABEL(FIELD_DRIVER),
    .pb = &k8s__io__api__resource__v1__resource_slice__descriptor,
    .pb_list = &k8s__io__api__resource__v1__resource_slice_list__descriptor,
};

static const struct resource *const all[] = {&RES_NODES, &RES_RESOURCECLAIMS, &RES_DEVICECLASSES,
                                             &RES_RESOURCESLICES};

const struct resource *resource_by_id(int id)
{
    return id >= 0 && id < RESOURCE_COUNT ? all[id] : NULL;
}

const struct resource *resource_find(const char *group, const char *version, const char *plural)
{
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (!strcmp(all[i]->group, group) && !strcmp(all[i]->version, version) &&
            !strcmp(all[i]->plural, plural))
            return all[i];
    return NULL;
}

void resource_qualified(const struct resource *r, char *buf, size_t size)
{
    if (r->group[0])
        snprintf(buf, size, "%s.%s", r->plural, r->group);
    else
        snprintf(buf, size, "%s", r->plural);
}

static const char *const label_names[FIELD_COUNT] = {"metadata.name", "metadata.namespace",
                                                     "spec.nodeName", "spec.driver"};

const char *field_label_name(enum field_label f)
{
    return label_names[f];
}

const char *field_value(const json_t *obj, enum field_label f)
{
    const char *v = NULL;
    switch (f) {
    case FIELD_NAME:
        v = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
        break;
    case FIELD_NAMESPACE:
        v = json_string_value(json_object_get(json_object_get(obj, "metadata"), "namespace"));
        break;
    case FIELD_NODE_NAME:
        v = json_string_value(json_object_get(json_object_get(obj, "spec"), "nodeName"));
        break;
    case FIELD_DRIVER:
        v = json_string_value(json_object_get(json_object_get(obj, "spec"), "driver"));
        break;
    case FIELD_COUNT:
        break;
    }
    return v ? v : "";
}
