// SPDX-License-Identifier: Apache-2.0
/* Device metadata files (KEP-5304, the layout of the v0.36 kubelet plugin
 * helper): one file per request of a claim, a JSON stream holding one
 * metadata.resource.k8s.io/v1alpha1 DeviceMetadata object, mounted into the
 * container by a CDI spec of kind "<driver>/metadata".
 *
 *   host       <plugin dir>/dra-device-metadata/<ns>_<claim>/<request>/metadata.json
 *   container
 * /var/run/kubernetes.io/dra-device-attributes/resourceclaims/<claim>/<request>/<driver>-metadata.json
 *              .../resourceclaimtemplates/<pod claim name>/<request>/<driver>-metadata.json
 *              when the claim came from a template (annotation
 *              resource.kubernetes.io/pod-claim-name)
 *
 * <request> in paths is the base request name; the object's requests[0].name
 * is the request as allocated ("req/sub"), as the helper writes it. */
#ifndef FAKEHW_PREPARE_DEVICE_METADATA_H
#define FAKEHW_PREPARE_DEVICE_METADATA_H

#include <jansson.h>
#include <stddef.h>

#include "error.h"

#define DEVICE_METADATA_API_VERSION   "metadata.resource.k8s.io/v1alpha1"
#define DEVICE_METADATA_KIND          "DeviceMetadata"
#define DEVICE_METADATA_DIR           "dra-device-metadata"
#define DEVICE_METADATA_FILE          "metadata.json"
#define DEVICE_METADATA_CONTAINER_DIR "/var/run/kubernetes.io/dra-device-attributes"

struct device_metadata_claim {
    const char *driver, *ns, *name, *uid;
    const char *pod_claim_name; /* NULL for a claim not made from a template */
};

/* Path of a request's metadata file inside the container. */
int device_metadata_container_path(const struct device_metadata_claim *c, const char *request,
                                   char *buf, size_t size, struct error *err);

/* Appends {driver, pool, name, attributes} to devices; attributes is stolen. */
int device_metadata_add_device(json_t *devices, const char *driver, const char *pool,
                               const char *name, json_t *attributes, struct error *err);

/* The file's text for one request: the DeviceMetadata object (generation 1)
 * followed by "\n".  request is the request as allocated; devices (an array
 * from device_metadata_add_device) is borrowed.  Caller frees. */
char *device_metadata_stream(const struct device_metadata_claim *c, const char *request,
                             const json_t *devices, struct error *err);

#endif
