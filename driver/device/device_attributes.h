// SPDX-License-Identifier: Apache-2.0
/* The attributes of one fakehw device, in the ResourceSlice attribute JSON
 * shape ({"string": ...}, {"int": ...}, {"version": ...}).  The slice
 * publisher and the device metadata files (KEP-5304) both use this function,
 * so a workload reads in its metadata file exactly what the scheduler
 * matched in the slice.
 *
 * Which tree attributes are published, under which names and types, and
 * when one is left out is the SLICE column of FAKEHW_DEVICE_ATTRIBUTES
 * (common/fakehw/fakehw_tree.h); before them comes type, {"string": "gpu"}, or
 * "mig" for a partition.  E.g. driverVersion "550.127.05" is published as
 * {"version": "550.127.5"}, computeCapability "9.0" as cudaComputeCapability
 * {"version": "9.0.0"}, numaNode (when >= 0) as numaNode and as
 * resource.kubernetes.io/numaNode.
 *
 * The resource.kubernetes.io/ names are the standard attributes (k8s.io/
 * dynamic-resource-allocation deviceattribute, v0.37), usable across drivers
 * in matchAttribute; numaNode stays in the driver's domain for existing
 * selectors.
 *
 * Versions are written as semantic versions: one to three dot-separated
 * numbers, missing parts 0, leading zeros dropped.  A string or version
 * longer than the API's 64 characters, or a version that is not 1-3
 * numbers, is an error naming the device and the attribute. */
#ifndef FAKEHW_DRIVER_DEVICE_ATTRIBUTES_H
#define FAKEHW_DRIVER_DEVICE_ATTRIBUTES_H

#include <jansson.h>
#include <stddef.h>

#include "error.h"
#include "fakehw_tree.h"

#define DEVICE_ATTRIBUTE_VALUE_MAX 64 /* API limit for string and version values */

/* Returns a new JSON object (attribute name -> value), or NULL with err. */
json_t *device_attributes_json(const struct fakehw_device *d, struct error *err);

/* Writes text ("12.4") as a semantic version ("12.4.0") into buf.  For
 * callers that publish other version attributes the same way. */
int device_attributes_semver(const char *text, char *buf, size_t size, struct error *err);

/* For the attribute sets of other personalities (nvidia_attributes.c,
 * nvidia_vfio.c), the same rules and error texts: */

/* Sets attrs[name] to {type: value}, stealing value (NULL: out of memory). */
int device_attribute_add(json_t *attrs, const char *name, const char *type, json_t *value,
                         struct error *err);
/* A string attribute; a value over DEVICE_ATTRIBUTE_VALUE_MAX is an error. */
int device_attribute_add_string(json_t *attrs, const char *name, const char *value,
                                struct error *err);
/* A version attribute of text, as device_attributes_semver writes it. */
int device_attribute_add_version(json_t *attrs, const char *name, const char *text,
                                 struct error *err);

/* A new attribute object that fill fills in for d; NULL with an error
 * that names the device. */
typedef int device_attributes_fill_fn(json_t *attrs, const struct fakehw_device *d,
                                      struct error *err);
json_t *device_attributes_build(const struct fakehw_device *d, device_attributes_fill_fn *fill,
                                struct error *err);

#endif
