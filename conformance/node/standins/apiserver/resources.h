// SPDX-License-Identifier: Apache-2.0
/* The resource types the stand-in serves and their per-type rules. */
#ifndef APISERVER_STANDIN_RESOURCES_H
#define APISERVER_STANDIN_RESOURCES_H

#include <jansson.h>
#include <stdbool.h>

/* Field labels a field selector may name (index = position in this list). */
enum field_label {
    FIELD_NAME,      /* metadata.name */
    FIELD_NAMESPACE, /* metadata.namespace */
    FIELD_NODE_NAME, /* spec.nodeName */
    FIELD_DRIVER,    /* spec.driver */
    FIELD_COUNT,
};

#define RESOURCE_COUNT 4

struct resource {
    int id;                  /* 0 .. RESOURCE_COUNT-1, for per-type tables */
    const char *group;       /* "" for the core group */
    const char *version;     /* "v1" */
    const char *api_version; /* "resource.k8s.io/v1" or "v1" */
    const char *plural;      /* "resourceslices" */
    const char *kind;        /* "ResourceSlice" */
    bool namespaced;
    bool has_status;       /* status subresource: PUT/PATCH on the object keep status */
    bool has_generation;   /* metadata.generation counts spec changes */
    bool spec_immutable;   /* ResourceClaim */
    unsigned field_labels; /* bit mask of enum field_label */
    /* The protobuf messages of the object and of its list. */
    const struct ProtobufCMessageDescriptor *pb, *pb_list;
};

extern const struct resource RES_NODES, RES_RESOURCECLAIMS, RES_DEVICECLASSES, RES_RESOURCESLICES;

/* The resource with this id (0 .. RESOURCE_COUNT-1). */
const struct resource *resource_by_id(int id);
/* NULL when the stand-in does not serve group/version/plural. */
const struct resource *resource_find(const char *group, const char *version, const char *plural);

/* "resourceslices.resource.k8s.io", or "nodes" for the core group. */
void resource_qualified(const struct resource *r, char *buf, size_t size);

const char *field_label_name(enum field_label f);

/* The value of a field label in obj ("" when unset, as the real server). */
const char *field_value(const json_t *obj, enum field_label f);

#endif
